package report_test

import (
	"bytes"
	"runtime"
	"testing"

	"pinprobe/internal/fixture"
	"pinprobe/report"
	"pinprobe/report/judge"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
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
func TestReadAndMergeMemory(t *testing.T) {
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
	a, b := fixture.ManyEndpoints(t, 500, "aaaaaaaa"), fixture.ManyEndpoints(t, 500, "bbbbbbbb")
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
		t.Errorf("merging two reports of 500 endpoints (%d bytes) allocated %d bytes; want at most 10 times their size and 8 MiB", size, n)
	}
	if n := allocated(func() { m.Verdict = judge.Judge(m, judge.Once()) }); n > 10*size+8<<20 {
		t.Errorf("judging their merge allocated %d bytes; want at most 10 times their size and 8 MiB", n)
	}
	if m.Totals.Requests != 2*ra.Totals.Requests || len(m.Endpoints) != 500 {
		t.Errorf("merge: %d requests over %d endpoints; want %d over 500", m.Totals.Requests, len(m.Endpoints), 2*ra.Totals.Requests)
	}
}
