package stat

import "math"

// QuantileCI95 returns the ranks (1-based, lo ≤ hi) of the order
// statistics that bound the q-quantile (0 < q < 1) of the law n values
// were drawn from with at least 95% confidence, whatever that law: the
// binomial order-statistic interval. The number of values at or below the
// true quantile is binomial(n, q), so [X(lo), X(hi)] misses it with
// probability P(B < lo) + P(B ≥ hi), each made at most 2.5%: lo is the
// largest rank with P(B ≤ lo-1) ≤ 0.025, hi the smallest with P(B ≥ hi) ≤
// 0.025. ok is false when n is too small for both ranks to lie within 1..n
// (the 99th percentile needs 368 values, the median 6).
//
// The binomial terms are summed exactly, outward from the mode by their
// ratios, while the spread (√(n·q·(1-q))) is under 3000; past it, by the
// normal law with a continuity correction, which is then within a rank.
func QuantileCI95(n int64, q float64) (lo, hi int64, ok bool) {
	if n <= 0 || !(q > 0 && q < 1) {
		return 0, 0, false
	}
	const tail = 0.025
	nf := float64(n)
	sd := math.Sqrt(nf * q * (1 - q))
	if sd > 3000 {
		mean := nf * q
		lo = int64(math.Floor(mean-0.5-z95*sd)) + 1
		hi = int64(math.Ceil(mean + 0.5 + z95*sd))
		return lo, hi, lo >= 1 && hi <= n
	}
	// The terms of binomial(n, q) around its mode, where all but a
	// negligible part of the law lies.
	mode := min(int64(math.Floor((nf+1)*q)), n)
	peak := math.Exp(LogChoose(n, mode) + float64(mode)*math.Log(q) + float64(n-mode)*math.Log1p(-q))
	odds := q / (1 - q)
	var left []float64 // left[i] is the term of mode-1-i
	for x, t := mode, peak; x > 0; x-- {
		t *= float64(x) / float64(n-x+1) / odds // term of x-1
		if t < peak*1e-20 {
			break
		}
		left = append(left, t)
	}
	var right []float64 // right[i] is the term of mode+1+i
	for x, t := mode, peak; x < n; x++ {
		t *= float64(n-x) / float64(x+1) * odds // term of x+1
		if t < peak*1e-20 {
			break
		}
		right = append(right, t)
	}
	// lo: the smallest k whose P(B ≤ k) passes the tail is lo's rank less
	// one; below the window P(B ≤ k) is negligible.
	first := mode - int64(len(left)) // the lowest value in the window
	lo = first
	cum := 0.0
	for k := first; ; k++ {
		if k < mode {
			cum += left[mode-1-k]
		} else if k == mode {
			cum += peak
		} else {
			cum += right[k-mode-1]
		}
		if cum > tail {
			break
		}
		lo = k + 1
	}
	// hi: the largest u whose P(B ≥ u) passes the tail is hi's rank less one.
	last := mode + int64(len(right))
	hi = last + 1
	cum = 0.0
	for u := last; ; u-- {
		if u > mode {
			cum += right[u-mode-1]
		} else if u == mode {
			cum += peak
		} else {
			cum += left[mode-1-u]
		}
		if cum > tail {
			break
		}
		hi = u
	}
	return lo, hi, lo >= 1 && hi <= n
}
