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
	var failed int
	for _, r := range reqs {
		if r.failed {
			failed++
		}
	}
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

// TestReasonWords: HAProxy's termination states are said from their two
// characters, the common ones in a sentence of their own.
func TestReasonWords(t *testing.T) {
	for _, tt := range []struct {
		kind       accesslog.Kind
		code, want string
	}{
		{accesslog.HAProxy, "SC--", "the backend refused the connection, or reset it while connecting"},
		{accesslog.HAProxy, "sH--", "the backend timed out before its response headers"},
		{accesslog.HAProxy, "SD", "the backend aborted while the body was sent"},
		{accesslog.HAProxy, "--", ""},
		{accesslog.HAProxy, "X", ""},
		{accesslog.Azure, "errorinfo_upstream_no_live", "it found no healthy, reachable backend"},
		{accesslog.Nginx, "502", ""},
	} {
		if got := accesslog.ReasonWords(tt.kind, tt.code); got != tt.want {
			t.Errorf("ReasonWords(%s, %q) = %q; want %q", tt.kind, tt.code, got, tt.want)
		}
	}
}
