package collect_test

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestPausesAddUp: one stop of the process, which every endpoint's
// scheduler reports for its own requests over about the same stretch, is
// one pause of all their requests; a later stop is another; the requests
// of neither are in any endpoint's requests or drops; past MaxPauses, the
// last holds the rest.
func TestPausesAddUp(t *testing.T) {
	tg := fixture.MustTarget(t, "http://app.example.com/")
	eps := []*probe.Endpoint{{ID: 0, Target: tg, Addr: netip.MustParseAddr("192.0.2.1")}, {ID: 1, Target: tg, Addr: netip.MustParseAddr("192.0.2.2")}}
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	s := time.Second
	pause := func(ep int, from, length time.Duration, n int) probe.Result {
		return probe.Result{Endpoint: ep, Start: start.Add(from), Paused: length, Missed: n}
	}
	close := func(results ...probe.Result) *report.Report {
		agg := collect.NewAggregator(eps)
		agg.SetTimeline(start, s, true)
		agg.Add(probe.Result{Endpoint: 0, Start: start, Status: 200, Latency: time.Millisecond})
		for _, r := range results {
			agg.Add(r)
		}
		return agg.Close(&report.Report{StartedAt: report.Time{Time: start}, EndedAt: report.Time{Time: start.Add(20 * s)}, SendS: 20})
	}
	rep := close(pause(1, 5*s+time.Millisecond, 3*s, 3000), pause(0, 5*s, 3*s+2*time.Millisecond, 3000), pause(0, 12*s, 1500*time.Millisecond, 1500))
	want := []report.Pause{
		{At: report.Time{Time: start.Add(5 * s)}, DurationS: 3.002, Requests: 6000},
		{At: report.Time{Time: start.Add(12 * s)}, DurationS: 1.5, Requests: 1500},
	}
	if !slices.Equal(rep.Pauses, want) {
		t.Errorf("pauses %+v; want %+v", rep.Pauses, want)
	}
	if rep.Totals.Requests != 1 || rep.Totals.Dropped != 0 {
		t.Errorf("totals: %d requests, %d dropped; want the one request, no pause in them", rep.Totals.Requests, rep.Totals.Dropped)
	}
	var many []probe.Result
	for i := range report.MaxPauses + 3 {
		many = append(many, pause(0, time.Duration(i)*s, 600*time.Millisecond, 10))
	}
	rep = close(many...)
	last := rep.Pauses[len(rep.Pauses)-1]
	if len(rep.Pauses) != report.MaxPauses || last.Requests != 40 || last.DurationS != 3.6 {
		t.Errorf("%d pauses, the last %+v; want %d, the last holding 4 of them", len(rep.Pauses), last, report.MaxPauses)
	}
	if rep := close(); rep.Pauses != nil {
		t.Errorf("pauses %+v without a pause; want none (left out of the JSON)", rep.Pauses)
	}
}
