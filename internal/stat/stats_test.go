package stat

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
)

func TestWilson(t *testing.T) {
	// Reference values: the Wilson score formula evaluated independently (statsmodels
	// proportion_confint(method="wilson") gives the same).
	tests := []struct {
		k, n   int64
		lo, hi float64
	}{
		{0, 10, 0, 0.2775328},
		{5, 10, 0.2365931, 0.7634069},
		{10, 10, 0.7224672, 1},
		{1, 100, 0.001767, 0.054489},
		{60, 300, 0.1586569, 0.2489289},
		{0, 600, 0, 0.006363},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n)
		if !check.Near(lo, tt.lo, 1e-3) || !check.Near(hi, tt.hi, 1e-3) {
			t.Errorf("Wilson(%d, %d) = [%.6f, %.6f]; want [%.6f, %.6f]", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestUpperBoundZero(t *testing.T) {
	if got := UpperBoundZero(600); !check.Near(got, 0.0049806, 1e-3) {
		t.Errorf("UpperBoundZero(600) = %.7f; want 0.0049806 (below 0.5%%)", got)
	}
	if got := UpperBoundZero(0); got != 1 {
		t.Errorf("UpperBoundZero(0) = %v; want 1", got)
	}
}

func TestFisher(t *testing.T) {
	// Reference values: exact hypergeometric sums computed with Python's math.comb
	// (the same as R's fisher.test(matrix(c(a, n-a, c, m-c), 2, byrow=TRUE))).
	tests := []struct {
		a, n, c, m     int64
		greater, twoSd float64
	}{
		{3, 3, 0, 3, 0.05, 0.1}, // a handful: not significant
		{10, 10, 0, 10, 5.412544e-06, 1.082509e-05},
		{40, 40, 0, 80, 8.729290e-33, 8.729290e-33}, // 1/C(120,40); the other tail is empty
		{1, 10, 1, 10, 0.7631579, 1},
		{8, 10, 2, 10, 0.01150707, 0.02301414},
		{0, 10, 5, 10, 1, 0.03250774},
	}
	for _, tt := range tests {
		g := FisherGreater(tt.a, tt.n, tt.c, tt.m)
		two := FisherTwoSided(tt.a, tt.n, tt.c, tt.m)
		if !check.Near(g, tt.greater, 1e-3) {
			t.Errorf("FisherGreater(%d/%d vs %d/%d) = %.6g; want %.6g", tt.a, tt.n, tt.c, tt.m, g, tt.greater)
		}
		if !check.Near(two, tt.twoSd, 1e-3) {
			t.Errorf("FisherTwoSided(%d/%d vs %d/%d) = %.6g; want %.6g", tt.a, tt.n, tt.c, tt.m, two, tt.twoSd)
		}
	}
}

// UpperBound is the Clopper-Pearson bound: at the bound, k or fewer
// failures have probability alpha; with none, 1 - alpha^(1/n).
func TestUpperBound(t *testing.T) {
	for _, tt := range []struct {
		k, n  int64
		alpha float64
	}{{0, 100, 0.05}, {1, 100, 0.05}, {5, 50, 0.001}, {30, 300, 1e-6}, {0, 1, 0.05}} {
		ub := UpperBound(tt.k, tt.n, tt.alpha)
		if got := binomCDF(tt.k, tt.n, ub); math.Abs(got-tt.alpha) > 1e-6*tt.alpha+1e-12 {
			t.Errorf("UpperBound(%d, %d, %g) = %g: P(X<=k) there is %g; want %g", tt.k, tt.n, tt.alpha, ub, got, tt.alpha)
		}
		if ub <= float64(tt.k)/float64(tt.n) {
			t.Errorf("UpperBound(%d, %d, %g) = %g, not above the rate", tt.k, tt.n, tt.alpha, ub)
		}
	}
	if got, want := UpperBound(0, 300, 0.05), 1-math.Pow(0.05, 1.0/300); math.Abs(got-want) > 1e-12 {
		t.Errorf("UpperBound(0, 300, 0.05) = %g; want %g", got, want)
	}
	if UpperBound(3, 3, 0.05) != 1 || UpperBound(0, 0, 0.05) != 1 {
		t.Error("UpperBound with every request failed, or none sent, is not 1")
	}
}

// TestFisherLargeCounts: past exactTerms the Fisher tests sum outwards from
// the observed table and stop where the rest cannot matter; on tables the
// exact sums can still do, both ways agree to rounding, and tables of
// 2^40 requests (a forged report's) take milliseconds.
func TestFisherLargeCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	exactGreater := func(a, n, c, m int64) float64 {
		total, fails := n+m, a+c
		hi := min(n, fails)
		logDen := LogChoose(total, n)
		sum := 0.0
		for x := hi; x >= a; x-- {
			sum += math.Exp(LogChoose(fails, x) + LogChoose(total-fails, n-x) - logDen)
		}
		return min(1, sum)
	}
	exactTwo := func(a, n, c, m int64) float64 {
		total, fails := n+m, a+c
		lo, hi := max(0, fails-m), min(n, fails)
		logDen := LogChoose(total, n)
		logP := func(x int64) float64 { return LogChoose(fails, x) + LogChoose(total-fails, n-x) - logDen }
		obs, sum := logP(a), 0.0
		for x := lo; x <= hi; x++ {
			if lp := logP(x); lp <= obs+1e-7 {
				sum += math.Exp(lp)
			}
		}
		return min(1, sum)
	}
	// The sums of hundreds of thousands of terms, each from Lgamma, are
	// themselves off by about 1e-9; a relative 1e-6 is far below what any
	// p-value is read to.
	close := func(got, want float64) bool {
		return math.Abs(got-want) <= 1e-6*want || math.Abs(got-want) < 1e-12
	}
	for range 400 {
		n, m := 1+rng.Int64N(60000), 1+rng.Int64N(60000)
		rate := rng.Float64()
		a := int64(float64(n) * min(1, rate*(0.5+rng.Float64())))
		c := int64(float64(m) * rate)
		total, fails := n+m, a+c
		h := hyper{total, fails, n, max(0, fails-m), min(n, fails)}
		var got float64
		if a > h.mode() {
			got = min(1, h.sumFrom(a, +1))
		} else {
			got = min(1, max(0, 1-h.sumFrom(a-1, -1)))
		}
		if want := exactGreater(a, n, c, m); !close(got, want) {
			t.Fatalf("greater(%d, %d, %d, %d) = %g; want %g", a, n, c, m, got, want)
		}
		if got, want := h.twoSided(a), exactTwo(a, n, c, m); !close(got, want) {
			t.Fatalf("twoSided(%d, %d, %d, %d) = %g; want %g", a, n, c, m, got, want)
		}
	}
	start := time.Now()
	const big = int64(1) << 40
	for _, tt := range [][4]int64{{big / 2, big, big / 2, big}, {big / 3, big, big / 4, big}, {0, big, 1, big}, {big, big, 0, big}, {big / 1000, big / 2, big / 1000, big}} {
		p, q := FisherGreater(tt[0], tt[1], tt[2], tt[3]), FisherTwoSided(tt[0], tt[1], tt[2], tt[3])
		if !(p >= 0 && p <= 1 && q >= 0 && q <= 1) {
			t.Errorf("Fisher%v = %v, %v; want p-values", tt, p, q)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Fisher tests of 2^40 requests took %v; want well under a second each", d)
	}
}
