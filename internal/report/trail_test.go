package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
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

// TestTrailSavedAndMerged: the trail survives a save and a read, a merge
// of two runs keeps both runs' requests within the bounds, and a trail
// that lists more than its endpoint counted, or an error class pinprobe
// does not have, is refused on read.
func TestTrailSavedAndMerged(t *testing.T) {
	rep := fixture.GoldenReport(t)
	var withTrail int
	for _, e := range rep.Endpoints {
		if e.Trail == nil {
			continue
		}
		withTrail++
		var failed int64
		for _, r := range e.Trail.Requests {
			if r.Failed {
				failed++
			}
			if !strings.HasPrefix(r.RequestID, "pinprobe-0123abcd-") {
				t.Errorf("%s: trail request ID %q; want the run's", e.Address, r.RequestID)
			}
		}
		if failed != e.Failed {
			t.Errorf("%s: trail lists %d failed requests of %d", e.Address, failed, e.Failed)
		}
	}
	if withTrail == 0 {
		t.Fatal("the golden report has no trail")
	}
	data := fixture.ReportJSON(t, rep)
	back, err := report.ParseReport(data, "golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(back.Endpoints[0].Trail.Requests), len(rep.Endpoints[0].Trail.Requests); got != want {
		t.Errorf("read back: %d trail requests; want %d", got, want)
	}

	other, err := report.ParseReport(data, "other.json")
	if err != nil {
		t.Fatal(err)
	}
	other.RunID = "99999999"
	for i := range other.Endpoints {
		if tr := other.Endpoints[i].Trail; tr != nil {
			for j := range tr.Requests {
				tr.Requests[j].At.Time = tr.Requests[j].At.Add(time.Hour)
			}
		}
	}
	other.StartedAt.Time, other.EndedAt.Time = other.StartedAt.Add(time.Hour), other.EndedAt.Add(time.Hour)
	other.Timeline.Start.Time = other.Timeline.Start.Add(time.Hour)
	m, err := report.Merge([]*report.Report{back, other}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	e := m.Endpoints[0]
	if got, want := len(e.Trail.Requests), 2*len(rep.Endpoints[0].Trail.Requests); got != want {
		t.Errorf("merged: %d trail requests; want both runs' %d", got, want)
	}
	m.Verdict = judge.Judge(m, judge.Once())
	fixture.ReportJSON(t, m)

	for _, tt := range []struct {
		name   string
		forge  func(e *report.Endpoint)
		reason string
	}{
		{"more failed than counted", func(e *report.Endpoint) {
			for range e.Failed + 1 {
				e.Trail.Requests = append(e.Trail.Requests, report.TrailRequest{Failed: true, Status: 502})
			}
		}, "failed and"},
		{"unknown class", func(e *report.Endpoint) { e.Trail.Requests[0].Class = "gremlins" }, "not an error class"},
		{"no status", func(e *report.Endpoint) { e.Trail.Requests[0].Status = 1000 }, "not an HTTP status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := report.ParseReport(data, "forged.json")
			if err != nil {
				t.Fatal(err)
			}
			tt.forge(&r.Endpoints[0])
			var buf bytes.Buffer
			if err := report.JSON(&buf, r); err != nil {
				t.Fatal(err)
			}
			_, err = report.ParseReport(buf.Bytes(), "forged.json")
			if err == nil || !strings.Contains(err.Error(), tt.reason) || !strings.Contains(err.Error(), "forged.json") {
				t.Errorf("read: %v; want a refusal naming the file and saying %q", err, tt.reason)
			}
		})
	}
}

// checkSameTrail: a merged endpoint's trail lists the failed requests one
// aggregator over every result lists when that one lists them all, and
// stays within the bounds either way.
func checkSameTrail(t *testing.T, got, want *report.Endpoint) {
	t.Helper()
	ids := func(e *report.Endpoint) (failed []string, ok int) {
		if e.Trail == nil {
			return nil, 0
		}
		for _, r := range e.Trail.Requests {
			if r.Failed {
				failed = append(failed, r.RequestID)
			} else {
				ok++
			}
		}
		return failed, ok
	}
	gf, gok := ids(got)
	wf, _ := ids(want)
	if len(gf) > report.MaxTrailFailed || gok > report.MaxTrailOK {
		t.Errorf("%s: merged trail of %d failed and %d ok; want at most %d and %d", got.Address, len(gf), gok, report.MaxTrailFailed, report.MaxTrailOK)
	}
	if int64(len(wf)) == want.Failed && strings.Join(gf, " ") != strings.Join(wf, " ") {
		t.Errorf("%s: merged trail lists %d failed requests; want the %d one aggregator lists, in the same order", got.Address, len(gf), len(wf))
	}
}
