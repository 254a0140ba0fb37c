package merge_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/merge"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestReadAndMergeMemory: histograms are streamed from their encoding into
// a few scratch ones, one scope at a time, so reading, merging and judging
// saved reports each allocate a small multiple of what was read. Under the
// race detector allocation measures nothing; the merge's counts, still
// checked, hold at any size: the reports have 1/check.RaceScale of the
// endpoints.
func TestReadAndMergeMemory(t *testing.T) {
	eps := 500
	if check.Race {
		eps /= check.RaceScale
	}
	small := fixture.ManyEndpoints(t, 8, "aaaaaaaa")
	var r *report.Report
	if n := check.Allocated(func() {
		var err error
		if r, err = report.Read(bytes.NewReader(small), "small.json"); err != nil {
			t.Fatal(err)
		}
	}); n > 40*uint64(len(small))+1<<20 {
		t.Errorf("reading a %d-byte report of %d endpoints allocated %d bytes; want at most 40 times its size and 1 MiB", len(small), len(r.Endpoints), n)
	}
	a, b := fixture.ManyEndpoints(t, eps, "aaaaaaaa"), fixture.ManyEndpoints(t, eps, "bbbbbbbb")
	ra, err := report.Read(bytes.NewReader(a), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := report.Read(bytes.NewReader(b), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(len(a) + len(b))
	var m *report.Report
	if n := check.Allocated(func() {
		if m, err = merge.Merge([]*report.Report{ra, rb}, []string{"a.json", "b.json"}); err != nil {
			t.Fatal(err)
		}
	}); n > 10*size+8<<20 {
		t.Errorf("merging two reports of %d endpoints (%d bytes) allocated %d bytes; want at most 10 times their size and 8 MiB", eps, size, n)
	}
	if n := check.Allocated(func() { m.Verdict = judge.Judge(m, judge.Once()) }); n > 10*size+8<<20 {
		t.Errorf("judging their merge allocated %d bytes; want at most 10 times their size and 8 MiB", n)
	}
	if m.Totals.Requests != 2*ra.Totals.Requests || len(m.Endpoints) != eps {
		t.Errorf("merge: %d requests over %d endpoints; want %d over %d", m.Totals.Requests, len(m.Endpoints), 2*ra.Totals.Requests, eps)
	}
}

// TestMergeTimelineOfRunsFarApart: runs days apart made the merged grid
// as fine as the finest input over the whole span, for every endpoint: 300
// endpoints of 10 buckets and one run three days later merged into 90,000
// buckets. The merged series hold at most 4 times the inputs' buckets.
func TestMergeTimelineOfRunsFarApart(t *testing.T) {
	a, err := report.Read(bytes.NewReader(fixture.ManyEndpoints(t, 300, "aaaaaaaa")), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	later := docfix.EditJSON(t, fixture.ManyEndpoints(t, 1, "bbbbbbbb"), func(m map[string]any) {
		m["started_at"], m["ended_at"] = "2026-06-19T20:43:00.000Z", "2026-06-19T20:43:10.000Z"
		docfix.Obj(t, m, "timeline")["start"] = "2026-06-19T20:43:00.000Z"
	})
	b, err := report.Read(bytes.NewReader(later), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := merge.Merge([]*report.Report{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	in, out := 0, 0
	for _, r := range []*report.Report{a, b} {
		for _, s := range r.Timeline.Series {
			in += len(s.Requests)
		}
	}
	for _, s := range m.Timeline.Series {
		out += len(s.Requests)
	}
	if out > 4*in {
		t.Errorf("the merged timeline holds %d buckets, the inputs' %d; want at most 4 times as many", out, in)
	}
	if m.Totals.Requests != a.Totals.Requests+b.Totals.Requests {
		t.Errorf("merged %d requests; want %d", m.Totals.Requests, a.Totals.Requests+b.Totals.Requests)
	}
}

// TestRevisionNewerMerged: a merge of a report of a newer revision with
// one of revision 1 is of this revision and keeps the note of what
// reading the newer left out.
func TestRevisionNewerMerged(t *testing.T) {
	newer := docfix.EditJSON(t, goldenJSON(t), func(m map[string]any) {
		m["revision"] = float64(report.Revision + 1)
		docfix.NewerFields(t, m)
	})
	old, err := os.ReadFile("../report/testdata/revision1-demo.json")
	if err != nil {
		t.Fatal(err)
	}
	a := mustParse(t, newer, "newer.json")
	merged, err := merge.Merge([]*report.Report{a, mustParse(t, old, "old.json")}, []string{"newer.json", "old.json"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range merged.Notes {
		found = found || strings.HasPrefix(n, "newer.json was written by a newer pinprobe")
	}
	if !found {
		t.Errorf("merged notes %q do not say what newer.json lost", merged.Notes)
	}
	if merged.Inputs[0].Revision != report.Revision+1 {
		t.Errorf("input revision %d, want %d", merged.Inputs[0].Revision, report.Revision+1)
	}
}

// TestMergeRefusesTimelinesCenturiesApart: each timeline is sound, but the
// merged grid would span 209 years, past what a time.Duration holds: the
// merge says so instead of overflowing into a negative bucket.
func TestMergeRefusesTimelinesCenturiesApart(t *testing.T) {
	good := goldenJSON(t)
	read := func(name, start string) *report.Report {
		doc := docfix.EditJSON(t, good, func(m map[string]any) { docfix.Obj(t, m, "timeline")["start"] = start })
		r, err := report.Read(bytes.NewReader(doc), name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := read("a.json", "1971-01-01T00:00:00.000Z"), read("b.json", "2180-01-01T00:00:00.000Z")
	a.RunID, b.RunID = "0000000a", "0000000b" // two runs
	_, err := merge.Merge([]*report.Report{a, b}, []string{"a.json", "b.json"})
	if err == nil || !strings.Contains(err.Error(), "merge b.json: its timeline ends 209 years after that of a.json starts") {
		t.Errorf("Merge = %v; want it to name b.json, a.json and the 209 years", err)
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
	data := docfix.ReportJSON(t, rep)
	back, err := report.Parse(data, "golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(back.Endpoints[0].Trail.Requests), len(rep.Endpoints[0].Trail.Requests); got != want {
		t.Errorf("read back: %d trail requests; want %d", got, want)
	}

	other, err := report.Parse(data, "other.json")
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
	m, err := merge.Merge([]*report.Report{back, other}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	e := m.Endpoints[0]
	if got, want := len(e.Trail.Requests), 2*len(rep.Endpoints[0].Trail.Requests); got != want {
		t.Errorf("merged: %d trail requests; want both runs' %d", got, want)
	}
	m.Verdict = judge.Judge(m, judge.Once())
	docfix.ReportJSON(t, m)

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
			forgedRefused(t, data, func(r *report.Report) { tt.forge(&r.Endpoints[0]) }, tt.reason)
		})
	}
}

// forgedRefused checks that good, read and changed by forge, is refused
// when read again: on one line, naming the file and saying want.
func forgedRefused(t *testing.T, good []byte, forge func(r *report.Report), want string) {
	t.Helper()
	r := mustParse(t, good, "forged.json")
	forge(r)
	_, err := report.Parse(docfix.JSON(t, r), "forged.json")
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "forged.json") || strings.ContainsAny(err.Error(), "\n\x1b") {
		t.Errorf("Parse = %v; want one line naming forged.json and saying %q", err, want)
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

// TestSchemaMergedProcesses: the reports of three processes that shared a
// run, their merge and the report of one process that saw every request
// are valid pinprobe.report/v1 documents.
func TestSchemaMergedProcesses(t *testing.T) {
	parts, whole := newMgRun(t, 7, 3000).split(t, 3, func(i int) int { return i % 3 })
	mg, err := fixture.MergeJudged(parts, mgNames(len(parts)))
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*report.Report{"merged": mg, "one process": whole, "part 0": parts[0]} {
		t.Run(name, func(t *testing.T) { docfix.ReportJSON(t, r) })
	}
}

// goldenJSON is the golden report as saved.
func goldenJSON(t *testing.T) []byte { return docfix.JSON(t, fixture.GoldenReport(t)) }

func mustParse(t *testing.T, data []byte, name string) *report.Report {
	t.Helper()
	r, err := report.Parse(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRevision1Merged: a report written before revisions (revision 1)
// merges with a report of this revision; the merged report is of this
// revision and records each input's.
func TestRevision1Merged(t *testing.T) {
	data, err := os.ReadFile("../report/testdata/revision1-demo.json")
	if err != nil {
		t.Fatal(err)
	}
	old := mustParse(t, data, "old.json")
	now := docfix.SavedGolden(t)
	merged, err := fixture.MergeJudged([]*report.Report{old, now}, []string{"old.json", "now.json"})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Revision != report.Revision {
		t.Errorf("merged revision %d, want %d", merged.Revision, report.Revision)
	}
	if r0, r1 := merged.Inputs[0].Revision, merged.Inputs[1].Revision; r0 != 1 || r1 != report.Revision {
		t.Errorf("inputs' revisions %d, %d; want 1, %d", r0, r1, report.Revision)
	}
	if merged.Totals.Requests != old.Totals.Requests+now.Totals.Requests {
		t.Errorf("merged %d requests, want %d", merged.Totals.Requests, old.Totals.Requests+now.Totals.Requests)
	}
	docfix.CheckSchema(t, "report", docfix.ReportJSON(t, merged))
}
