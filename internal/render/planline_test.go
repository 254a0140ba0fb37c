package render_test

import (
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestPlanLine: the line pinprobe prints before the load says the rate,
// its share per endpoint, what ends the run, and over what.
func TestPlanLine(t *testing.T) {
	const over = "2 endpoints of app.test: 127.0.0.1, ::1"
	for _, tc := range []struct {
		plan      report.Plan
		endpoints int
		want      string
	}{
		{report.Plan{Rate: 400, DurationS: 30, Requests: 200}, 2,
			"400 requests/s in total (200 per endpoint); for 30 s; at most 200 requests over " + over},
		{report.Plan{Rate: 10, DurationS: 60}, 3, "10 requests/s in total (3.333 per endpoint); for 60 s over " + over},
		{report.Plan{Rate: 2.5, Requests: 100}, 1, "2.5 requests/s in total; at most 100 requests over " + over},
		{report.Plan{Rate: 20}, 2, "20 requests/s in total (10 per endpoint); until Ctrl-C over " + over},
		{report.Plan{Max: true, Concurrency: 8, DurationS: 0.3}, 2, "as fast as possible (closed model, 8 workers per endpoint); for 0.3 s over " + over},
	} {
		if got := render.PlanLine(tc.plan, tc.endpoints, over); got != tc.want {
			t.Errorf("PlanLine(%+v, %d):\n got %q\nwant %q", tc.plan, tc.endpoints, got, tc.want)
		}
	}
}

// TestPlanLineWordsAsTheReport: each phrase of the line is the report's
// own (the two worded the rate, the duration and the count apart: "30s"
// in one, "30 s" in the other).
func TestPlanLineWordsAsTheReport(t *testing.T) {
	p := report.Plan{Rate: 20, DurationS: 30, Requests: 200, Concurrency: 10}
	line := strings.TrimSuffix(render.PlanLine(p, 1, "1 endpoint"), " over 1 endpoint")
	sentence := render.NewView(&report.Report{Plan: p}).Run.Plan
	for _, phrase := range strings.Split(line, "; ") {
		if !strings.Contains(sentence, phrase) {
			t.Errorf("the line says %q; the report's sentence does not:\n%s", phrase, sentence)
		}
	}
}
