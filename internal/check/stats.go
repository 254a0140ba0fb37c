package check

import (
	"math"
)

// Near reports whether got is within rel of want, relatively; for want 0,
// whether got is 0 to 1e-12.
func Near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// BinomialUpper is the smallest c with P(X > c) <= tail for X binomial(n,
// p): the false alarm tests' limit, above which a count of alarms among n
// runs at level p shows a rate above p, with error tail.
func BinomialUpper(n int, p, tail float64) int {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	cdf := 0.0
	for c := 0; c <= n; c++ {
		cdf += math.Exp(lg(n) - lg(c) - lg(n-c) + float64(c)*math.Log(p) + float64(n-c)*math.Log1p(-p))
		if 1-cdf <= tail {
			return c
		}
	}
	return n
}
