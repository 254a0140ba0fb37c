package report_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
)

// trailReq is request n of a synthetic endpoint, started n·10 ms after t0.
func trailReq(t0 time.Time, n int, failed bool) report.TrailRequest {
	r := report.TrailRequest{At: report.Time{Time: t0.Add(time.Duration(n) * 10 * time.Millisecond)},
		RequestID: fmt.Sprintf("pinprobe-0123abcd-0-%d", n+1), Port: uint16(40000 + n/4), Conn: uint64(n/4 + 1), Failed: failed, Status: 200}
	if failed {
		r.Status = 502
	}
	return r
}

// TestTrailSampler: every failed request is listed while there are at
// most MaxTrailFailed of them; past that the list is an even sample over
// the whole run (the first request and one of the last step's, none
// clustered at the start), within its bounds, in time order.
func TestTrailSampler(t *testing.T) {
	t0 := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	for _, tt := range []struct{ failed, ok int }{{10, 3}, {report.MaxTrailFailed, 0}, {5000, 20000}, {report.MaxTrailFailed + 1, 1}} {
		t.Run(fmt.Sprintf("%d failed %d ok", tt.failed, tt.ok), func(t *testing.T) {
			var s report.TrailSampler
			// Failed and successful requests interleave, as a run's do.
			n := 0
			var offered time.Time // the last failed request's start
			for f, o := 0, 0; f < tt.failed || o < tt.ok; n++ {
				failed := f < tt.failed && (o >= tt.ok || n%2 == 0)
				if failed {
					f++
					offered = trailReq(t0, n, true).At.Time
				} else {
					o++
				}
				s.Add(trailReq(t0, n, failed))
			}
			tr := s.Trail()
			var failed, ok int
			var lastFailed time.Time
			for i, r := range tr.Requests {
				if i > 0 && r.At.Before(tr.Requests[i-1].At.Time) {
					t.Fatalf("requests[%d] at %v before requests[%d] at %v: want time order", i, r.At, i-1, tr.Requests[i-1].At)
				}
				if r.Failed {
					failed++
					lastFailed = r.At.Time
				} else {
					ok++
				}
			}
			if want := min(tt.failed, report.MaxTrailFailed); failed > want || tt.failed <= report.MaxTrailFailed && failed != want || failed < want/2 {
				t.Errorf("%d failed listed of %d; want %d (at least half the bound when sampled)", failed, tt.failed, want)
			}
			if ok > report.MaxTrailOK || tt.ok <= report.MaxTrailOK && ok != tt.ok || ok < min(tt.ok, report.MaxTrailOK)/2 {
				t.Errorf("%d ok listed of %d; want %d at most, at least half", ok, tt.ok, report.MaxTrailOK)
			}
			// Spread over the run: the last failed request listed is in the
			// last quarter of the failed ones.
			if tt.failed > 0 && lastFailed.Before(offered.Add(-offered.Sub(t0)/4)) {
				t.Errorf("the last failed request listed started at %v, the last one offered at %v: want an even sample", lastFailed, offered)
			}
		})
	}
	var empty report.TrailSampler
	if empty.Trail() != nil {
		t.Errorf("an endpoint without requests has a trail; want none")
	}
	var long report.TrailSampler
	r := trailReq(t0, 0, true)
	r.RequestID = strings.Repeat("x", report.MaxTrailID+1)
	long.Add(r)
	if got := long.Trail().Requests[0].RequestID; got != "" {
		t.Errorf("a request ID of %d bytes kept (%d bytes); want it left out", report.MaxTrailID+1, len(got))
	}
}
