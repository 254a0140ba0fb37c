package main

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/merge"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// afterLoad is what a run does between the end of its load and its exit,
// for a run of n URL endpoints: close the aggregator, judge, write the
// JSON (-o) and render the text report; it returns the JSON.
func afterLoad(t testing.TB, n int, ready func()) []byte {
	agg := fixture.URLRun(t, n, 2)
	ready()
	rep := fixture.URLReportOf(agg, n)
	var js, text bytes.Buffer
	if err := report.JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := render.Text(render.Options{})(&text, rep); err != nil {
		t.Fatal(err)
	}
	return js.Bytes()
}

// reportOf is `pinprobe report FILE` of a saved run: read, merge (of one),
// judge, render.
func reportOf(t testing.TB, saved []byte) {
	r, err := report.Parse(saved, "saved.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := merge.Merge([]*report.Report{r}, []string{"saved.json"})
	if err != nil {
		t.Fatal(err)
	}
	m.Verdict = judge.Judge(m, judge.Once())
	var text bytes.Buffer
	if err := render.Text(render.Options{})(&text, m); err != nil {
		t.Fatal(err)
	}
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestScaleLinearInEndpoints: what a run does after its load, and what
// `pinprobe report` does with its saved report, allocate in proportion to
// the endpoints: 4 times the endpoints, at most 5 times the bytes. Each
// target's URL was parsed again for every endpoint (ShortURL, unjudged),
// 16 times the work for 4 times the endpoints; 10,000 took 111 s. Counted
// in bytes allocated, not timed.
func TestScaleLinearInEndpoints(t *testing.T) {
	if check.Race {
		t.Skip("the race detector's allocations are not the program's")
	}
	const small, large = 500, 2000
	var saved [2][]byte
	var run, rep [2]uint64
	for k, n := range []int{small, large} {
		var a0, a1 runtime.MemStats // from the end of the load on
		saved[k] = afterLoad(t, n, func() { runtime.ReadMemStats(&a0) })
		runtime.ReadMemStats(&a1)
		run[k] = a1.TotalAlloc - a0.TotalAlloc
		rep[k] = allocated(func() { reportOf(t, saved[k]) })
	}
	for _, c := range []struct {
		what string
		b    [2]uint64
	}{{"the end of a run", run}, {"pinprobe report of its saved report", rep}} {
		ratio := float64(c.b[1]) / float64(c.b[0])
		t.Logf("%s: %d endpoints %.1f MB, %d endpoints %.1f MB (%.2f×)", c.what, small, float64(c.b[0])/1e6, large, float64(c.b[1])/1e6, ratio)
		if ratio > 5 {
			t.Errorf("%s allocates %.2f× as much for %d endpoints as for %d; want at most 5× (linear: 4×)", c.what, ratio, large, small)
		}
	}
}

// BenchmarkAfterLoad is the end of a run of n URL endpoints (see
// afterLoad), and `pinprobe report` of its saved report.
func BenchmarkAfterLoad(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		var saved []byte
		b.Run(fmt.Sprintf("run/%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				saved = afterLoad(b, n, b.StartTimer)
			}
		})
		b.Run(fmt.Sprintf("report/%d", n), func(b *testing.B) {
			for b.Loop() {
				reportOf(b, saved)
			}
		})
	}
}
