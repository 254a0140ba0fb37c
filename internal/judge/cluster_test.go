package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// bruteClusterP is the exact p-value by enumerating every set of K failed
// requests among all N, independently of exactClusterP's recursion.
func bruteClusterP(sizes, failed []int64) float64 {
	var owner []int // request -> connection
	var K int64
	obs := 0.0
	for i, n := range sizes {
		for range n {
			owner = append(owner, i)
		}
		K += failed[i]
		obs += float64(failed[i]*failed[i]) / float64(n)
	}
	cnt := make([]int64, len(sizes))
	var hits, total float64
	var rec func(start int, left int64)
	rec = func(start int, left int64) {
		if left == 0 {
			s := 0.0
			for i, c := range cnt {
				s += float64(c*c) / float64(sizes[i])
			}
			total++
			if s >= obs-1e-9 {
				hits++
			}
			return
		}
		for r := start; r <= len(owner)-int(left); r++ {
			cnt[owner[r]]++
			rec(r+1, left-1)
			cnt[owner[r]]--
		}
	}
	rec(0, K)
	return hits / total
}

func connCounts(sizes, failed []int64) []ConnCounts {
	cs := make([]ConnCounts, len(sizes))
	for i := range sizes {
		cs[i] = ConnCounts{ID: uint64(i + 1), Requests: sizes[i], Failed: failed[i]}
	}
	return cs
}

// On cases small enough to enumerate, the exact method equals the
// enumeration, Monte Carlo agrees within its error, and the analytic bound
// is never below the truth.
func TestClusterTestMatchesEnumeration(t *testing.T) {
	tests := []struct {
		sizes, failed []int64
	}{
		{[]int64{2, 2}, []int64{2, 0}},
		{[]int64{2, 2}, []int64{1, 1}},
		{[]int64{4, 4, 4}, []int64{3, 0, 0}},
		{[]int64{4, 4, 4, 4}, []int64{4, 1, 0, 0}},
		{[]int64{1, 2, 3, 4}, []int64{0, 2, 0, 1}},
		{[]int64{1, 2, 3, 4, 4}, []int64{1, 0, 3, 1, 0}},
		{[]int64{3, 3, 3, 3, 3}, []int64{3, 2, 1, 0, 0}},
		{[]int64{4, 4, 4, 4}, []int64{4, 4, 3, 1}},       // more failures than successes
		{[]int64{1, 1, 4, 4, 4}, []int64{1, 0, 0, 4, 0}}, // singletons with the rest
		{[]int64{2, 2, 2, 2, 2, 2, 2, 2}, []int64{2, 2, 1, 0, 0, 0, 0, 0}},
		{[]int64{5, 7, 3}, []int64{4, 1, 0}},
		{[]int64{4, 4, 4, 4}, []int64{1, 1, 1, 1}}, // perfectly even: p = 1
	}
	for _, tt := range tests {
		name := fmt.Sprint(tt.sizes, tt.failed)
		t.Run(name, func(t *testing.T) {
			want := bruteClusterP(tt.sizes, tt.failed)
			cs := connCounts(tt.sizes, tt.failed)
			ex := ClusterTest(cs)
			if ex.Method != ClusterExact {
				t.Fatalf("method = %s; want %s", ex.Method, ClusterExact)
			}
			if math.Abs(ex.P-want) > 1e-9*want+1e-15 {
				t.Errorf("exact p = %.12g; want %.12g", ex.P, want)
			}
			if ex.PBound < want*(1-1e-9) {
				t.Errorf("bound = %.6g; want at least the exact p %.6g", ex.PBound, want)
			}
			const B = 20000
			mc := clusterTest(cs, clusterOpts{method: ClusterMonteCarlo, perms: B, stopHits: B + 1, seed: 99})
			// The permutation estimate is (hits+1)/(B+1); allow 4.5 standard errors.
			tol := 4.5*math.Sqrt(want*(1-want)/B) + 2.0/B
			if math.Abs(mc.P-want) > tol {
				t.Errorf("monte carlo p = %.5f; want %.5f ± %.5f", mc.P, want, tol)
			}
		})
	}
}

// Nothing to test gives p = 1, and says so.
func TestClusterTestDegenerate(t *testing.T) {
	tests := []struct {
		name string
		cs   []ConnCounts
	}{
		{"none", nil},
		{"one connection", []ConnCounts{{1, 40, 20}}},
		{"no failure", []ConnCounts{{1, 4, 0}, {2, 4, 0}}},
		{"all failed", []ConnCounts{{1, 4, 4}, {2, 3, 3}}},
		{"one request each", []ConnCounts{{1, 1, 1}, {2, 1, 0}, {3, 1, 1}, {4, 1, 0}}},
		{"empty connections only", []ConnCounts{{1, 0, 0}, {2, 0, 0}, {3, 4, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ClusterTest(tt.cs)
			if r.P != 1 || r.Method != ClusterNone || r.Significant(0.05) {
				t.Errorf("got p = %v, method %q; want 1, %q", r.P, r.Method, ClusterNone)
			}
			if r.Failing == nil {
				t.Error("Failing is nil; want a list (JSON [])")
			}
		})
	}
	// Failures above requests and below zero are clamped, not trusted.
	r := ClusterTest([]ConnCounts{{1, 4, 9}, {2, 4, -3}, {3, 4, 0}})
	if r.Failed != 4 || r.Requests != 12 {
		t.Errorf("clamped counts = %d of %d; want 4 of 12", r.Failed, r.Requests)
	}
}

// The same connections give the same answer, in any order, every time.
func TestClusterTestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cs := make([]ConnCounts, 200)
	for i := range cs {
		cs[i] = ConnCounts{ID: uint64(i + 1), Requests: 4, Failed: int64(rng.IntN(2))}
	}
	for i := range cs[:30] {
		cs[i].Failed = 3
	}
	first := ClusterTest(cs)
	if first.Method != ClusterMonteCarlo {
		t.Fatalf("method = %s; want %s for this size", first.Method, ClusterMonteCarlo)
	}
	for i := range 3 {
		shuffled := slices.Clone(cs)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got := ClusterTest(shuffled)
		if got.P != first.P || got.Permutations != first.Permutations || !slices.Equal(got.Failing, first.Failing) {
			t.Errorf("run %d: p = %v after %d permutations, failing %v; want %v after %d, %v",
				i, got.P, got.Permutations, got.Failing[:3], first.P, first.Permutations, first.Failing[:3])
		}
	}
}

// The failing connections come by failure rate, then count, then ID, and
// the summary counts are those of the sentence.
func TestClusterTestFailing(t *testing.T) {
	r := ClusterTest([]ConnCounts{
		{ID: 10, Requests: 4, Failed: 2}, // 50%
		{ID: 11, Requests: 2, Failed: 1}, // 50%, fewer failures
		{ID: 12, Requests: 4, Failed: 4}, // 100%
		{ID: 13, Requests: 4, Failed: 0},
		{ID: 9, Requests: 4, Failed: 2},  // 50%, as 10: by ID
		{ID: 14, Requests: 1, Failed: 1}, // 100%, fewer failures than 12
	})
	if want := []uint64{12, 14, 9, 10, 11}; !slices.Equal(r.Failing, want) {
		t.Errorf("failing = %v; want %v", r.Failing, want)
	}
	if r.FailingConnections != 5 || r.Connections != 6 || r.Failed != 10 || r.Requests != 19 {
		t.Errorf("got %d of %d connections, %d of %d requests; want 5 of 6, 10 of 19",
			r.FailingConnections, r.Connections, r.Failed, r.Requests)
	}
	// Under H0 each connection of n requests is free of failures with
	// probability C(N-n, K)/C(N, K).
	want := 0.0
	for _, n := range []int64{4, 2, 4, 4, 4, 1} {
		want += 1 - math.Exp(stat.LogChoose(19-n, 10)-stat.LogChoose(19, 10))
	}
	if math.Abs(r.ExpectedFailing-want) > 1e-3 {
		t.Errorf("expected failing = %v; want %.3f", r.ExpectedFailing, want)
	}
}

// nullConns draws connections whose sizes do not depend on their outcomes
// (the setting ClusterTest is valid in): m connections of up to four
// requests, each request failing with probability p.
func nullConns(rng *rand.Rand, m int, p float64) []ConnCounts {
	cs := make([]ConnCounts, m)
	for i := range cs {
		n := int64(4)
		if rng.IntN(5) == 0 {
			n = 1 + rng.Int64N(4) // cut short by the run's end
		}
		cs[i] = ConnCounts{ID: uint64(i + 1), Requests: n, Failed: binomial(rng, n, p)}
	}
	return cs
}

// binomial draws how many of n requests fail, each with probability p.
func binomial(rng *rand.Rand, n int64, p float64) int64 {
	var f int64
	for range n {
		if rng.Float64() < p {
			f++
		}
	}
	return f
}

// Under H0 the test alarms at most as often as its level: thousands of
// healthy datasets, of every size and failure rate the engine makes.
func TestClusterTestFalsePositiveRate(t *testing.T) {
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(21, 22))
	const runs = 4000 / check.RateScale
	var lv levels
	methods := map[string]int{}
	for i := range runs {
		m := []int{12, 48, 256}[i%3]
		p := []float64{0.01, 0.05, 0.2, 0.5}[(i/3)%4]
		r := ClusterTest(nullConns(rng, m, p))
		methods[r.Method]++
		lv.add(r.P)
	}
	t.Logf("ClusterTest under H0: %d/%d below 0.01 (%.4f), %d/%d below 0.001 (%.5f); methods %v",
		lv.at01, runs, float64(lv.at01)/runs, lv.at001, runs, float64(lv.at001)/runs, methods)
	lv.check(t, runs)
	if methods[ClusterExact] == 0 || methods[ClusterMonteCarlo] == 0 {
		t.Errorf("methods used = %v; want both exact and monte-carlo exercised", methods)
	}
}

// With large counts everywhere the chi-square law is used, and it keeps
// its level too.
func TestClusterTestChiSquareRegime(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const runs = 3000 / check.RateScale
	var lv levels
	for range runs {
		cs := make([]ConnCounts, 40)
		for i := range cs {
			n := int64(150 + rng.IntN(100))
			cs[i] = ConnCounts{ID: uint64(i + 1), Requests: n, Failed: binomial(rng, n, 0.15)}
		}
		r := ClusterTest(cs)
		if r.Method != ClusterChiSquare {
			t.Fatalf("method = %s; want %s", r.Method, ClusterChiSquare)
		}
		lv.add(r.P)
	}
	t.Logf("chi-square regime under H0: %d/%d below 0.01, %d/%d below 0.001", lv.at01, runs, lv.at001, runs)
	lv.check(t, runs)
}

// The analytic bound is never below the exact p.
func TestClusterBoundIsAnUpperBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	checked, tight := 0, 0
	for range 400 {
		m := 6 + rng.IntN(40)
		cs := nullConns(rng, m, 0.1)
		// Make some of them clustered, so the bound has tails to bound.
		for i := range cs[:rng.IntN(m/3+1)] {
			cs[i].Failed = cs[i].Requests - int64(rng.IntN(2))
			cs[i].Failed = max(cs[i].Failed, 0)
		}
		r := ClusterTest(cs)
		if r.Method != ClusterExact {
			continue
		}
		checked++
		if r.PBound < r.P*(1-1e-9) {
			t.Errorf("bound %.4g below exact p %.4g for %v", r.PBound, r.P, cs)
		}
		if r.PBound < 1e-3 {
			tight++
		}
	}
	if checked < 200 || tight < 20 {
		t.Errorf("checked %d exact cases, %d with a bound below 1e-3; want at least 200 and 20", checked, tight)
	}
	// Larger groups, whose counts stay far below their size: the bound's
	// cap on counts comes into play.
	capped := 0
	for range 200 {
		cs := make([]ConnCounts, 10)
		for i := range cs {
			cs[i] = ConnCounts{ID: uint64(i + 1), Requests: 16}
		}
		for range 6 + rng.IntN(10) {
			i := rng.IntN(10)
			if rng.IntN(2) == 0 {
				i = rng.IntN(2) // cluster on the first two
			}
			cs[i].Failed = min(cs[i].Failed+1, 16)
		}
		r := ClusterTest(cs)
		if r.Method != ClusterExact {
			t.Fatalf("method = %s; want exact for %v", r.Method, cs)
		}
		if r.PBound < r.P*(1-1e-9) {
			t.Errorf("bound %.4g below exact p %.4g for %v", r.PBound, r.P, cs)
		}
		if r.PBound < 1 {
			capped++
		}
	}
	if capped < 20 {
		t.Errorf("only %d capped bounds computed; want at least 20", capped)
	}
	// 32 of 256 groups of 1000 requests hold 4 failures each, no other
	// failure: far beyond what permutations resolve, and the bound says so.
	big := make([]ConnCounts, 256)
	for i := range big {
		big[i] = ConnCounts{ID: uint64(i + 1), Requests: 1000}
		if i < 32 {
			big[i].Failed = 4
		}
	}
	if r := ClusterTest(big); r.Method != ClusterBound || r.P > 1e-9 {
		t.Errorf("256 groups of 1000, 32 with 4 failures: method %s, p %.3g; want %s, p<1e-9", r.Method, r.P, ClusterBound)
	}
}

// Power, in the setting where ClusterTest is valid (connection lengths
// fixed whatever the outcomes): one instance of four fails half its
// requests; a quarter of the connections sit on it, 4 requests each.
func TestClusterTestPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, tc := range []struct {
		conns    int
		minPower float64
	}{
		{48, 0.90},
		{12, 0.1},
	} {
		const runs = 500 / check.RaceScale
		detected := 0
		for range runs {
			cs := make([]ConnCounts, tc.conns)
			for i := range cs {
				var f int64
				if i%4 == 0 {
					for range 4 {
						if rng.IntN(2) == 0 {
							f++
						}
					}
				}
				cs[i] = ConnCounts{ID: uint64(i + 1), Requests: 4, Failed: f}
			}
			if ClusterTest(cs).Significant(0.001) {
				detected++
			}
		}
		power := float64(detected) / runs
		t.Logf("ClusterTest power at α=0.001, %d connections × 4, a quarter failing 50%%: %.3f", tc.conns, power)
		if power < tc.minPower {
			t.Errorf("%d connections: power %.3f; want at least %.2f", tc.conns, power, tc.minPower)
		}
	}
}

func BenchmarkClusterTest(b *testing.B) {
	rng := rand.New(rand.NewPCG(29, 30))
	mk := func(m int, n int64, base, bad float64) []ConnCounts {
		cs := make([]ConnCounts, m)
		for i := range cs {
			p := base
			if i%4 == 0 {
				p = bad
			}
			cs[i] = ConnCounts{ID: uint64(i + 1), Requests: n, Failed: binomial(rng, n, p)}
		}
		return cs
	}
	// 128 failures: heavy groups with f each, then single failures.
	heavy := func(n int64, groups int, f int64) []ConnCounts {
		cs := make([]ConnCounts, 256)
		var k int64
		for i := range cs {
			x := int64(0)
			switch {
			case i < groups:
				x = f
			case k < 128:
				x = 1
			}
			x = min(x, 128-k)
			k += x
			cs[i] = ConnCounts{ID: uint64(i + 1), Requests: n, Failed: x}
		}
		return cs
	}
	for _, bc := range []struct {
		name string
		cs   []ConnCounts
	}{
		{"48x4/clustered", mk(48, 4, 0, 0.5)},
		{"256x4/every-permutation", heavy(4, 40, 2)}, // p ≈ 6e-4: all 20000 permutations
		{"256x1000/rare-clustered", heavy(1000, 32, 4)},
		{"256x4/null-12%", mk(256, 4, 0.125, 0.125)},
		{"256x4/weak", mk(256, 4, 0.10, 0.20)},
		{"256x4/clustered", mk(256, 4, 0, 0.5)},
		{"256x1000/null-1%", mk(256, 1000, 0.01, 0.01)},
		{"256x1000/weak", mk(256, 1000, 0.01, 0.012)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var r ClusterResult
			for b.Loop() {
				r = ClusterTest(bc.cs)
			}
			b.ReportMetric(float64(r.Permutations), "perms")
			b.ReportMetric(r.P, "p")
		})
	}
}

// levels counts the p-values of runs under H0 that fall below 0.01 and
// below 0.001.
type levels struct{ at01, at001 int }

func (l *levels) add(p float64) {
	if p < 0.01 {
		l.at01++
	}
	if p < 0.001 {
		l.at001++
	}
}

// check fails t if either count is above the binomial's 99.9% point for
// runs: a rate above the level.
func (l levels) check(t *testing.T, runs int) {
	t.Helper()
	if lim := check.BinomialUpper(runs, 0.01, 0.001); l.at01 > lim {
		t.Errorf("%d of %d below 0.01; want at most %d", l.at01, runs, lim)
	}
	if lim := check.BinomialUpper(runs, 0.001, 0.001); l.at001 > lim {
		t.Errorf("%d of %d below 0.001; want at most %d", l.at001, runs, lim)
	}
}

// TestClusterTestHugeCounts: groups of billions of requests (a forged
// report's, or a very long run's) are not permuted request by request:
// past mcMaxRequests the chi-square law or the bound judges them, in
// milliseconds.
func TestClusterTestHugeCounts(t *testing.T) {
	for _, groups := range [][]ConnCounts{
		{{1, 1 << 34, 3}, {2, 1 << 33, 0}, {3, 5, 0}},                        // few failures: no chi-square
		{{1, 1 << 34, 1 << 33}, {2, 1 << 33, 1 << 20}, {3, 7, 1}, {4, 2, 2}}, // many, in uneven groups
	} {
		start := time.Now()
		r := ClusterTest(groups)
		if d := time.Since(start); d > 2*time.Second || !(r.P > 0 && r.P <= 1) {
			t.Errorf("ClusterTest(%v) = p %v by %s in %v; want a p-value in well under a second", groups, r.P, r.Method, d)
		}
	}
}
