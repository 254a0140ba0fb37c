package join

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/accesslog"
)

// TestReasonInTheHeadline: the gateway's own reason for the failures is
// said in the conclusion, in words with its code kept, and how many of
// them it covers when it is not all; an unknown code is said as logged.
func TestReasonInTheHeadline(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	// reason(k) is the k-th failure's ErrorInfo.
	azure := func(reason func(k int) string) string {
		var b strings.Builder
		b.WriteString("TimeGenerated,ClientIp,ClientPort,HttpMethod,RequestUri,Host,HttpStatus,ServerRouted,ServerStatus,InstanceId,ErrorInfo\n")
		k := 0
		for _, r := range reqs {
			info := "ERRORINFO_NO_ERROR"
			if r.failed {
				info = reason(k)
				k++
			}
			fmt.Fprintf(&b, "%s,%s,%d,GET,/sign,sign.example.com,%d,%s,%d,%s,%s\n", r.at.Add(latency).Format(time.RFC3339Nano),
				r.client(), r.port, r.status(), r.backend, r.status(), r.instance, info)
		}
		return b.String()
	}
	failed := failures(reqs, all)
	head := fmt.Sprintf("All %d 502s were routed to %s (IPv6), by instances appgw_0 and appgw_2; the gateway says", failed, deadBackend)
	for _, tt := range []struct {
		name   string
		reason func(i int) string
		want   string
	}{
		{"every one", func(int) string { return "ERRORINFO_UPSTREAM_CLOSED_CONNECTION" },
			head + ": the backend closed the connection before it answered (ERRORINFO_UPSTREAM_CLOSED_CONNECTION)."},
		{"most", func(k int) string {
			return []string{"ERRORINFO_UPSTREAM_TIMED_OUT", "ERRORINFO_UPSTREAM_TIMED_OUT", "-"}[k%3]
		},
			head + " of %d of them: the backend did not answer within the request timeout (ERRORINFO_UPSTREAM_TIMED_OUT)."},
		{"unknown", func(int) string { return "ERRORINFO_SOMETHING_NEW" }, head + ": ERRORINFO_SOMETHING_NEW."},
		{"none", func(int) string { return "-" }, strings.TrimSuffix(head, "; the gateway says") + "."},
	} {
		j := joinLog(t, rep, azure(tt.reason), Options{}, accesslog.Options{})
		want := tt.want
		if strings.Contains(want, "%d") {
			want = fmt.Sprintf(want, failed-failed/3) // two in three
		}
		if j.Conclusion != want {
			t.Errorf("%s: conclusion\n%q; want\n%q", tt.name, j.Conclusion, want)
		}
	}
}

// TestNamesBounded: past maxNames distinct names, every further one is
// "(others)", one name more (it recursed for ever once the list was full:
// a log of more than a thousand clients overflowed the stack).
func TestNamesBounded(t *testing.T) {
	n := newNames()
	for i := range 3 * maxNames {
		n.id(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	if len(n.list) != maxNames+1 || n.list[maxNames] != othersName || n.id("another") != maxNames {
		t.Errorf("%d names, the last %q; want %d, the last %q, which every later one gets", len(n.list), n.list[len(n.list)-1], maxNames+1, othersName)
	}
}

// TestManyClients: a busy gateway's log, the run's lines (with their
// request IDs) among 150,000 lines of 100,000 other clients in the run's
// window, every one of them with a port of the run's. The run's lines are
// placed, all by their ID, and no other client's by its port (a port
// repeats across clients; a log that logs IDs says a line without the
// run's is not the run's); the run's lines past the bound of lines held
// are held too.
func TestManyClients(t *testing.T) {
	if testing.Short() {
		t.Skip("150,000 lines")
	}
	reqs := simRun()
	rep := simReport(reqs)
	var b strings.Builder
	line := func(client string, r simRequest, id string) {
		fmt.Fprintf(&b, "%s:%d [%s] \"GET /sign HTTP/1.1\" %d up=%s rid=%s\n", client, r.port, r.at.Format("02/Jan/2006:15:04:05 -0700"), r.status(), r.backend, id)
	}
	const others = 150_000
	for i := range others {
		r := reqs[i%len(reqs)]
		r.failed, r.backend = i%2 == 0, "10.0.0.9:443" // failing, if it were placed
		line(fmt.Sprintf("10.%d.%d.%d", i/65536, i/256%256, i%256), r, "-")
	}
	for _, r := range reqs { // after the bound of lines held
		line(r.client(), r, r.id())
	}
	f := `$remote_addr:$remote_port [$time_local] "$request" $status up=$upstream_addr rid=$http_x_request_id`
	j := joinLog(t, rep, b.String(), Options{}, accesslog.Options{Format: f})
	if n := int64(len(reqs)); j.Lines.Run != n || j.Lines.ByRequestID != n || j.Lines.ByPort != 0 || j.Lines.ByWindow != 0 {
		t.Errorf("lines %+v; want the run's %d, every one by its request ID", j.Lines, n)
	}
	if len(j.Backends) != 3 || j.Backends[0].Name != deadBackend {
		t.Errorf("backends %+v; want the run's three, %s failing", j.Backends, deadBackend)
	}
}

// TestPlacedPerLog: each log says how its own lines were placed: the
// HAProxy log's (client ports) by port where the report kept the request
// (its trail), by client address and time otherwise; the nginx combined
// one's (neither ports nor IDs) all by address and time; together the
// join's counts.
func TestPlacedPerLog(t *testing.T) {
	reqs := simRun()
	var even, odd []simRequest
	for i, r := range reqs {
		if i%2 == 0 {
			even = append(even, r)
		} else {
			odd = append(odd, r)
		}
	}
	j := joinLogs(t, reqs, runClients, haproxyLog(even), combinedLog(odd, 0, "/sign"))
	a, b := j.Logs[0].Placed, j.Logs[1].Placed
	if a.ByClientPort == 0 || a.ByClientPort+a.ByClientAddress != int64(len(even)) || b.ByClientPort != 0 || b.ByClientAddress != int64(len(odd)) ||
		a.ByRequestID+b.ByRequestID != j.Lines.ByRequestID || a.ByClientPort+b.ByClientPort != j.Lines.ByPort || a.ByClientAddress+b.ByClientAddress != j.Lines.ByWindow {
		t.Errorf("placed %+v and %+v (lines %+v); want %d, some by port, and %d by address", a, b, j.Lines, len(even), len(odd))
	}
}
