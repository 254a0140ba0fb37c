package join

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pinprobe/pinprobe/internal/accesslog"
	"github.com/pinprobe/pinprobe/internal/report"
)

var logsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	return jsonschema.NewCompiler().Compile("../../schema/pinprobe.logs.v1.json")
})

// checkSchema validates a pinprobe.logs/v1 document against its schema.
func checkSchema(t *testing.T, doc []byte) {
	t.Helper()
	s, err := logsSchema()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err == nil {
		err = s.Validate(inst)
	}
	if err != nil {
		t.Errorf("the join does not match schema/pinprobe.logs.v1.json: %v", err)
	}
}

// A simulated incident, written as the gateways' exports write it: a run
// of 30 s at 10 requests/s over two frontend addresses of
// sign.example.com, an IPv4 one and an IPv6 one. The gateway (instances
// appgw_0..2) routes every third request of the IPv6 frontend to the IPv6
// backend [2001:db8::9]:443, which fails it with 502; everything else goes
// to the IPv4 backends 10.0.0.4:443 and 10.0.0.5:443, which answer.
// Addresses are documentation ones: nothing here is sent anywhere.

var runStart = time.Date(2026, 12, 1, 16, 40, 0, 0, time.UTC)

const (
	runSeconds  = 30
	perSecond   = 10 // over both endpoints
	latency     = 20 * time.Millisecond
	deadBackend = "[2001:db8::9]:443"
	runID       = "abcdef12"
)

// simRequest is one request of the simulated run.
type simRequest struct {
	at       time.Time
	ep       int // 0 IPv4 frontend, 1 IPv6
	seq      int
	port     uint16
	failed   bool
	backend  string
	instance string
}

func (r simRequest) id() string { return fmt.Sprintf("pinprobe-%s-%d-%d", runID, r.ep, r.seq) }

func (r simRequest) status() int {
	if r.failed {
		return 502
	}
	return 200
}

// client is the address the gateway sees the request from (behind a NAT).
func (r simRequest) client() string { return [2]string{"198.51.100.7", "2001:db8:77::7"}[r.ep] }

func simRun() []simRequest {
	var out []simRequest
	seq := [2]int{}
	for i := range runSeconds * perSecond {
		ep := i % 2
		seq[ep]++
		r := simRequest{at: runStart.Add(time.Duration(i) * time.Second / perSecond), ep: ep, seq: seq[ep], port: uint16(40000 + i)}
		switch {
		case ep == 1 && seq[ep]%3 == 0:
			r.failed, r.backend, r.instance = true, deadBackend, [2]string{"appgw_0", "appgw_2"}[seq[ep]/3%2]
		default:
			r.backend, r.instance = [2]string{"10.0.0.4:443", "10.0.0.5:443"}[i/2%2], "appgw_1"
		}
		out = append(out, r)
	}
	return out
}

// simReport is the report pinprobe would have saved of the run: its
// endpoints' counts, trails (as the collector keeps them), connections
// and timeline.
func simReport(reqs []simRequest) *report.Report {
	rep := &report.Report{RunID: runID, StartedAt: report.Time{Time: runStart}, EndedAt: report.Time{Time: runStart.Add(runSeconds * time.Second)},
		Plan: report.Plan{FailStatus: "5xx"}, Timeline: report.Timeline{IntervalS: 1, Start: report.Time{Time: runStart}}}
	addrs := [2]string{"203.0.113.10", "2001:db8::10"}
	var samplers [2]report.TrailSampler
	for ep := range 2 {
		rep.Endpoints = append(rep.Endpoints, report.Endpoint{Target: "https://sign.example.com/sign", Host: "sign.example.com",
			Address: addrs[ep], Port: 443, Family: [2]string{"ipv4", "ipv6"}[ep], Conns: &report.Conns{}})
		rep.Timeline.Series = append(rep.Timeline.Series, report.Series{Address: addrs[ep], Target: "https://sign.example.com/sign",
			Requests: make([]int64, runSeconds), Failed: make([]int64, runSeconds)})
	}
	rep.Totals.LatencyMS.Max = float64(latency / time.Millisecond)
	for _, r := range reqs {
		e := &rep.Endpoints[r.ep]
		e.Requests++
		rep.Totals.Requests++
		sec := int(r.at.Sub(runStart) / time.Second)
		rep.Timeline.Series[r.ep].Requests[sec]++
		if r.failed {
			e.Failed++
			rep.Totals.Failed++
			rep.Timeline.Series[r.ep].Failed[sec]++
		} else {
			e.OK++
		}
		c := report.ConnRecord{ID: uint64(len(e.Conns.Records) + 1), LocalPort: r.port, Requests: 1, Fresh: true}
		e.Conns.Records = append(e.Conns.Records, c)
		samplers[r.ep].Add(report.TrailRequest{At: report.Time{Time: r.at}, RequestID: r.id(), Port: r.port, Conn: c.ID,
			Failed: r.failed, Status: r.status(), LatencyMS: float64(latency / time.Millisecond)})
	}
	for ep := range 2 {
		rep.Endpoints[ep].Trail = samplers[ep].Trail()
	}
	return rep
}

// joinLog joins the simulated run with one log.
func joinLog(t *testing.T, rep *report.Report, log string, o Options, lo accesslog.Options) *Join {
	t.Helper()
	r, err := accesslog.Open(strings.NewReader(log), lo)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	j := New(rep, o)
	if err := j.Add("gw.log", r); err != nil {
		t.Fatalf("add: %v", err)
	}
	out := j.Finish()
	var buf bytes.Buffer
	if err := JSON(&buf, out); err != nil || !json.Valid(buf.Bytes()) {
		t.Fatalf("JSON: %v", err)
	}
	checkSchema(t, buf.Bytes())
	t.Logf("%s | offset %s | lines %+v", out.Conclusion, out.Offset.Describe(), out.Lines)
	return out
}

// checkIncident checks what every join of the incident must say: the
// failures routed to the IPv6 backend by appgw_0 and appgw_2, the IPv4
// backends cleared, every request found but those in gap.
func checkIncident(t *testing.T, j *Join, reqs []simRequest, gap func(simRequest) bool) {
	t.Helper()
	var want, wantFailed int64
	for _, r := range reqs {
		if !gap(r) {
			want++
			if r.failed {
				wantFailed++
			}
		}
	}
	if j.Lines.Run != want || j.Lines.Failed != wantFailed {
		t.Errorf("%d lines of the run, %d failed; want %d, %d", j.Lines.Run, j.Lines.Failed, want, wantFailed)
	}
	if j.Missing.Requests != int64(len(reqs))-want {
		t.Errorf("missing %d; want %d", j.Missing.Requests, int64(len(reqs))-want)
	}
	if j.Lines.NoEndpoint != 0 {
		t.Errorf("%d lines on no endpoint; want none", j.Lines.NoEndpoint)
	}
	if len(j.Backends) != 3 || j.Backends[0].Name != deadBackend || j.Backends[0].Family != "ipv6" || j.Backends[0].Failed != wantFailed ||
		j.Backends[0].Failed != j.Backends[0].Requests || !j.Backends[0].Significant || j.Backends[0].Endpoints["2001:db8::10"] != wantFailed {
		t.Fatalf("backends %+v; want %s first, every one of its %d requests failed, through 2001:db8::10", j.Backends, deadBackend, wantFailed)
	}
	for _, b := range j.Backends[1:] {
		if b.Failed != 0 || b.Family != "ipv4" {
			t.Errorf("backend %s (%s): %d failed; want an IPv4 backend with none", b.Name, b.Family, b.Failed)
		}
	}
	wantConclusion := fmt.Sprintf("All %d 502s were routed to %s (IPv6), by instances appgw_0 and appgw_2.", wantFailed, deadBackend)
	// Where the log gives the gateway's reason (Azure's ErrorInfo), the
	// conclusion says it, in words.
	for code := range j.Backends[0].Reasons {
		said := code
		if w := j.ReasonWords[code]; w != "" {
			said = w + " (" + code + ")"
		}
		wantConclusion = strings.TrimSuffix(wantConclusion, ".") + "; the gateway says: " + said + "."
	}
	if j.Conclusion != wantConclusion {
		t.Errorf("conclusion %q; want %q", j.Conclusion, wantConclusion)
	}
	cleared := false
	for _, f := range j.Findings {
		cleared = cleared || f.Kind == "family" && strings.Contains(f.Text, "IPv4 backends (10.0.0.4:443 and 10.0.0.5:443) answered every request")
	}
	if !cleared {
		t.Errorf("findings %+v; want the IPv4 backends cleared", j.Findings)
	}
}

func noGap(simRequest) bool { return false }

// otherClient is a line of another client: same gateway, same backends,
// port numbers that collide with the run's.
func otherClients(i int) (client string, port uint16) {
	return "198.51.100.99", uint16(40000 + i)
}

// mixedLog is a log of reqs, line(r, client, port, i) a line each, with a
// line of another client (otherClients, i 100000 and up) after every
// every-th: answered, by backend.
func mixedLog(reqs []simRequest, every int, backend string, line func(r simRequest, client string, port uint16, i int) string) string {
	var b strings.Builder
	for i, r := range reqs {
		b.WriteString(line(r, r.client(), r.port, i) + "\n")
		if i%every == 0 {
			c, p := otherClients(i)
			o := r
			o.failed, o.backend = false, backend
			b.WriteString(line(o, c, p, 100000+i) + "\n")
		}
	}
	return b.String()
}

// TestAzure: AGWAccessLogs as CSV (with ClientPort), the gateway's clock
// 3.2 s ahead, another client's lines mixed in on the same port numbers;
// then the older revision without ClientPort (placed by the clients given
// and time); then AzureDiagnostics as the Log Analytics API's JSON, with
// five seconds rotated away.
func TestAzure(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	const offset = 3200 * time.Millisecond
	line := func(cols []string, r simRequest, client string, port uint16) string {
		end := r.at.Add(offset + latency)
		v := map[string]string{
			"TimeGenerated": end.Format("2006-01-02T15:04:05.0000000Z"), "ClientIp": client, "ClientPort": fmt.Sprint(port),
			"HttpMethod": "GET", "RequestUri": "/sign", "Host": "sign.example.com", "HttpStatus": fmt.Sprint(r.status()),
			"ServerRouted": r.backend, "ServerStatus": fmt.Sprint(r.status()), "InstanceId": r.instance,
			"ListenerName": []string{"fl-v4", "fl-v6"}[r.ep], "TimeTaken": "0.020",
		}
		var out []string
		for _, c := range cols {
			out = append(out, v[c])
		}
		return strings.Join(out, ",")
	}
	csvLog := func(cols []string) string {
		return strings.Join(cols, ",") + "\n" + mixedLog(reqs, 4, "10.0.0.4:443", func(r simRequest, client string, port uint16, _ int) string {
			return line(cols, r, client, port)
		})
	}
	agw := []string{"TimeGenerated", "ClientIp", "ClientPort", "HttpMethod", "RequestUri", "Host", "HttpStatus", "ServerRouted", "ServerStatus", "InstanceId", "ListenerName", "TimeTaken"}

	t.Run("AGWAccessLogs CSV", func(t *testing.T) {
		j := joinLog(t, rep, csvLog(agw), Options{}, accesslog.Options{})
		checkIncident(t, j, reqs, noGap)
		if !j.Offset.Measured || j.Offset.By != "client port" || j.Offset.MS < 3190 || j.Offset.MS > 3210 {
			t.Errorf("offset %+v; want 3200 ms measured by client port", j.Offset)
		}
		if j.Lines.OtherClients != int64(len(reqs)/4) {
			t.Errorf("%d lines of other clients; want %d", j.Lines.OtherClients, len(reqs)/4)
		}
		if strings.Join(j.Clients, " ") != "198.51.100.7 2001:db8:77::7" {
			t.Errorf("clients %v; want the run's two", j.Clients)
		}
		if len(j.Instances) != 3 || len(j.Listeners) != 2 {
			t.Errorf("%d instances, %d listeners; want 3, 2", len(j.Instances), len(j.Listeners))
		}
	})
	t.Run("AGWAccessLogs without ClientPort", func(t *testing.T) {
		old := append(append([]string{}, agw[:2]...), agw[3:]...)
		j := joinLog(t, rep, csvLog(old), runClients, accesslog.Options{})
		checkIncident(t, j, reqs, noGap)
		if j.Offset.By != "time" || j.Offset.MS < 3000 || j.Offset.MS > 3400 {
			t.Errorf("offset %+v; want about 3200 ms, from the times alone", j.Offset)
		}
		if j.Lines.ByWindow != int64(len(reqs)) {
			t.Errorf("%d lines placed by address and time; want %d", j.Lines.ByWindow, len(reqs))
		}
	})
	t.Run("AzureDiagnostics JSON with a rotated gap", func(t *testing.T) {
		gap := func(r simRequest) bool { s := r.at.Sub(runStart); return s >= 10*time.Second && s < 15*time.Second }
		cols := []string{"TimeGenerated", "Category", "clientIP_s", "clientPort_d", "httpStatus_d", "serverRouted_s", "serverStatus_s", "instanceId_s", "listenerName_s", "timeTaken_d"}
		var rows []string
		for _, r := range reqs {
			if gap(r) {
				continue
			}
			rows = append(rows, fmt.Sprintf(`["%s","ApplicationGatewayAccessLog","%s",%d,%d,"%s","%d","%s","l%d",0.02]`,
				r.at.Add(offset+latency).Format(time.RFC3339Nano), r.client(), r.port, r.status(), r.backend, r.status(), r.instance, r.ep))
		}
		var colJSON []string
		for _, c := range cols {
			colJSON = append(colJSON, fmt.Sprintf(`{"name":%q,"type":"string"}`, c))
		}
		doc := `{"tables":[{"name":"PrimaryResult","columns":[` + strings.Join(colJSON, ",") + `],"rows":[` + strings.Join(rows, ",\n") + `]}]}`
		j := joinLog(t, rep, doc, Options{}, accesslog.Options{})
		checkIncident(t, j, reqs, gap)
		if len(j.Missing.Gaps) != 1 || !j.Missing.Gaps[0].From.Equal(runStart.Add(10*time.Second)) || !j.Missing.Gaps[0].To.Equal(runStart.Add(15*time.Second)) ||
			j.Missing.Gaps[0].Requests != 5*perSecond {
			t.Errorf("gaps %+v; want 16:40:10 to 16:40:15, 50 requests", j.Missing.Gaps)
		}
		if j.Missing.Trail == 0 || len(j.Missing.IDs) == 0 {
			t.Errorf("missing %+v; want the trail's requests in the gap named", j.Missing)
		}
		if j.Logs[0].Format != "Azure AzureDiagnostics (JSON; without error_info_s)" {
			t.Errorf("format %q", j.Logs[0].Format)
		}
	})
}

// TestALB: an ALB's access log, the gateway's clock 1.5 s behind, another
// client's lines mixed in; the IPv6 target fails with 502 and
// error_reason.
func TestALB(t *testing.T) {
	t.Run("ports kept", func(t *testing.T) { testALB(t, 0) })
	// Behind a NAT the gateway logs ports of the NAT's: nothing matches by
	// port, lines are placed by the client given and time, and the port
	// filter stays off.
	t.Run("behind a NAT", func(t *testing.T) { testALB(t, 7) })
}

func testALB(t *testing.T, natShift uint16) {
	reqs := simRun()
	rep := simReport(reqs)
	const offset = -1500 * time.Millisecond
	line := func(r simRequest, client string, port uint16, i int) string {
		if i < 100000 {
			port += natShift
		}
		start := r.at.Add(offset)
		end := start.Add(latency)
		target, tstatus, reason := r.backend, fmt.Sprint(r.status()), "-"
		if r.failed {
			tstatus, reason = "-", "TargetConnectionError"
		}
		cl := client + ":" + fmt.Sprint(port)
		if strings.Contains(client, ":") {
			cl = "[" + client + "]:" + fmt.Sprint(port)
		}
		return fmt.Sprintf(`https %s app/sign-lb/50dc6c495c0c9188 %s %s 0.000 0.020 0.000 %d %s 34 366 "GET https://sign.example.com:443/sign HTTP/1.1" "pinprobe/0.1.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/sign/73e2d6bc24d8a067 "Root=1-58337281-1d84f3d73c47ec4e58577259" "sign.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678" 1 %s "forward" "-" "%s" "%s" "%s" "-" "-"`,
			end.Format("2006-01-02T15:04:05.000000Z"), cl, target, r.status(), tstatus, start.Format("2006-01-02T15:04:05.000000Z"), reason, target, tstatus)
	}
	o := Options{}
	if natShift != 0 {
		o = runClients
	}
	j := joinLog(t, rep, mixedLog(reqs, 3, "10.0.0.5:443", line), o, accesslog.Options{})
	failed := failures(reqs, all)
	if j.Lines.Run != int64(len(reqs)) || j.Lines.OtherClients != int64((len(reqs)+2)/3) {
		t.Errorf("%d lines of the run, %d of other clients; want %d, %d", j.Lines.Run, j.Lines.OtherClients, len(reqs), (len(reqs)+2)/3)
	}
	switch {
	case natShift == 0 && (!j.Offset.Measured || j.Offset.By != "client port" || j.Offset.MS < -1501 || j.Offset.MS > -1499):
		t.Errorf("offset %+v; want -1500 ms by client port", j.Offset)
	case natShift != 0 && (j.Offset.By != "time" || j.Offset.MS < -1700 || j.Offset.MS > -1300):
		t.Errorf("offset %+v; want about -1500 ms from the times", j.Offset)
	}
	// The ALB's reason, a code pinprobe has no words for, as logged.
	want := fmt.Sprintf("All %d 502s were routed to %s (IPv6); the gateway says: TargetConnectionError.", failed, deadBackend)
	if j.Conclusion != want {
		t.Errorf("conclusion %q; want %q", j.Conclusion, want)
	}
	if b := j.Backends[0]; b.Name != deadBackend || b.Reasons["TargetConnectionError"] != failed || b.Failed != failed {
		t.Errorf("first backend %+v; want %s with %d TargetConnectionError", b, deadBackend, failed)
	}
	if len(j.Listeners) != 0 && (len(j.Listeners) != 1 || j.Listeners[0].Name != "app/sign-lb/50dc6c495c0c9188:443") {
		t.Errorf("listeners %+v; want the one ALB listener", j.Listeners)
	}
}

// TestBound: the lines held to be placed are bounded by the run's size,
// not the log's: past the bound they are counted, not held.
func TestBound(t *testing.T) {
	rep := simReport(simRun()[:10])
	j := New(rep, Options{})
	if j.maxHeld != 4*10+100_000 {
		t.Fatalf("bound %d; want %d", j.maxHeld, 4*10+100_000)
	}
	j.maxHeld = 50
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `198.51.100.7 - - [01/Dec/2026:16:40:00 +0000] "GET /%d HTTP/1.1" 200 1 "-" "x"`+"\n", i)
	}
	r, err := accesslog.Open(strings.NewReader(b.String()), accesslog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Add("big.log", r); err != nil {
		t.Fatal(err)
	}
	out := j.Finish()
	if len(j.held) != 50 || out.Lines.NotHeld != 150 {
		t.Errorf("held %d, not held %d; want 50, 150", len(j.held), out.Lines.NotHeld)
	}
}

// TestHAProxyLocalTime: HAProxy's default log writes the gateway's local
// time without its zone; a gateway two hours east of UTC is joined by
// client port all the same, the offset holding its zone.
func TestHAProxyLocalTime(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	var b strings.Builder
	for _, r := range reqs {
		be := "be_v4/s1"
		if r.backend == deadBackend {
			be = "be_v6/s9"
		}
		fe := [2]string{"fe_v4", "fe_v6"}[r.ep]
		st, term := "200", "----"
		if r.failed {
			st, term = "503", "SC--"
		}
		fmt.Fprintf(&b, "%s:%d [%s] %s %s 0/0/0/20/20 %s 87 - - %s 1/1/0/0/0 0/0 \"GET /sign HTTP/1.1\"\n",
			r.client(), r.port, r.at.Add(2*time.Hour).Format("02/Jan/2006:15:04:05.000"), fe, be, st, term)
	}
	j := joinLog(t, rep, b.String(), Options{}, accesslog.Options{})
	if !j.Offset.Measured || !j.Offset.NoZone || j.Offset.MS < 7_199_990 || j.Offset.MS > 7_200_010 {
		t.Errorf("offset %+v; want 2 h measured, the zone said", j.Offset)
	}
	if j.Lines.Run != int64(len(reqs)) || len(j.Backends) != 2 || j.Backends[0].Name != "be_v6/s9" || j.Backends[0].Failed != j.Backends[0].Requests {
		t.Errorf("lines %+v, backends %+v; want every request, be_v6/s9 failing all", j.Lines, j.Backends)
	}
}
