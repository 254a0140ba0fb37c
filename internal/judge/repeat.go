package judge

import (
	"math"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// RepeatResult says whether failures repeat on the connection they
// happened on: whether a request fails more often when its connection has
// failed before than when it has not.
type RepeatResult struct {
	// The counts over every stratum; the rates are those of the sentence
	// "after a failure on the same connection, 26 of 50 requests failed
	// (52%); after successes only, 6 of 150 (4%)".
	AfterFailure       int64      `json:"after_failure"`
	AfterFailureFailed int64      `json:"after_failure_failed"`
	AfterFailureRate   float64    `json:"after_failure_rate"`
	AfterFailureCI95   [2]float64 `json:"after_failure_ci95"`
	AfterOK            int64      `json:"after_ok"`
	AfterOKFailed      int64      `json:"after_ok_failed"`
	AfterOKRate        float64    `json:"after_ok_rate"`
	AfterOKCI95        [2]float64 `json:"after_ok_ci95"`
	// Strata counts the strata with both classes and both outcomes: the
	// only ones that weigh in the test.
	Strata int `json:"strata"`
	// P is the one-sided p-value of the exact conditional test of a
	// common odds ratio of 1 against one above 1, stratified. Method is
	// "exact"; with very many requests "normal" where p > 0.01, "bound"
	// (a Chernoff bound of the exact p, never below it) where smaller; ""
	// with nothing to test.
	P      float64 `json:"p"`
	Method string  `json:"method"`
}

// Significant reports whether failures repeat on their connection at
// level alpha.
func (r RepeatResult) Significant(alpha float64) bool { return r.P < alpha }

// RepeatTest tests whether failures stick to connections: whether requests after
// a failure on their connection fail more than those after successes only, in
// one stratum (at least a second and 32 requests, so failures that come and go
// do not count; see BurstTest). A request's class is fixed by the requests before
// it, so under independent failures both classes fail alike however connections
// end (counts per connection do not: see ClusterTest). H0 takes failing as alike
// at every position in a connection: with hundreds of requests a connection, a
// rate that grows with age reads as sticking. p: Zelen's exact test, one-sided,
// or below 0.01 a Chernoff bound when the convolution would take milliseconds.
func RepeatTest(strata []report.RepeatCounts) RepeatResult {
	ws := make([]report.MomentCounts, len(strata))
	for i, s := range strata {
		ws[i] = report.MomentCounts{RepeatCounts: s, Strata: 1}
	}
	return repeatTest(ws)
}

// MomentTest is RepeatTest on strata of requests sent at the same moment
// (report.Conns.Moments), each shape weighing as many strata as it counts.
// Significant, it says that connections open at the same moment differ:
// those that failed before fail again while the others do not, which a
// failing moment (an outage, a flapping backend) cannot do, as it fails
// every connection open then alike.
func MomentTest(moments []report.MomentCounts) RepeatResult { return repeatTest(moments) }

// repeatTest is RepeatTest over weighted strata: Strata copies of each.
func repeatTest(strata []report.MomentCounts) RepeatResult {
	var r RepeatResult
	r.P = 1
	type hyper struct{ n, k, draws, obs, w, lo, hi int64 } // lo, hi: the values it can take
	var hs []hyper
	for _, s := range strata {
		w := s.Strata
		if w <= 0 {
			continue
		}
		a, af := max(s.AfterFailure, 0), min(max(s.AfterFailureFailed, 0), max(s.AfterFailure, 0))
		b, bf := max(s.AfterOK, 0), min(max(s.AfterOKFailed, 0), max(s.AfterOK, 0))
		r.AfterFailure += w * a
		r.AfterFailureFailed += w * af
		r.AfterOK += w * b
		r.AfterOKFailed += w * bf
		if k := af + bf; a > 0 && b > 0 && k > 0 && k < a+b {
			hs = append(hs, hyper{n: a + b, k: k, draws: a, obs: af, w: w, lo: max(0, k-b), hi: min(a, k)})
			r.Strata += int(w)
		}
	}
	r.AfterFailureRate, r.AfterFailureCI95 = RateCI95(r.AfterFailureFailed, r.AfterFailure)
	r.AfterOKRate, r.AfterOKCI95 = RateCI95(r.AfterOKFailed, r.AfterOK)
	if len(hs) == 0 {
		return r
	}
	// Each stratum's law: hypergeometric given its margins, as offsets
	// from its smallest value.
	pmfs := make([][]float64, len(hs))
	weights := make([]int64, len(hs))
	var lo, obs, cells int64
	var mean, variance float64
	for _, h := range hs {
		cells += h.hi - h.lo + 1
		lo += h.w * h.lo
		obs += h.w * h.obs
		n, k, d, w := float64(h.n), float64(h.k), float64(h.draws), float64(h.w)
		mean += w * (d*k/n - float64(h.lo))
		variance += w * d * k / n * (n - k) / n * (n - d) / (n - 1)
	}
	top := obs - lo
	pn := normalTail((float64(top) - mean - 0.5) / math.Sqrt(variance)) // the normal law's p
	if cells > repeatMaxCells {
		// Strata too large to hold their laws (a forged report's, or
		// billions of requests): the normal law.
		r.P, r.Method = max(min(1, pn), minReportedP), "normal"
		return r
	}
	for i, h := range hs {
		den := stat.LogChoose(h.n, h.draws)
		pmf := make([]float64, h.hi-h.lo+1)
		for x := h.lo; x <= h.hi; x++ {
			pmf[x-h.lo] = math.Exp(stat.LogChoose(h.k, x) + stat.LogChoose(h.n-h.k, h.draws-x) - den)
		}
		pmfs[i], weights[i] = pmf, h.w
	}
	// The exact convolution costs about Σ (stratum range × offsets
	// reachable so far).
	var cost, reach int64
	for i, pmf := range pmfs {
		for range weights[i] {
			cost += int64(len(pmf)) * (min(reach, top) + 1)
			reach += int64(len(pmf)) - 1
			if cost > repeatExactWork {
				break
			}
		}
	}
	switch {
	case cost <= repeatExactWork:
		r.P, r.Method = repeatExact(pmfs, weights, top), "exact"
	default:
		// Too large to convolve: the normal law where p is far from any
		// threshold, else a Chernoff bound, which can only overstate p.
		if pn > 0.01 {
			r.P, r.Method = pn, "normal"
		} else {
			r.P, r.Method = chernoffSum(pmfs, weights, top, mean), "bound"
		}
	}
	r.P = max(min(1, r.P), minReportedP)
	return r
}

// repeatExactWork bounds RepeatTest's exact convolution, in cell updates.
const repeatExactWork = 4_000_000

// repeatMaxCells bounds the strata's laws RepeatTest holds, in values:
// 32 MB of them.
const repeatMaxCells = 1 << 22

// repeatExact is P(Σ X_i ≥ top) for independent X_i with the given laws
// (pmfs[i] weights[i] times over) on
// 0, 1, …: a convolution in which every sum at or past top is merged into
// one absorbing cell (sums only grow), over the sums reachable so far.
func repeatExact(pmfs [][]float64, weights []int64, top int64) float64 {
	dist := make([]float64, top+1)
	next := make([]float64, top+1)
	dist[0] = 1
	var reach int64
	for i, pmf := range pmfs {
		for range weights[i] {
			clear(next[:min(reach+int64(len(pmf)), top+1)])
			for x, q := range pmf {
				for i, d := range dist[:min(reach, top)+1] {
					if d != 0 {
						next[min(int64(i+x), top)] += d * q
					}
				}
			}
			reach += int64(len(pmf)) - 1
			dist, next = next, dist
		}
	}
	return dist[top]
}

// chernoffSum bounds P(Σ X_i ≥ top), X_i of law pmfs[i] weights[i] times over, by min over λ ≥ 0 of
// exp(-λ top) Π E[exp(λ X_i)], found by Newton's method on the convex
// exponent, bisection when a step leaves the bracket. Any λ gives a valid
// bound, so an approximate minimum only loosens it.
func chernoffSum(pmfs [][]float64, weights []int64, top int64, mean float64) float64 {
	t := float64(top)
	if t <= mean {
		return 1
	}
	eval := func(lam float64) (f, d1, d2 float64) {
		f, d1 = -lam*t, -t
		for i, pmf := range pmfs {
			wt := float64(weights[i])
			shift := lam * float64(len(pmf)-1) // the largest exponent, if λ ≥ 0
			var z, e1, e2 float64
			for x, q := range pmf {
				w := q * math.Exp(lam*float64(x)-shift)
				z += w
				e1 += w * float64(x)
				e2 += w * float64(x) * float64(x)
			}
			if z == 0 {
				return math.Inf(1), 0, 0
			}
			f += wt * (shift + math.Log(z))
			m := e1 / z
			d1 += wt * m
			d2 += wt * (e2/z - m*m)
		}
		return f, d1, d2
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		if _, d, _ := eval(hi); d >= 0 || hi > 1e4 {
			break
		}
		lo, hi = hi, 2*hi
	}
	best := 0.0 // f(0) = 0: the trivial bound 1
	lam := (lo + hi) / 2
	for range 60 {
		f, d1, d2 := eval(lam)
		best = min(best, f)
		if math.Abs(d1) < 1e-9*t {
			break
		}
		if d1 < 0 {
			lo = lam
		} else {
			hi = lam
		}
		next := lam - d1/d2
		if d2 <= 0 || next <= lo || next >= hi {
			next = (lo + hi) / 2
		}
		lam = next
	}
	return math.Exp(best)
}
