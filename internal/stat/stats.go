package stat

import (
	"math"
)

// Round rounds v to d decimals.
func Round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// z95 is the two-sided 95% normal quantile.
const z95 = 1.959963984540054

// Wilson returns the Wilson score 95% interval of a proportion k/n.
func Wilson(k, n int64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = max(0, center-half), min(1, center+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// UpperBoundZero is the exact one-sided 95% upper bound of a failure rate
// when none of n requests failed (Clopper-Pearson; about 3/n, the "rule of
// three").
func UpperBoundZero(n int64) float64 {
	if n <= 0 {
		return 1
	}
	return 1 - math.Pow(0.05, 1/float64(n))
}

// UpperBound is the exact one-sided upper confidence bound of a failure
// rate at level alpha when k of n requests failed (Clopper-Pearson): the
// largest rate under which k or fewer failures have probability alpha or
// more. With k = 0 it is 1 - alpha^(1/n).
func UpperBound(k, n int64, alpha float64) float64 {
	switch {
	case n <= 0 || k >= n:
		return 1
	case k <= 0:
		return 1 - math.Pow(alpha, 1/float64(n))
	}
	lo, hi := float64(k)/float64(n), 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if binomCDF(k, n, mid) >= alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// binomCDF is P(X <= k) for X binomial(n, p). Only the tail on the far
// side of the mean from the mode is summed, from k outward by the terms'
// ratios, until the terms no longer count (below 1e-18 of the sum): the
// work is of the order of the law's spread, not of k. Past a spread of
// 3000 the normal law with a continuity correction stands in, within a
// hair of the sum there.
func binomCDF(k, n int64, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n || p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	nf := float64(n)
	if sd := math.Sqrt(nf * p * (1 - p)); sd > 3000 {
		return 0.5 * math.Erfc(-(float64(k)+0.5-nf*p)/(sd*math.Sqrt2))
	}
	odds := p / (1 - p)
	term := func(x int64) float64 {
		return math.Exp(LogChoose(n, x) + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
	}
	if float64(k) <= nf*p { // the lower tail falls away from k down
		sum := 0.0
		for x, t := k, term(k); x >= 0; x-- {
			sum += t
			if t < sum*1e-18 {
				break
			}
			t *= float64(x) / float64(n-x+1) / odds // term of x-1
		}
		return min(1, sum)
	}
	// The upper tail, from k+1 up: P(X <= k) is what it leaves.
	sum := 0.0
	for x, t := k+1, term(k+1); x <= n; x++ {
		sum += t
		if t < sum*1e-18 {
			break
		}
		t *= float64(n-x) / float64(x+1) * odds // term of x+1
	}
	return max(0, 1-sum)
}

// FisherGreater returns the one-sided p-value of Fisher's exact test that a
// group with a failures out of n fails more often than the rest, which has c
// failures out of m: the probability, with the margins fixed, of the group
// getting a or more of the a+c failures.
func FisherGreater(a, n, c, m int64) float64 {
	if n <= 0 || m <= 0 {
		return 1
	}
	total, fails := n+m, a+c
	hi := min(n, fails)
	lo := max(0, fails-m)
	if a < lo || a > hi {
		return 1
	}
	if hi-lo > exactTerms {
		h := hyper{total, fails, n, lo, hi}
		if a > h.mode() {
			return min(1, h.sumFrom(a, +1))
		}
		return min(1, max(0, 1-h.sumFrom(a-1, -1)))
	}
	logDen := LogChoose(total, n)
	sum := 0.0
	// Terms fall away from the mode; summing from the tail end keeps precision.
	for x := hi; x >= a; x-- {
		sum += math.Exp(LogChoose(fails, x) + LogChoose(total-fails, n-x) - logDen)
	}
	return min(1, sum)
}

// FisherTwoSided returns the two-sided p-value of Fisher's exact test for
// the table [[a, n-a], [c, m-c]]: the total probability of tables no more
// likely than the observed one.
func FisherTwoSided(a, n, c, m int64) float64 {
	if n <= 0 || m <= 0 {
		return 1
	}
	total, fails := n+m, a+c
	lo, hi := max(0, fails-m), min(n, fails)
	if hi-lo > exactTerms {
		return hyper{total, fails, n, lo, hi}.twoSided(a)
	}
	logDen := LogChoose(total, n)
	logP := func(x int64) float64 { return LogChoose(fails, x) + LogChoose(total-fails, n-x) - logDen }
	observed := logP(a)
	sum := 0.0
	for x := lo; x <= hi; x++ {
		if lp := logP(x); lp <= observed+1e-7 {
			sum += math.Exp(lp)
		}
	}
	return min(1, sum)
}

// exactTerms is the most terms the Fisher tests sum one by one, each
// from its logarithms. Past it (a scope of billions of requests, or a
// forged report's), they sum from the observed table outwards by the terms'
// ratios and stop where the rest cannot change a double: the same p, to
// rounding, in time that grows with the square root of the counts.
const exactTerms = 1 << 20

// hyper is the hypergeometric law of the failures among the n requests of
// a scope, of fails failures among total: its support is lo..hi.
type hyper struct{ total, fails, n, lo, hi int64 }

// mode is where the law's terms peak.
func (h hyper) mode() int64 {
	m := int64((float64(h.n) + 1) * (float64(h.fails) + 1) / (float64(h.total) + 2))
	return min(max(m, h.lo), h.hi)
}

// logP is the log of the probability of x.
func (h hyper) logP(x int64) float64 {
	return LogChoose(h.fails, x) + LogChoose(h.total-h.fails, h.n-x) - LogChoose(h.total, h.n)
}

// ratio is p(x+1)/p(x) (dir +1) or p(x-1)/p(x) (dir -1).
func (h hyper) ratio(x, dir int64) float64 {
	if dir > 0 {
		return float64(h.fails-x) * float64(h.n-x) / (float64(x+1) * float64(h.total-h.fails-h.n+x+1))
	}
	return float64(x) * float64(h.total-h.fails-h.n+x) / (float64(h.fails-x+1) * float64(h.n-x+1))
}

// sumFrom is the probability of x and everything past it in direction dir,
// x being on the side of the mode the terms fall away from.
func (h hyper) sumFrom(x, dir int64) float64 {
	if x < h.lo || x > h.hi {
		return 0
	}
	term, sum := math.Exp(h.logP(x)), 0.0
	for ; x >= h.lo && x <= h.hi && term > 0; x += dir {
		sum += term
		if term < sum*1e-17 {
			break
		}
		term *= h.ratio(x, dir)
	}
	return sum
}

// twoSided is the probability of the tables no more likely than x's.
func (h hyper) twoSided(x int64) float64 {
	mode := h.mode()
	observed := h.logP(x) + 1e-7
	// The other tail starts at the first value past the mode, on the
	// other side, no more likely than x: the terms are monotone there.
	var near, other float64
	if x >= mode {
		near = h.sumFrom(x, +1)
		lo, hi := h.lo, mode // the largest y <= mode with logP(y) <= observed
		if h.logP(lo) > observed {
			return min(1, near)
		}
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if h.logP(mid) <= observed {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo == x {
			lo--
		}
		other = h.sumFrom(lo, -1)
	} else {
		near = h.sumFrom(x, -1)
		lo, hi := mode, h.hi // the smallest y >= mode with logP(y) <= observed
		if h.logP(hi) > observed {
			return min(1, near)
		}
		for lo < hi {
			mid := lo + (hi-lo)/2
			if h.logP(mid) <= observed {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		other = h.sumFrom(hi, +1)
	}
	return min(1, near+other)
}

// lchoose is log(n choose k).
func LogChoose(n, k int64) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// GCD is the greatest common divisor of a and b (of non-negative numbers).
func GCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
