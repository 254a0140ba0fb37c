package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
)

// The ranks are the exact binomial ones. Reference values: the binomial
// law summed in exact fractions with Python's math.comb and
// fractions.Fraction, by the same definition (lo the largest rank with
// P(B ≤ lo-1) ≤ 2.5%, hi the smallest with P(B ≥ hi) ≤ 2.5%).
func TestQuantileCI95(t *testing.T) {
	tests := []struct {
		n      int64
		q      float64
		lo, hi int64
		ok     bool
	}{
		{5, 0.5, 0, 6, false},
		{6, 0.5, 1, 6, true},
		{20, 0.5, 6, 15, true},
		{100, 0.5, 40, 61, true},
		{300, 0.5, 133, 168, true},
		{367, 0.99, 359, 368, false},
		{368, 0.99, 360, 368, true},
		{1000, 0.99, 983, 997, true},
		{3000, 0.99, 2959, 2981, true},
		{1000, 0.9, 881, 919, true},
	}
	for _, tt := range tests {
		lo, hi, ok := QuantileCI95(tt.n, tt.q)
		if lo != tt.lo || hi != tt.hi || ok != tt.ok {
			t.Errorf("QuantileCI95(%d, %v) = %d, %d, %v; want %d, %d, %v", tt.n, tt.q, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
	for _, bad := range []struct {
		n int64
		q float64
	}{{0, 0.5}, {-1, 0.5}, {10, 0}, {10, 1}, {10, math.NaN()}} {
		if _, _, ok := QuantileCI95(bad.n, bad.q); ok {
			t.Errorf("QuantileCI95(%d, %v) ok; want not", bad.n, bad.q)
		}
	}
}

// Past a spread of 3000 the normal law gives the ranks: within one rank of
// the exact sums just below the switch, and a billion values take no time.
func TestQuantileCI95Normal(t *testing.T) {
	n := int64(35_000_000) // spread √(n/4) ≈ 2958: still summed exactly
	lo, hi, _ := QuantileCI95(n, 0.5)
	sd := math.Sqrt(float64(n) / 4)
	nlo := int64(math.Floor(float64(n)/2-0.5-z95*sd)) + 1
	nhi := int64(math.Ceil(float64(n)/2 + 0.5 + z95*sd))
	if d1, d2 := lo-nlo, hi-nhi; d1 < -1 || d1 > 1 || d2 < -1 || d2 > 1 {
		t.Errorf("n=%d: exact ranks %d, %d; the normal law's %d, %d: want within one rank", n, lo, hi, nlo, nhi)
	}
	lo, hi, ok := QuantileCI95(1<<40, 0.99)
	if !ok || lo >= hi || float64(lo) > 0.99*(1<<40) || float64(hi) < 0.99*(1<<40) {
		t.Errorf("QuantileCI95(2^40, 0.99) = %d, %d, %v; want ranks around 0.99·2^40", lo, hi, ok)
	}
}

// The interval covers the true quantile at least 95% of the time, and not
// much more: samples of a continuous law, the median and the 99th
// percentile.
func TestQuantileCI95Covers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const runs = 2000 / check.RaceScale
	for _, tt := range []struct {
		n int
		q float64
	}{{50, 0.5}, {1000, 0.5}, {500, 0.99}, {3000, 0.99}} {
		truth := -math.Log1p(-tt.q) // the exponential law's quantile
		covered := 0
		xs := make([]float64, tt.n)
		lo, hi, ok := QuantileCI95(int64(tt.n), tt.q)
		if !ok {
			t.Fatalf("n=%d q=%v: no interval", tt.n, tt.q)
		}
		for range runs {
			for i := range xs {
				xs[i] = rng.ExpFloat64()
			}
			slices.Sort(xs)
			if xs[lo-1] <= truth && truth <= xs[hi-1] {
				covered++
			}
		}
		rate := float64(covered) / runs
		t.Logf("n=%d q=%v: ranks %d..%d covered the quantile in %d of %d samples (%.3f)", tt.n, tt.q, lo, hi, covered, runs, rate)
		// At least 95% (less three standard errors of the count), at most 99%.
		if se := math.Sqrt(0.05 * 0.95 / runs); rate < 0.95-3*se || rate > 0.99 {
			t.Errorf("n=%d q=%v: coverage %.3f; want 95%% to 99%%", tt.n, tt.q, rate)
		}
	}
}
