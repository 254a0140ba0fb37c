package stat

import (
	"math"
	"testing"
)

// tailAtLeast is P(B ≥ r) for B binomial(n, q), summed term by term.
func tailAtLeast(r, n int64, q float64) float64 {
	s := 0.0
	for x := r; x <= n; x++ {
		s += math.Exp(LogChoose(n, x) + float64(x)*math.Log(q) + float64(n-x)*math.Log1p(-q))
	}
	return s
}

func TestQuantileUpperRank(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		q, a  float64
		r     int64
		ok    bool
		brute bool
	}{
		{3, 0.99, 0.05, 4, false, true},
		{298, 0.99, 0.05, 299, false, true},
		{299, 0.99, 0.05, 299, true, true},
		{1000, 0.99, 0.05, 0, true, true},
		{20000, 0.99, 0.05, 0, true, true},
		{10, 0.5, 0.05, 0, true, true},
		{5000, 0.5, 0.01, 0, true, true},
	} {
		r, ok := QuantileUpperRank(tc.n, tc.q, tc.a)
		if ok != tc.ok || tc.r != 0 && r != tc.r {
			t.Errorf("QuantileUpperRank(%d, %v, %v) = %d, %v; want %d, %v", tc.n, tc.q, tc.a, r, ok, tc.r, tc.ok)
		}
		if tc.brute && ok {
			// r is the least rank whose upper tail is within alpha.
			if p := tailAtLeast(r, tc.n, tc.q); p > tc.a {
				t.Errorf("n=%d q=%v: P(B ≥ %d) = %v > %v", tc.n, tc.q, r, p, tc.a)
			}
			if p := tailAtLeast(r-1, tc.n, tc.q); p <= tc.a {
				t.Errorf("n=%d q=%v: P(B ≥ %d) = %v ≤ %v: rank %d is not the least", tc.n, tc.q, r-1, p, tc.a, r)
			}
		}
	}
	// The normal law past a spread of 3000 is within a rank or two of
	// the exact sum just below it.
	n := int64(900_000_000)
	r, ok := QuantileUpperRank(n, 0.99, 0.05)
	want := float64(n)*0.99 + 1.6449*math.Sqrt(float64(n)*0.99*0.01)
	if !ok || math.Abs(float64(r)-want) > 3 {
		t.Errorf("QuantileUpperRank(%d, 0.99, 0.05) = %d, %v; want about %.0f", n, r, ok, want)
	}
}

func TestRequestsToBound(t *testing.T) {
	for _, tc := range []struct {
		k, n         int64
		limit, alpha float64
		want         int64
	}{
		{0, 3, 0.001, 0.05, 2995},    // the rule of three: 3/0.001
		{0, 3, 0.01, 0.05, 299},      // 1 - 0.05^(1/299) = 0.00997
		{0, 5000, 0.001, 0.05, 5000}, // proven already
		{0, 3, 0.001, 0.01, 4603},    // 99%: log(0.01)/log(0.999)
		{5, 100, 0.05, 0.05, 0},      // measured at the limit: never
		{6, 100, 0.05, 0.05, 0},      // above it
	} {
		if got := RequestsToBound(tc.k, tc.n, tc.limit, tc.alpha); got != tc.want {
			t.Errorf("RequestsToBound(%d, %d, %v, %v) = %d, want %d", tc.k, tc.n, tc.limit, tc.alpha, got, tc.want)
		}
	}
	// With failures: the least n' whose bound at the same rate is within
	// the limit, and n'-1 is not.
	k, n, limit, alpha := int64(2), int64(1000), 0.005, 0.05
	m := RequestsToBound(k, n, limit, alpha)
	at := func(m int64) float64 {
		return UpperBound(int64(math.Round(float64(k)/float64(n)*float64(m))), m, alpha)
	}
	if m == 0 || at(m) > limit || at(m-1) <= limit && m-1 >= n {
		t.Errorf("RequestsToBound(2, 1000, 0.5%%) = %d: bound there %v, one less %v", m, at(m), at(m-1))
	}
}

func TestRequestsToQuantile(t *testing.T) {
	if got := RequestsToQuantile(3, 1, 0.99, 0.05); got != 299 {
		t.Errorf("every value within the limit: %d values needed, want 299", got)
	}
	if got := RequestsToQuantile(3, 0.99, 0.99, 0.05); got != 0 {
		t.Errorf("1%% of values past the limit: %d, want 0 (never)", got)
	}
	// 0.5% past the limit: n' where the upper rank is within 99.5% of it.
	m := RequestsToQuantile(100, 0.995, 0.99, 0.05)
	r, ok := QuantileUpperRank(m, 0.99, 0.05)
	r1, _ := QuantileUpperRank(m-1, 0.99, 0.05)
	if m == 0 || !ok || float64(r) > math.Floor(0.995*float64(m)) || float64(r1) <= math.Floor(0.995*float64(m-1)) {
		t.Errorf("RequestsToQuantile(share 99.5%%) = %d (rank %d), one less: rank %d", m, r, r1)
	}
}

func TestSmallestProvable(t *testing.T) {
	// 3 requests against 3: even 3 of 3 failing against 0 of 3 is p=0.05,
	// never below 0.001.
	if f, ok := SmallestProvable(3, 0, 3, 0.001, 0.95); ok || f != 1 {
		t.Errorf("3 against 3: %v, %v; want 1, false", f, ok)
	}
	// 1000 against 2000 without failures at 0.001/3: a handful of failures
	// is significant; the rate that brings them 95% of the time is a few
	// per thousand, and halving the requests raises it.
	f1000, ok := SmallestProvable(1000, 0, 2000, 0.001/3, 0.95)
	f500, _ := SmallestProvable(500, 0, 1000, 0.001/3, 0.95)
	if !ok || !(f1000 > 0.002 && f1000 < 0.03) || !(f500 > f1000) {
		t.Errorf("SmallestProvable 1000/2000 = %v, %v; 500/1000 = %v", f1000, ok, f500)
	}
	// At that rate the needed failures come with probability 0.95.
	need := int64(0)
	for FisherGreater(need, 1000, 0, 2000) >= 0.001/3 {
		need++
	}
	if p := 1 - binomCDF(need-1, 1000, f1000); math.Abs(p-0.95) > 1e-6 {
		t.Errorf("at %v, %d failures or more come with probability %v, want 0.95", f1000, need, p)
	}
}

// TestBinomCDF: the tail sums agree with the whole sum term by term, on
// both sides of the mean, and a bound of a million failures costs no more
// than one of a few.
func TestBinomCDF(t *testing.T) {
	whole := func(k, n int64, p float64) float64 {
		s := 0.0
		for x := int64(0); x <= k; x++ {
			s += math.Exp(LogChoose(n, x) + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
		}
		return s
	}
	for _, tc := range []struct {
		k, n int64
		p    float64
	}{{0, 10, 0.3}, {3, 10, 0.3}, {7, 10, 0.3}, {50, 1000, 0.04}, {50, 1000, 0.06}, {950, 1000, 0.96}, {2000, 100000, 0.0195}} {
		if got, want := binomCDF(tc.k, tc.n, tc.p), whole(tc.k, tc.n, tc.p); math.Abs(got-want) > 1e-9 {
			t.Errorf("binomCDF(%d, %d, %v) = %v, want %v", tc.k, tc.n, tc.p, got, want)
		}
	}
	// The exact bound of 630,000 failures in 63 million requests: about
	// 1%, at once.
	if b := UpperBound(630_000, 63_000_000, 0.05); !(b > 0.01 && b < 0.01003) {
		t.Errorf("UpperBound(630000, 63e6) = %v, want just above 1%%", b)
	}
	if b := UpperBound(1<<39, 1<<40, 0.05); !(b > 0.5 && b < 0.500001) {
		t.Errorf("UpperBound(2^39, 2^40) = %v, want just above 50%%", b)
	}
}
