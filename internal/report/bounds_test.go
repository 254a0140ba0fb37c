package report_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// allocated is how many bytes f allocates; 0 under the race detector,
// whose sync.Pool drops what it holds (see check.Race).
func allocated(f func()) uint64 {
	if check.Race {
		f()
		return 0
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadAndMergeMemory: a saved histogram was decoded into a dense
// histogram of its own (188 kB, and 230 kB of garbage) wherever it was
// read — a 22 kB report took 110 MB to read, and a merge of two 3 MB
// reports of 5,000 endpoints 1.39 GB — and a merged endpoint, family and
// group kept one each. Histograms are now streamed from their encoding and
// decoded into a few scratch ones, one scope at a time: reading, merging
// and judging each allocate a small multiple of what was read.
//
// Under the race detector allocated measures nothing; what is still
// checked there (the merge's counts) holds at any size, so the merged
// reports have 1/check.RaceScale of the endpoints.
func TestReadAndMergeMemory(t *testing.T) {
	eps := 500
	if check.Race {
		eps /= check.RaceScale
	}
	small := fixture.ManyEndpoints(t, 8, "aaaaaaaa")
	var r *report.Report
	if n := allocated(func() {
		var err error
		if r, err = report.ReadReport(bytes.NewReader(small), "small.json"); err != nil {
			t.Fatal(err)
		}
	}); n > 40*uint64(len(small))+1<<20 {
		t.Errorf("reading a %d-byte report of %d endpoints allocated %d bytes; want at most 40 times its size and 1 MiB", len(small), len(r.Endpoints), n)
	}
	a, b := fixture.ManyEndpoints(t, eps, "aaaaaaaa"), fixture.ManyEndpoints(t, eps, "bbbbbbbb")
	ra, err := report.ReadReport(bytes.NewReader(a), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := report.ReadReport(bytes.NewReader(b), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(len(a) + len(b))
	var m *report.Report
	if n := allocated(func() {
		if m, err = report.Merge([]*report.Report{ra, rb}, []string{"a.json", "b.json"}); err != nil {
			t.Fatal(err)
		}
	}); n > 10*size+8<<20 {
		t.Errorf("merging two reports of %d endpoints (%d bytes) allocated %d bytes; want at most 10 times their size and 8 MiB", eps, size, n)
	}
	if n := allocated(func() { m.Verdict = judge.Judge(m, judge.Once()) }); n > 10*size+8<<20 {
		t.Errorf("judging their merge allocated %d bytes; want at most 10 times their size and 8 MiB", n)
	}
	if m.Totals.Requests != 2*ra.Totals.Requests || len(m.Endpoints) != eps {
		t.Errorf("merge: %d requests over %d endpoints; want %d over %d", m.Totals.Requests, len(m.Endpoints), 2*ra.Totals.Requests, eps)
	}
}

// hostileShapes are saved reports shaped to cost the most to read for their
// size, each from the report of one endpoint (base), with 1/div of the
// elements that make them hostile.
func hostileShapes(t *testing.T, div int) map[string][]byte {
	base := fixture.ManyEndpoints(t, 1, "aaaaaaaa")
	splice := func(old, repeated string, n int) []byte {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			if strings.Contains(repeated, "%") {
				fmt.Fprintf(&b, repeated, i, i>>16, (i>>8)&255, i&255)
			} else {
				b.WriteString(repeated)
			}
		}
		out := bytes.Replace(base, []byte(strings.Replace(old, "@", "", 1)), []byte(strings.Replace(old, "@", b.String(), 1)), 1)
		if bytes.Equal(out, base) {
			t.Fatalf("no %q in the base report", old)
		}
		return out
	}
	bombEnc, n := report.LatencyBomb()
	group := fmt.Sprintf(`{"header":"h%%[1]d","value":"v","requests":%d,"ok":%d,"failed":0,"failure_rate":0,"dropped":0,"rps":0,"bytes":0,"status":{"200":%d},"errors":{},"latency_ms":{"min":0,"mean":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"hdr":%q,"addresses":{},"failed_by_address":{}}`, n, n, n, bombEnc)
	many := 100000 / div
	return map[string][]byte{
		"empty endpoints":   []byte(`{"schema": "pinprobe.report/v1", "endpoints": [` + strings.Repeat("{}, ", many) + `{}]}`),
		"null samples":      splice(`"samples": [@]`, `null`, many),
		"many endpoints":    fixture.ManyEndpoints(t, 1000/div, "bbbbbbbb"),
		"error classes":     splice(`"errors": {@}`, `"e%[1]d": 0`, many),
		"dns answers":       splice(`"addresses": [@],`, `"10.%[2]d.%[3]d.%[4]d"`, many),
		"groups":            splice(`"groups": [@]`, `{"header":"h%[1]d","value":"v","requests":0,"ok":0,"failed":0,"failure_rate":0,"dropped":0,"rps":0,"bytes":0,"status":{},"errors":{},"latency_ms":{"min":0,"mean":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"hdr":"","addresses":{},"failed_by_address":{}}`, 20000/div),
		"zlib bombs":        splice(`"groups": [@]`, group, 2000/div),
		"families":          bytes.Replace(base, []byte(`"families": {`), []byte(`"families": {`+strings.Repeat(`"f0": {}, `, many)), 1),
		"empty time strata": splice(`"groups": [@]`, `{"header":"h","value":"v","requests":0,"ok":0,"failed":0,"failure_rate":0,"dropped":0,"rps":0,"bytes":0,"status":{},"errors":{},"latency_ms":{"min":0,"mean":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"hdr":"","addresses":{},"failed_by_address":{},"times":[`+strings.Repeat(`{},`, many)+`{}]}`, 1),
	}
}

// TestReadMemoryOfHostileShapes: whatever a saved report holds, reading it
// allocates at most 40 times its size (and 1 MiB), and judging and
// rendering it as much again: arrays of empty or null elements (which took
// 867 times their size), hundreds of thousands of map keys or addresses,
// thousands of groups, histograms that inflate to hundreds of times what
// they weigh (refused).
//
// The bounds are proven at full size without the race detector. Under it
// allocated measures nothing, and what is still checked (which shapes are
// refused and why, and that the others read, judge, render and compare)
// does not depend on how many elements a shape repeats: the shapes are
// built at 1/check.RaceScale of their size there.
func TestReadMemoryOfHostileShapes(t *testing.T) {
	div := 1
	if check.Race {
		div = check.RaceScale
	}
	for name, doc := range hostileShapes(t, div) {
		size := uint64(len(doc))
		var r *report.Report
		var err error
		if n := allocated(func() { r, err = report.ReadReport(bytes.NewReader(doc), "shape.json") }); n > 40*size+1<<20 {
			t.Errorf("%s: reading %d bytes allocated %d (%.0f times); want at most 40 times and 1 MiB", name, size, n, float64(n)/float64(size))
		}
		refused := map[string]string{"empty endpoints": `endpoint "{}": too short to hold one`, "null samples": `sample "null": too short to hold one`,
			"families": `families: "f0" is not an address family`, "empty time strata": `group time stratum "{}": too short to hold one`}[name]
		if refused != "" || err != nil {
			if err == nil || !strings.Contains(err.Error(), refused) {
				t.Errorf("%s: ReadReport = %v; want it refused: %q", name, err, refused)
			}
			continue
		}
		if n := allocated(func() {
			r.Verdict = judge.Judge(r, judge.LevelOf(r))
			render.Text(render.Options{})(io.Discard, r)
		}); n > 40*size+8<<20 {
			t.Errorf("%s: judging and rendering %d bytes allocated %d (%.0f times); want at most 40 times and 8 MiB", name, size, n, float64(n)/float64(size))
		}
		start := time.Now()
		if n := allocated(func() { render.CompareText(render.Options{})(io.Discard, compare.Compare(r, r)) }); n > 40*size+8<<20 {
			t.Errorf("%s: comparing %d bytes with itself allocated %d (%.0f times); want at most 40 times and 8 MiB", name, size, n, float64(n)/float64(size))
		}
		t.Logf("%s: %d bytes compared with itself in %v", name, size, time.Since(start))
	}
}

// TestMergeTimelineOfRunsFarApart: runs days apart made the merged grid
// as fine as the finest input over the whole span, for every endpoint: 300
// endpoints of 10 buckets and one run three days later merged into 90,000
// buckets. The merged series hold at most 4 times the inputs' buckets.
func TestMergeTimelineOfRunsFarApart(t *testing.T) {
	a, err := report.ReadReport(bytes.NewReader(fixture.ManyEndpoints(t, 300, "aaaaaaaa")), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	later := fixture.EditJSON(t, fixture.ManyEndpoints(t, 1, "bbbbbbbb"), func(m map[string]any) {
		m["started_at"], m["ended_at"] = "2026-06-19T20:43:00.000Z", "2026-06-19T20:43:10.000Z"
		fixture.Obj(t, m, "timeline")["start"] = "2026-06-19T20:43:00.000Z"
	})
	b, err := report.ReadReport(bytes.NewReader(later), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := report.Merge([]*report.Report{a, b}, []string{"a.json", "b.json"})
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
