package render_test

import (
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
			"400 req/s (200 per endpoint) for 30s or 200 requests, whichever comes first, over " + over},
		{report.Plan{Rate: 10, DurationS: 60}, 3, "10 req/s (3.333 per endpoint) for 1m0s over " + over},
		{report.Plan{Rate: 2.5, Requests: 100}, 1, "2.5 req/s for 100 requests over " + over},
		{report.Plan{Rate: 20}, 2, "20 req/s (10 per endpoint) until Ctrl-C over " + over},
		{report.Plan{Max: true, Concurrency: 8, DurationS: 0.3}, 2, "max rate (8 workers per endpoint, back to back) for 300ms over " + over},
	} {
		if got := render.PlanLine(tc.plan, tc.endpoints, over); got != tc.want {
			t.Errorf("PlanLine(%+v, %d):\n got %q\nwant %q", tc.plan, tc.endpoints, got, tc.want)
		}
	}
}
