package stat

import "math"

// normalQuantile is the standard normal law's p-quantile (0 < p < 1), by
// bisection of math.Erfc: to 1e-12, for the one-sided z of a confidence.
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 100 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// MaxRequestsToProve is the most requests RequestsToBound and
// RequestsToQuantile consider: past them, a run proves nothing sooner.
const MaxRequestsToProve = 1_000_000_000

// RequestsToBound is how many requests a scope needs for the upper bound
// of its failure rate at level alpha (UpperBound) to be at or below limit,
// if it goes on failing k in n: the least n' ≥ n with
// UpperBound(k·n'/n, n', alpha) ≤ limit. It returns 0 when no n' up to
// MaxRequestsToProve does (a rate at or above the limit, or too near it).
func RequestsToBound(k, n int64, limit, alpha float64) int64 {
	if n <= 0 {
		k, n = 0, 1
	}
	rate := float64(k) / float64(n)
	if rate >= limit {
		return 0
	}
	ok := func(m int64) bool {
		return UpperBound(int64(math.Round(rate*float64(m))), m, alpha) <= limit
	}
	if rate == 0 {
		// 1 - alpha^(1/m) ≤ limit exactly when m ≥ log(alpha)/log(1-limit).
		m := int64(math.Ceil(math.Log(alpha) / math.Log1p(-limit)))
		if m > MaxRequestsToProve || limit <= 0 {
			return 0
		}
		for m > 1 && ok(m-1) { // the last rounding
			m--
		}
		for !ok(m) {
			m++
		}
		return max(m, n)
	}
	return smallest(n, ok)
}

// smallest is the least m ≥ from for which ok holds, supposing ok holds
// from some m on, and 0 when it holds for none up to MaxRequestsToProve.
func smallest(from int64, ok func(int64) bool) int64 {
	if ok(from) {
		return from
	}
	lo, hi := from, max(from, 1)*2 // ok(lo) is false
	for !ok(hi) {
		if hi >= MaxRequestsToProve {
			return 0
		}
		lo, hi = hi, min(hi*2, MaxRequestsToProve)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// QuantileUpperRank is the rank r (1-based) of the order statistic of n
// values that bounds the q-quantile (0 < q < 1) of the law they were drawn
// from from above at level alpha, whatever that law: the least r with
// P(B ≥ r) ≤ alpha for B, the number of values below the quantile,
// binomial(n, q); X(r) then lies at or above the quantile with probability
// 1 − alpha or more. ok is false when that rank is past n: too few values
// to bound the quantile (the 99th percentile at 95% needs 299).
func QuantileUpperRank(n int64, q, alpha float64) (r int64, ok bool) {
	if n <= 0 || !(q > 0 && q < 1) || !(alpha > 0 && alpha < 1) {
		return 0, false
	}
	nf := float64(n)
	sd := math.Sqrt(nf * q * (1 - q))
	if sd > 3000 { // the normal law, with a continuity correction
		r = int64(math.Ceil(nf*q + 0.5 + normalQuantile(1-alpha)*sd))
		return r, r <= n
	}
	// The terms of binomial(n, q) from the top of its mass down: the upper
	// tail is summed from where its terms become negligible.
	mode := min(int64(math.Floor((nf+1)*q)), n)
	peak := math.Exp(LogChoose(n, mode) + float64(mode)*math.Log(q) + float64(n-mode)*math.Log1p(-q))
	odds := q / (1 - q)
	top, t := mode, peak
	for top < n {
		next := t * float64(n-top) / float64(top+1) * odds
		if next < peak*1e-20 {
			break
		}
		top, t = top+1, next
	}
	// P(B ≥ u) for u from top down; r is one past the largest u whose tail
	// passes alpha.
	cum := 0.0
	for u := top; u >= 0; u-- {
		if cum += t; cum > alpha {
			return u + 1, u+1 <= n
		}
		t = t * float64(u) / float64(n-u+1) / odds
	}
	return 0, true // the whole law within alpha: any value bounds it
}

// RequestsToQuantile is how many values a scope needs for the upper bound
// of its q-quantile at level alpha (QuantileUpperRank) to be at or below a
// limit that a share of its values lie at or below: the least n' ≥ n with
// QuantileUpperRank(n') ≤ share·n'. It returns 0 when no n' up to
// MaxRequestsToProve does (a share at or below q).
func RequestsToQuantile(n int64, share, q, alpha float64) int64 {
	if share <= q {
		return 0
	}
	return smallest(max(n, 1), func(m int64) bool {
		r, ok := QuantileUpperRank(m, q, alpha)
		return ok && float64(r) <= math.Floor(share*float64(m)+1e-9)
	})
}

// SmallestProvable is the least failure rate f of a scope of n requests,
// against the rest's c failures of m, that a one-sided Fisher test at
// level each would find, with probability conf or more: the failures
// needed (the least a with FisherGreater(a, n, c, m) < each) come with
// probability conf at rate f. It returns 1 and false when not even n
// failures of n would be found.
func SmallestProvable(n, c, m int64, each, conf float64) (float64, bool) {
	if n <= 0 || m <= 0 || FisherGreater(n, n, c, m) >= each {
		return 1, false
	}
	lo, hi := int64(0), n // FisherGreater(hi) < each
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if FisherGreater(mid, n, c, m) < each {
			hi = mid
		} else {
			lo = mid
		}
	}
	need := hi
	if FisherGreater(0, n, c, m) < each {
		need = 0
	}
	if need == 0 {
		return 0, true
	}
	// P(B ≥ need) = 1 - P(B ≤ need-1) rises with f.
	flo, fhi := 0.0, 1.0
	for range 60 {
		f := (flo + fhi) / 2
		if 1-binomCDF(need-1, n, f) >= conf {
			fhi = f
		} else {
			flo = f
		}
	}
	return fhi, true
}
