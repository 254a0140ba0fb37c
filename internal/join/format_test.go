package join

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/accesslog"
)

// pinLog writes the run's requests in a log_format of the README's kind:
// client port and backend, no request ID.
func pinLog(reqs []simRequest) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "%s:%d [%s] \"GET /sign HTTP/1.1\" %d 12 up=%s\n", r.client(), r.port, r.at.Format("02/Jan/2006:15:04:05 -0700"), r.status(), r.backend)
	}
	return b.String()
}

// TestFormatMatchedNoLine: a --log-format that matched none of a log's
// 300 lines was headlined "The logs hold no request: nothing to join.",
// as though the log were empty. Now the headline says the format matched
// no line, how many were read, and where the first line leaves the format
// (or which format it reads as); an empty log still holds no request; and
// a log that matched nothing beside one that did is a finding of its own.
func TestFormatMatchedNoLine(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	const pin = `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent up=$upstream_addr`
	tests := []struct {
		name, log, format string
		want              string
	}{
		{"a literal the lines lack", pinLog(reqs), `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent upstream=$upstream_addr`,
			"The format matched no line: none of the 300 lines read from gw.log parsed as the nginx log_format given (--log-format); " +
				"line 1 leaves it at column 74, where the format has `$body_bytes_sent upstream=` and the line `12 up=10.0.0.4:443`: " +
				"check --log-format against the format the gateway writes this log with, character for character between the variables."},
		{"lines of a format pinprobe reads", combinedLog(reqs, 0, "/sign"), pin,
			"The format matched no line: none of the 300 lines read from gw.log parsed as the nginx log_format given (--log-format); " +
				"line 1 reads as nginx combined: leave out --log-format (pinprobe reads that format itself), or give the log_format the gateway writes this log with."},
		{"an empty log", "", pin, "The logs hold no request: nothing to join."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := joinLog(t, rep, tt.log, Options{}, accesslog.Options{Format: tt.format})
			if j.Status != StatusNothing || j.Conclusion != tt.want {
				t.Errorf("%s: %q; want %s: %q", j.Status, j.Conclusion, StatusNothing, tt.want)
			}
		})
	}
	// Two logs of the run, one read with a format that fits and one with
	// one that does not: the join is made of the first, and the second is
	// said.
	j := New(rep, Options{})
	for i, l := range []struct{ log, format string }{{pinLog(reqs), pin}, {pinLog(reqs), strings.Replace(pin, " up=", " upstream=", 1)}} {
		r, err := accesslog.Open(strings.NewReader(l.log), accesslog.Options{Format: l.format})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Add(fmt.Sprintf("gw%d.log", i), r); err != nil {
			t.Fatal(err)
		}
	}
	out := j.Finish()
	want := "gw1.log: the format matched none of its 300 lines; line 1 leaves it at column 74, where the format has `$body_bytes_sent upstream=`"
	found := false
	for _, f := range out.Findings {
		found = found || f.Kind == "absent" && f.Scope == "gw1.log" && strings.HasPrefix(f.Text, want)
	}
	if out.Status != StatusTraced || !found {
		t.Errorf("%s: %q, findings %+v; want traced, and a finding %q…", out.Status, out.Conclusion, out.Findings, want)
	}
}
