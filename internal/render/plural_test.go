package render

import (
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
)

// TestOneSaysOne: one request, one finding, one in flight are said in the
// singular ("1 requests" and "1 findings" were).
func TestOneSaysOne(t *testing.T) {
	for _, s := range []string{
		planWords(&report.Plan{Rate: 10, Requests: 1, Concurrency: 1}),
		planWords(&report.Plan{Rate: 10, Requests: 1, DurationS: 5, Concurrency: 1}),
		levelWords(report.Level{Alpha: 0.001, Each: 0.001, Tests: 1}),
		PlanLine(report.Plan{Rate: 10, Requests: 1}, 1, "1 endpoint"),
		PlanLine(report.Plan{Rate: 10, Requests: 1, DurationS: 5}, 1, "1 endpoint"),
		runParts(NewView(oneRequest())).Items[3],
	} {
		for _, bad := range []string{" 1 requests", " 1 findings", "^1 requests"} {
			if strings.HasPrefix(bad, "^") {
				if strings.HasPrefix(s, bad[1:]) {
					t.Errorf("%q says %q", s, bad[1:])
				}
				continue
			}
			if strings.Contains(s, bad) {
				t.Errorf("%q says %q", s, bad)
			}
		}
	}
}

// oneRequest is a report of a run that sent one request.
func oneRequest() *report.Report {
	r := &report.Report{Version: "0.1.0", Plan: report.Plan{Rate: 10, Requests: 1}}
	r.Totals.Requests = 1
	return r
}

// TestSettledSaysTheRequestsInFlight: a run --until-verdict stopped says
// when it settled and how many requests finished after, so its count and
// the stopping line's agree (3300 on stderr, 3301 in the report).
func TestSettledSaysTheRequestsInFlight(t *testing.T) {
	r := oneRequest()
	r.Totals.Requests = 3301
	r.Settled = &report.Settled{Requests: 3300, Look: 5, MaxLooks: 60, Alpha: 0.001}
	if got := NewView(r).Run.Settled; !strings.Contains(got, "after 3300 requests") || !strings.Contains(got, "the run's 3301 requests include the 1 in flight then") {
		t.Errorf("settled: %q; want it to say 3300 at the look and the 3301 of the run", got)
	}
}

// TestMergedWindowSaysBoth: a merge of runs with a gap between them says
// the time its runs covered and the window they span.
func TestMergedWindowSaysBoth(t *testing.T) {
	r := oneRequest()
	r.StartedAt = report.Time{Time: time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)}
	r.EndedAt = report.Time{Time: r.StartedAt.Add(21 * time.Second)}
	r.DurationS = 16
	r.Inputs = []report.Input{{File: "a.json"}, {File: "b.json"}}
	v := NewView(r)
	if got := v.Run.Length; got != "16.0 s of runs over 21.0 s" {
		t.Errorf("documents: %q; want 16.0 s of runs over 21.0 s", got)
	}
	if !strings.Contains(v.Run.Took, "16.0s of runs, over a window of 21.0s") {
		t.Errorf("terminal: %q; want it to say the window of 21.0s", v.Run.Took)
	}
	r.Inputs = nil // one run: its window is its length
	if got := NewView(r).Run.Length; got != "16.0 s" {
		t.Errorf("one run: %q; want 16.0 s", got)
	}
}

// TestRunLineFitsTheWidth: the run's line keeps to 80 columns when one of
// its parts is long ("10.0s sending, then 2.5s waiting for requests in
// flight").
func TestRunLineFitsTheWidth(t *testing.T) {
	r := oneRequest()
	r.StartedAt = report.Time{Time: time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)}
	r.EndedAt = report.Time{Time: r.StartedAt.Add(12500 * time.Millisecond)}
	r.DurationS, r.SendS = 12.5, 10
	r.Plan.Rate, r.Totals.RPS = 123.456, 123.4 // a long planned rate, beside the long time
	var b strings.Builder
	tw := newTextWriter(&b, Options{Width: 80})
	tw.parts(runParts(NewView(r)))
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if n := runes(l); n > 80 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(norm(b.String()), "waiting for requests in flight") {
		t.Errorf("the run's line lost its words:\n%s", b.String())
	}
}
