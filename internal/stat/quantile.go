package stat

import "math"

// QuantileCI95 returns the ranks (1-based, lo ≤ hi) of the order statistics that
// bound the q-quantile (0 < q < 1) with at least 95% confidence, whatever the
// law: of n values, how many lie at or below it is binomial(n, q), and lo and hi
// each leave at most 2.5% out. ok is false when n is too small (p99 needs 368
// values, the median 6). Terms are summed exactly out from the mode while the
// spread √(nq(1-q)) is under 3000; past it, by the normal law (within a rank).
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
	// negligible part of the law lies: walked out from the mode by their
	// ratios to the window's ends, then summed back in from each end,
	// nothing stored (a comparison takes thousands of these).
	mode := min(int64(math.Floor((nf+1)*q)), n)
	peak := math.Exp(LogChoose(n, mode) + float64(mode)*math.Log(q) + float64(n-mode)*math.Log1p(-q))
	odds := q / (1 - q)
	down := func(x int64, t float64) float64 { return t * float64(x) / float64(n-x+1) / odds } // term of x-1
	up := func(x int64, t float64) float64 { return t * float64(n-x) / float64(x+1) * odds }   // term of x+1
	first, tFirst := mode, peak                                                                // the lowest value in the window, and its term
	for first > 0 {
		t := down(first, tFirst)
		if t < peak*1e-20 {
			break
		}
		first, tFirst = first-1, t
	}
	last, tLast := mode, peak // the highest
	for last < n {
		t := up(last, tLast)
		if t < peak*1e-20 {
			break
		}
		last, tLast = last+1, t
	}
	// lo: the smallest k whose P(B ≤ k) passes the tail is lo's rank less
	// one; below the window P(B ≤ k) is negligible.
	lo = first
	cum := 0.0
	for k, t := first, tFirst; k <= last; k++ {
		if k == mode {
			t = peak
		}
		if cum += t; cum > tail {
			break
		}
		lo = k + 1
		t = up(k, t)
	}
	// hi: the largest u whose P(B ≥ u) passes the tail is hi's rank less one.
	hi = last + 1
	cum = 0.0
	for u, t := last, tLast; u >= first; u-- {
		if u == mode {
			t = peak
		}
		if cum += t; cum > tail {
			break
		}
		hi = u
		t = down(u, t)
	}
	return lo, hi, lo >= 1 && hi <= n
}
