package judge

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// histOf records latencies (µs) in a report histogram.
func histOf(us ...int64) *hdr.Histogram {
	h := report.NewHist()
	for _, v := range us {
		h.RecordValue(v)
	}
	return h
}

// lognormal draws n latencies around median, spread sigma (log scale),
// scaled by factor.
func lognormal(rng *rand.Rand, h *hdr.Histogram, n int, median time.Duration, sigma, factor float64) {
	for range n {
		d := time.Duration(float64(median) * factor * math.Exp(sigma*rng.NormFloat64()))
		h.RecordValue(report.Micros(d))
	}
}

// bruteMannWhitney enumerates every way to pick the scope's values among
// all of them and returns P(U ≥ U_obs).
func bruteMannWhitney(scope, rest []int64) float64 {
	all := append(append([]int64{}, scope...), rest...)
	u := func(s, r []int64) float64 {
		t := 0.0
		for _, a := range s {
			for _, b := range r {
				switch {
				case a > b:
					t++
				case a == b:
					t += 0.5
				}
			}
		}
		return t
	}
	obs := u(scope, rest)
	var hits, total float64
	n := len(all)
	for mask := 0; mask < 1<<n; mask++ {
		if bits.OnesCount(uint(mask)) != len(scope) {
			continue
		}
		var s, r []int64
		for i, v := range all {
			if mask&(1<<i) != 0 {
				s = append(s, v)
			} else {
				r = append(r, v)
			}
		}
		total++
		if u(s, r) >= obs-1e-9 {
			hits++
		}
	}
	return hits / total
}

// The exact Mann-Whitney law, with ties, is the enumeration's.
func TestSlowerTestExactMatchesEnumeration(t *testing.T) {
	tests := []struct{ scope, rest []int64 }{
		{[]int64{30, 40, 50}, []int64{10, 20, 25}},
		{[]int64{30, 30, 50}, []int64{10, 30, 30, 60}},
		{[]int64{100}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{[]int64{5, 5, 5, 5}, []int64{5, 5, 5, 6}}, // nearly all tied
		{[]int64{7, 8, 9, 20, 30}, []int64{1, 8, 9, 25, 40, 41}},
		{[]int64{1, 2}, []int64{3, 4, 5, 6, 7, 8, 9, 10}}, // the scope is faster
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.scope, tt.rest), func(t *testing.T) {
			want := bruteMannWhitney(tt.scope, tt.rest)
			r := SlowerTest(histOf(tt.scope...), histOf(tt.rest...), 0.001)
			if r.Method != "exact" {
				t.Fatalf("method = %s; want exact", r.Method)
			}
			if math.Abs(r.P-want) > 1e-9 {
				t.Errorf("p = %.10f; want %.10f", r.P, want)
			}
		})
	}
}

// What is slow and what is not, at the sizes a run makes.
func TestSlowerTestCases(t *testing.T) {
	const alpha = 0.001
	rng := rand.New(rand.NewPCG(51, 52))
	ms := time.Millisecond
	type side struct {
		n      int
		median time.Duration
		sigma  float64
		factor float64
		// slowShare of the requests take slowFactor times as long: one
		// slow instance among several.
		slowShare, slowFactor float64
	}
	fill := func(s side) *hdr.Histogram {
		h := report.NewHist()
		slow := int(float64(s.n) * s.slowShare)
		lognormal(rng, h, s.n-slow, s.median, s.sigma, s.factor)
		lognormal(rng, h, slow, s.median, s.sigma, s.factor*s.slowFactor)
		return h
	}
	tests := []struct {
		name        string
		scope, rest side
		significant bool
		slow        bool
		reason      string
	}{
		{"alike, large", side{n: 200000, median: 20 * ms, sigma: 0.5, factor: 1}, side{n: 600000, median: 20 * ms, sigma: 0.5, factor: 1}, false, false, SlowNotSignificant},
		{"10% slower, large", side{n: 200000, median: 20 * ms, sigma: 0.5, factor: 1.1}, side{n: 600000, median: 20 * ms, sigma: 0.5, factor: 1}, true, false, SlowTooSmall},
		{"3x slower", side{n: 2000, median: 20 * ms, sigma: 0.5, factor: 3}, side{n: 6000, median: 20 * ms, sigma: 0.5, factor: 1}, true, true, ""},
		{"3x slower, 30 requests", side{n: 30, median: 20 * ms, sigma: 0.5, factor: 3}, side{n: 90, median: 20 * ms, sigma: 0.5, factor: 1}, true, true, ""},
		{"3x slower, 3 requests each", side{n: 3, median: 20 * ms, sigma: 0.1, factor: 3}, side{n: 3, median: 20 * ms, sigma: 0.1, factor: 1}, false, false, SlowNotSignificant},
		{"loopback µs apart", side{n: 100000, median: 55 * time.Microsecond, sigma: 0.1, factor: 1}, side{n: 100000, median: 50 * time.Microsecond, sigma: 0.1, factor: 1}, true, false, SlowTooSmall},
		{"one instance in four 3x slower", side{n: 4000, median: 20 * ms, sigma: 0.3, factor: 1, slowShare: 0.25, slowFactor: 3}, side{n: 12000, median: 20 * ms, sigma: 0.3, factor: 1}, true, true, ""},
		{"one instance in ten 3x slower", side{n: 4000, median: 20 * ms, sigma: 0.3, factor: 1, slowShare: 0.1, slowFactor: 3}, side{n: 12000, median: 20 * ms, sigma: 0.3, factor: 1}, true, false, SlowTooSmall},
		// Cache misses 25x slower: 13% of them on the scope, 10% elsewhere.
		{"a few more cache misses", side{n: 100000, median: 2 * ms, sigma: 0.2, factor: 1, slowShare: 0.13, slowFactor: 25}, side{n: 300000, median: 2 * ms, sigma: 0.2, factor: 1, slowShare: 0.10, slowFactor: 25}, true, false, SlowTooSmall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := SlowerTest(fill(tt.scope), fill(tt.rest), alpha)
			if r.Significant != tt.significant || r.Slow != tt.slow || r.Reason != tt.reason {
				t.Errorf("got significant %v, slow %v, reason %q (p %.3g, share %.2f, medians %v/%v ms); want %v, %v, %q",
					r.Significant, r.Slow, r.Reason, r.P, r.Share, r.MedianMS, r.RestMedianMS, tt.significant, tt.slow, tt.reason)
			}
			if r.Requests != int64(tt.scope.n) || r.RestRequests != int64(tt.rest.n) {
				t.Errorf("counts = %d, %d; want %d, %d", r.Requests, r.RestRequests, tt.scope.n, tt.rest.n)
			}
		})
	}
}

// The reported figures are the histograms': medians, p90, p99, ratio and
// the probability of superiority.
func TestSlowerTestFigures(t *testing.T) {
	scope := histOf(10000, 20000, 30000, 40000, 50000)
	rest := histOf(1000, 2000, 3000, 4000, 5000, 10000)
	r := SlowerTest(scope, rest, 0.05)
	// Values are the tops of their buckets (3 significant digits).
	if r.MedianMS != 30.015 || r.RestMedianMS != 3.001 || r.Ratio != 10.002 {
		t.Errorf("medians %v, %v ms, ratio %v; want 30.015, 3.001, 10.002", r.MedianMS, r.RestMedianMS, r.Ratio)
	}
	if r.P99MS != 50.015 || r.RestP99MS != 10.007 {
		t.Errorf("p99 %v, %v ms; want the buckets' tops 50.015, 10.007", r.P99MS, r.RestP99MS)
	}
	// Every scope value is above every rest value but one tie at 10 ms.
	if want := (30 - 0.5) / 30; math.Abs(r.Superiority-want) > 1e-6 {
		t.Errorf("superiority = %v; want %.6f", r.Superiority, want)
	}
	empty := SlowerTest(report.NewHist(), rest, 0.05)
	if empty.P != 1 || empty.Slow || empty.Reason != SlowNoData || empty.Method != "none" {
		t.Errorf("empty scope: %+v; want p 1, not slow, %q", empty, SlowNoData)
	}
	if r := SlowerTest(nil, rest, 0.05); r.Reason != SlowNoData {
		t.Errorf("nil scope: reason %q; want %q", r.Reason, SlowNoData)
	}
}

// Under H0 (one latency law for both) Mann-Whitney's p is below α at most
// α of the time, exact and normal, with the ties of coarse latencies.
func TestSlowerTestFalsePositiveRate(t *testing.T) {
	check.Long(t, "the simulations of many runs")
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(53, 54))
	sizes := [][2]int{{5, 10}, {12, 30}, {25, 25}, {5, 500}, {200, 600}, {2000, 2000}}
	const runs = 6000 / check.RateScale
	var lv levels
	var slow int
	methods := map[string]int{}
	s, r := report.NewHist(), report.NewHist() // emptied for each run
	for i := range runs {
		sz := sizes[i%len(sizes)]
		s.Reset()
		r.Reset()
		coarse := i%2 == 0 // loopback-like latencies: a few distinct microsecond values
		for j, h := range []*hdr.Histogram{s, r} {
			for range sz[j] {
				if coarse {
					h.RecordValue(40 + int64(rng.IntN(6)))
				} else {
					h.RecordValue(report.Micros(time.Duration(float64(20*time.Millisecond) * math.Exp(0.5*rng.NormFloat64()))))
				}
			}
		}
		res := SlowerTest(s, r, 0.01)
		methods[res.Method]++
		lv.add(res.P)
		if res.Slow {
			slow++
		}
	}
	t.Logf("Mann-Whitney under H0: %d/%d below 0.01 (%.4f), %d/%d below 0.001 (%.5f), %d judged slow at 0.01; methods %v",
		lv.at01, runs, float64(lv.at01)/runs, lv.at001, runs, float64(lv.at001)/runs, slow, methods)
	if slow > lv.at01 {
		t.Errorf("%d judged slow, more than the %d significant", slow, lv.at01)
	}
	lv.check(t, runs)
}

func BenchmarkSlowerTest(b *testing.B) {
	rng := rand.New(rand.NewPCG(55, 56))
	for _, n := range []int{1000, 100000, 1000000} {
		s, r := report.NewHist(), report.NewHist()
		lognormal(rng, s, n, 20*time.Millisecond, 0.7, 1.2)
		lognormal(rng, r, 3*n, 20*time.Millisecond, 0.7, 1)
		b.Run(fmt.Sprintf("%d-vs-%d", n, 3*n), func(b *testing.B) {
			for b.Loop() {
				SlowerTest(s, r, 0.001)
			}
		})
	}
}

// Histograms of another geometry are matched bucket by bucket on their
// values: the same answer as with pinprobe's geometry when the values are
// exact in both.
func TestSlowerTestOtherGeometry(t *testing.T) {
	scope := []int64{300, 420, 500, 610, 700, 800}
	rest := []int64{100, 200, 300, 400, 410, 420, 450, 500}
	other := func(vs []int64) *hdr.Histogram {
		h := hdr.New(1, 10000, 4)
		for _, v := range vs {
			h.RecordValue(v)
		}
		return h
	}
	want := SlowerTest(histOf(scope...), histOf(rest...), 0.05)
	for _, got := range []report.SlowResult{
		SlowerTest(other(scope), histOf(rest...), 0.05),
		SlowerTest(histOf(scope...), other(rest), 0.05),
	} {
		if math.Abs(got.P-want.P) > 1e-12 || got.Superiority != want.Superiority {
			t.Errorf("p %v, superiority %v; want %v, %v", got.P, got.Superiority, want.P, want.Superiority)
		}
	}
}

// encodeHist is h as a report stores it.
func encodeHist(t testing.TB, h *hdr.Histogram) string {
	t.Helper()
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}

// TestLeaveOneOutIsTheMergeOfTheOthers: the rest of each histogram, taken
// as the whole less its own counts, is bucket for bucket the merge of all
// the others, also when one does not decode: written with another layout
// (refused, as a saved report's is) or not a histogram at all.
func TestLeaveOneOutIsTheMergeOfTheOthers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var encs []string
	var hists []*hdr.Histogram
	for k := range 6 {
		h := report.NewHist()
		if k == 4 {
			h = hdr.New(1, 10_000_000, 2) // another layout
		}
		for range 200 + k*50 {
			if err := h.RecordValue(int64(100 + rng.ExpFloat64()*float64(1000*(k+1)))); err != nil {
				t.Fatal(err)
			}
		}
		encs = append(encs, encodeHist(t, h))
		if k == 4 {
			h = nil // does not decode
		}
		hists = append(hists, h)
	}
	hists = append(hists, nil)
	encs = append(encs, "not a histogram")
	lo := newLeaveOneOut(encs)
	for k := range encs {
		own, rest := lo.pair(k)
		if hists[k] == nil {
			if own != nil || rest != nil {
				t.Errorf("%d: a bad encoding has a histogram or a rest", k)
			}
			continue
		}
		got := rest
		want := report.NewHist()
		for j, h := range hists {
			if j != k && h != nil {
				want.Merge(h)
			}
		}
		if got.TotalCount() != want.TotalCount() {
			t.Errorf("%d: rest has %d values; want %d", k, got.TotalCount(), want.TotalCount())
		}
		if got.Encode() != encodeHist(t, want) { // the same encoding: the same counts, bucket for bucket
			t.Errorf("%d: rest's counts differ from the merge of the others", k)
		}
		for _, q := range []float64{50, 90, 99} {
			if a, b := got.ValueAtQuantile(q), want.ValueAtQuantile(q); a != b {
				t.Errorf("%d: p%.0f %d; want %d", k, q, a, b)
			}
		}
	}
}

// BenchmarkSlowManyAddresses: the latency findings of one URL with 200
// addresses (each tested against the other 199), and the ratio to merging
// each address's rest anew.
func BenchmarkSlowManyAddresses(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	encs := make([]string, 200)
	for k := range encs {
		h := report.NewHist()
		for range 50 {
			_ = h.RecordValue(int64(200 + rng.ExpFloat64()*800))
		}
		encs[k] = encodeHist(b, h)
	}
	b.Run("leave-one-out", func(b *testing.B) {
		for b.Loop() {
			lo := newLeaveOneOut(encs)
			for k := range encs {
				own, rest := lo.pair(k)
				histTest(own, rest, 0.001)
			}
		}
	})
	// What it replaced: each address's rest decoded and merged anew.
	b.Run("merge-others", func(b *testing.B) {
		for b.Loop() {
			for k := range encs {
				own, _ := report.DecodeHDR(encs[k])
				rest := report.NewHist()
				for j, enc := range encs {
					if j != k {
						h, _ := report.DecodeHDR(enc)
						rest.Merge(h)
					}
				}
				SlowerTest(own, rest, 0.001)
			}
		}
	})
}

// TestMannWhitneyOfCounts: MannWhitney, from counts alone and over any
// same range of buckets, gives SlowerTest's p both ways, exact (n·m ≤ 400)
// and normal.
func TestMannWhitneyOfCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	// Emptied for each case: each is 188 kB to clear, not to allocate.
	hx, hy := report.NewHist(), report.NewHist()
	x, y := report.NewScratch(), report.NewScratch()
	for i := range 200 {
		nx, ny := []int{3, 15, 40, 900}[i%4], []int{5, 20, 60, 700}[(i/4)%4]
		var xs, ys []int64
		for range nx {
			xs = append(xs, 100+rng.Int64N(400)+int64(i%3)*50)
		}
		for range ny {
			ys = append(ys, 100+rng.Int64N(400))
		}
		for _, c := range []struct {
			h  *hdr.Histogram
			sc *report.Scratch
			vs []int64
		}{{hx, x, xs}, {hy, y, ys}} {
			c.h.Reset()
			for _, v := range c.vs {
				c.h.RecordValue(v)
			}
			c.sc.Reset()
			c.sc.AddCounts(c.h.Export().Counts)
		}
		wantG, wantL := SlowerTest(x.H, y.H, 1).P, SlowerTest(y.H, x.H, 1).P
		lo, hi := len(x.Counts), 0
		for idx := range x.Counts {
			if x.Counts[idx]+y.Counts[idx] > 0 {
				lo, hi = min(lo, idx), max(hi, idx)
			}
		}
		for _, r := range [][2]int{{0, len(x.Counts)}, {lo, hi + 1}} {
			g, l := MannWhitney(x.Counts[r[0]:r[1]], y.Counts[r[0]:r[1]], int64(nx), int64(ny))
			if !check.Near(g, wantG, 1e-12) || !check.Near(l, wantL, 1e-12) {
				t.Fatalf("%d and %d values, buckets %v: MannWhitney = %v, %v; want SlowerTest's %v, %v", nx, ny, r, g, l, wantG, wantL)
			}
		}
	}
}
