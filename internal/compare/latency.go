package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Latency changes of one scope (LatencyChange.Change and
// QuantileChange.Change).
const (
	LatencySlower = "slower"
	LatencyFaster = "faster"
	LatencySame   = "same"
)

// Tolerance is the practical minimum of a latency change: a percentile
// that moved by no more than both Ratio times its value before and MS
// milliseconds has not changed, however significant the move. The ratio
// keeps the jitter of a fast backend (a few percent of a loopback's 0.3 ms)
// and the run-to-run spread of a slow one from counting; the floor keeps
// scheduling noise on the client's machine (a millisecond or two) from
// counting where the ratio of a fast answer is tiny. So 50 ms added to a
// 0.3 ms answer is a change, a 2% jitter never is.
type Tolerance struct {
	// Ratio is the share of the percentile before: 0.2 for 20%.
	Ratio float64 `json:"ratio"`
	// MS is the floor, in milliseconds.
	MS float64 `json:"ms"`
}

// DefaultTolerance is 20% and 2 ms: a change must pass both. 20% is well
// outside the spread of a healthy backend's median from one run to the
// next, and 2 ms is the floor the verdict's own latency test uses
// (judge.SlowMinDiff), above scheduling noise.
var DefaultTolerance = Tolerance{Ratio: 0.2, MS: float64(judge.SlowMinDiff.Milliseconds())}

// Of is the largest change of a percentile of beforeMS that is no change.
func (t Tolerance) Of(beforeMS float64) float64 { return max(t.Ratio*beforeMS, t.MS) }

// String is the tolerance as --max-latency-increase takes it: "20%,2ms",
// "10%", "5ms", or "0" for none.
func (t Tolerance) String() string {
	var parts []string
	if t.Ratio > 0 {
		parts = append(parts, strconv.FormatFloat(t.Ratio*100, 'f', -1, 64)+"%")
	}
	if t.MS > 0 {
		parts = append(parts, strconv.FormatFloat(t.MS, 'f', -1, 64)+"ms")
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ",")
}

// Words says the tolerance in a sentence: "both 20% of its value before
// and 2ms", "20% of its value before", "2ms", "nothing".
func (t Tolerance) Words() string {
	pct := strconv.FormatFloat(t.Ratio*100, 'f', -1, 64) + "% of its value before"
	ms := strconv.FormatFloat(t.MS, 'f', -1, 64) + "ms"
	switch {
	case t.Ratio > 0 && t.MS > 0:
		return "both " + pct + " and " + ms
	case t.Ratio > 0:
		return pct
	case t.MS > 0:
		return ms
	}
	return "nothing"
}

// LatencyChange is how a scope's latency changed at p50 (judge's SlowerTest,
// Mann-Whitney both ways: the bulk shifting) and at p99 (Fisher's exact test of
// each side's requests at or above the joint 99th percentile: the slowest
// slowing where the median does not move). A percentile is slower when its test
// is significant (below AlphaEach) and it grew by more than
// Comparison.MaxLatencyIncrease; faster alike. Histograms hold failed requests
// too, so latency is tested only where the failure rates are within 10 points
// (a 502 in 1 ms that became a 200 in 80 ms is no slowdown).
type LatencyChange struct {
	// Tested is set when latency was tested (see Untested otherwise); its
	// two tests count toward Comparisons.
	Tested bool `json:"tested"`
	// Untested says why a scope probed on both sides (or tested against a
	// baseline) was not tested for latency; absent otherwise.
	Untested string `json:"untested,omitempty"`
	// Change is "slower" when p50 or p99 is, "faster" when one is and
	// neither is slower, else "same".
	Change string         `json:"change"`
	P50    QuantileChange `json:"p50"`
	P99    QuantileChange `json:"p99"`
}

// QuantileChange is how one percentile of a scope's latency changed.
type QuantileChange struct {
	// BeforeMS and AfterMS are the percentile before (for an added scope,
	// its baseline's) and after, in milliseconds; 0 on a side not probed.
	// ChangeMS is AfterMS - BeforeMS.
	BeforeMS float64 `json:"before_ms"`
	AfterMS  float64 `json:"after_ms"`
	ChangeMS float64 `json:"change_ms"`
	// ToleranceMS is the largest change that is no change: the tolerance's
	// ratio of BeforeMS, or its floor if that is more.
	ToleranceMS float64 `json:"tolerance_ms"`
	// PSlower and PFaster are the one-sided p of after being slower, and
	// faster, than before; 1 when untested.
	PSlower float64 `json:"p_slower"`
	PFaster float64 `json:"p_faster"`
	// MinP is the least p its test could give with these requests, the
	// way the percentile moved (slower when it did not): for the p50,
	// Mann-Whitney's when every request of one side is slower than every
	// one of the other; for the p99, Fisher's when every request in the
	// slowest part of both sides together (as many as the test counted
	// there) is of one side. When it is not below the comparison's
	// AlphaEach, the test cannot find a change of this percentile whatever
	// happened: too few requests (see CannotTell). 1 when untested.
	MinP float64 `json:"min_p,omitempty"`
	// RequestsToTell is, when the test cannot tell, about how many
	// requests a side would let it (bring MinP below AlphaEach); absent
	// otherwise, and past maxToTell.
	RequestsToTell int64 `json:"requests_to_tell,omitempty"`
	// Change is "slower", "faster" or "same".
	Change string `json:"change"`
}

// quantile is one percentile of a LatencyChange: its name, its level and
// how it changed.
type quantile struct {
	name string
	p    float64
	q    *QuantileChange
}

// quantiles are l's p50 and p99.
func (l *LatencyChange) quantiles() []quantile {
	return []quantile{{"p50", 0.5, &l.P50}, {"p99", 0.99, &l.P99}}
}

// CannotTell reports whether the test of q, one of l's percentiles, was
// made but could not have found a change at the level alphaEach with so
// few requests, whatever happened: its "same" says nothing then.
func (l *LatencyChange) CannotTell(q *QuantileChange, alphaEach float64) bool {
	return l.Tested && q.MinP >= alphaEach
}

// maxFailureShift is the largest difference of the failure rates of two
// sides whose latencies are compared.
const maxFailureShift = 0.1

// untestedLatency is the latency of a scope not tested for it: the
// percentiles of each side probed.
func untestedLatency(b, a *Side) LatencyChange {
	l := LatencyChange{Change: LatencySame,
		P50: QuantileChange{PSlower: 1, PFaster: 1, MinP: 1, Change: LatencySame},
		P99: QuantileChange{PSlower: 1, PFaster: 1, MinP: 1, Change: LatencySame}}
	if b != nil {
		l.P50.BeforeMS, l.P99.BeforeMS = b.P50MS, b.P99MS
	}
	if a != nil {
		l.P50.AfterMS, l.P99.AfterMS = a.P50MS, a.P99MS
	}
	if b != nil && a != nil {
		l.P50.ChangeMS = stat.Round(a.P50MS-b.P50MS, 3)
		l.P99.ChangeMS = stat.Round(a.P99MS-b.P99MS, 3)
	}
	return l
}

// hist is one scope's latency histogram, its counts bucket by bucket (in
// a buffer lent from scope to scope) and how many values they hold: every
// test and interval of a comparison reads the counts, none needs an hdr
// histogram, whose recording would cost more than the decoding.
type hist struct {
	sc     *report.Scratch // its Counts; its H stays empty
	n      int64
	lo, hi int // the first and last bucket that holds a value (n > 0)
}

func newHist() *hist { return &hist{sc: report.NewScratch()} }

// reset empties h: only its buckets in use, a few of the layout's 23,552,
// whose clearing for every scope would cost more than reading the scope.
func (h *hist) reset() {
	if h.n > 0 {
		clear(h.sc.Counts[h.lo : h.hi+1])
	}
	h.n = 0
}

// add adds the histogram enc; false, h emptied, when it does not decode.
func (h *hist) add(enc string) bool {
	n, lo, hi, err := h.sc.Tally(enc)
	if err != nil {
		clear(h.sc.Counts) // what was tallied may lie anywhere
		h.n = 0
		return false
	}
	switch {
	case n == 0:
	case h.n == 0:
		h.lo, h.hi = lo, hi
	default:
		h.lo, h.hi = min(h.lo, lo), max(h.hi, hi)
	}
	h.n += n
	return true
}

// atRanks writes to out the value at each rank (1-based, ascending) of h's
// values, in microseconds, as hdr reads a percentile: the greatest value
// of the bucket that holds it.
func (h *hist) atRanks(ranks []int64, out []int64) {
	var cum int64
	k := 0
	for idx := h.lo; idx <= h.hi; idx++ {
		cum += h.sc.Counts[idx]
		for k < len(ranks) && ranks[k] <= cum {
			_, out[k] = h.sc.Bucket(idx)
			k++
		}
		if k == len(ranks) {
			return
		}
	}
}

// rank is the rank hdr reads the q-quantile (0 ≤ q ≤ 1) of n values at.
func rank(q float64, n int64) int64 { return min(max(int64(q*float64(n)+0.5), 1), n) }

// latencyTest tests the latency of b against a's, their histograms hb and
// ha (empty where they did not decode).
func latencyTest(b, a *Side, hb, ha *hist) LatencyChange {
	l := untestedLatency(b, a)
	switch {
	case hb.n == 0 || ha.n == 0:
		l.Untested = "no latency histogram"
		return l
	case math.Abs(a.FailureRate-b.FailureRate) >= maxFailureShift:
		l.Untested = fmt.Sprintf("its failure rate moved from %s to %s, and the latencies hold the failures'", words.PctRate(b.FailureRate), words.PctRate(a.FailureRate))
		return l
	}
	l.Tested = true
	// Only the buckets either side holds values in.
	lo, hi := min(hb.lo, ha.lo), max(hb.hi, ha.hi)
	cb, ca := hb.sc.Counts[lo:hi+1], ha.sc.Counts[lo:hi+1]
	l.P50.PSlower, l.P50.PFaster = judge.MannWhitney(ca, cb, ha.n, hb.n)
	var tail int64
	l.P99.PSlower, l.P99.PFaster, tail = tailTest(cb, ca, 0.99)
	slower := func(q *QuantileChange) bool { return q.ChangeMS >= 0 }
	l.P50.MinP = separatedMW(ha.n, hb.n, slower(&l.P50))
	l.P99.MinP = allInTail(tail, ha.n, hb.n, slower(&l.P99))
	return l
}

// separatedMW is the least p of the Mann-Whitney test of na values after
// and nb before: every value after above every one before when slower is
// set, below otherwise.
func separatedMW(na, nb int64, slower bool) float64 {
	if slower {
		p, _ := judge.MannWhitney([]int64{0, na}, []int64{nb, 0}, na, nb)
		return p
	}
	_, p := judge.MannWhitney([]int64{na, 0}, []int64{0, nb}, na, nb)
	return p
}

// allInTail is the least p of the tail test when tail values of na after
// and nb before lie in the slowest part: as many of them after's as can
// be when slower is set, before's otherwise.
func allInTail(tail, na, nb int64, slower bool) float64 {
	if !slower {
		na, nb = nb, na
	}
	in := min(tail, na)
	return stat.FisherGreater(in, na, tail-in, nb)
}

// maxToTell bounds the requests a side RequestsToTell looks at.
const maxToTell = 10_000_000

// requestsToTell is about how many requests a side (both sides alike)
// would let the test of the q-quantile (0.5: Mann-Whitney; 0.99: the tail
// test, its slowest part as many values as distinct ones leave) reach a p
// below alpha: the least such n found by doubling, then halving the gap
// (the least p falls as n grows, near enough); 0 past maxToTell.
func requestsToTell(q, alpha float64) int64 {
	minP := func(n int64) float64 {
		if q == 0.5 {
			return separatedMW(n, n, true)
		}
		return allInTail(2*n-rank(q, 2*n)+1, n, n, true)
	}
	hi := int64(1)
	for minP(hi) >= alpha {
		if hi >= maxToTell {
			return 0
		}
		hi *= 2
	}
	lo := hi / 2
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; minP(mid) < alpha {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// tailTest is the one-sided p of after's values (counts a, by bucket) lying in
// the joint slowest part more often than before's (counts b), and of less often:
// Fisher's exact test of each side's values from the bucket of the joint
// q-quantile up. Under H0 which joint values are after's is a random draw, so it
// is exact for any law, ties included. The quantile's bucket counts whole, so at
// least 1-q of the values are counted however many share it.
func tailTest(b, a []int64, q float64) (pSlower, pFaster float64, tail int64) {
	var nb, na int64
	for i := range b {
		nb += b[i]
		na += a[i]
	}
	n := nb + na
	if nb == 0 || na == 0 {
		return 1, 1, 0
	}
	r := rank(q, n) // as the histograms rank a percentile
	var cum, cb, ca int64
	for i := range b {
		if cum+b[i]+a[i] >= r {
			break
		}
		cum += b[i] + a[i]
		cb += b[i]
		ca += a[i]
	}
	tb, ta := nb-cb, na-ca // from the quantile's bucket up
	return stat.FisherGreater(ta, na, tb, nb), stat.FisherGreater(tb, nb, ta, na), ta + tb
}

// decide says which percentiles changed, at the comparison's level each
// and by more than the tolerance. A scope tested against a baseline (an
// added endpoint) can be slower than what stood in its place, not faster:
// that is no change of the scope.
func (l *LatencyChange) decide(alphaEach float64, tol Tolerance, baseline bool) {
	l.Change = LatencySame
	for _, x := range l.quantiles() {
		q := x.q
		q.ToleranceMS = stat.Round(tol.Of(q.BeforeMS), 3)
		q.Change = LatencySame
		q.RequestsToTell = 0
		if l.CannotTell(q, alphaEach) {
			q.RequestsToTell = requestsToTell(x.p, alphaEach)
		}
		switch {
		case !l.Tested:
		case q.PSlower < alphaEach && q.ChangeMS > q.ToleranceMS:
			q.Change = LatencySlower
		case q.PFaster < alphaEach && -q.ChangeMS > q.ToleranceMS && !baseline:
			q.Change = LatencyFaster
		}
	}
	switch {
	case l.P50.Change == LatencySlower || l.P99.Change == LatencySlower:
		l.Change = LatencySlower
	case l.P50.Change == LatencyFaster || l.P99.Change == LatencyFaster:
		l.Change = LatencyFaster
	}
}

// quantileCIs sets the 95% intervals of side's p50 and p99 from h, the
// histogram of s (its figures), where it holds enough requests for them:
// the order statistics of QuantileCI95, read as the histogram reads a
// percentile, within the scope's least and greatest latency as its
// percentiles are.
func quantileCIs(side *Side, s *report.Stats, h *hist) *Side {
	lo50, hi50, ok50 := stat.QuantileCI95(h.n, 0.5)
	lo99, hi99, ok99 := stat.QuantileCI95(h.n, 0.99)
	if !ok50 {
		return side // too few for either
	}
	ranks := []int64{lo50, hi50, lo99, hi99}
	if !ok99 {
		ranks = ranks[:2]
	}
	// Ascending for one walk of the buckets: the p99's interval lies above
	// the median's wherever it exists (368 values or more).
	var v [4]int64
	h.atRanks(ranks, v[:len(ranks)])
	ms := func(us int64, point float64, lower bool) float64 {
		x := min(max(report.MicrosToMillis(us), s.LatencyMS.Min), s.LatencyMS.Max)
		if lower {
			return min(x, point)
		}
		return max(x, point)
	}
	side.P50CI95MS = &[2]float64{ms(v[0], side.P50MS, true), ms(v[1], side.P50MS, false)}
	if ok99 {
		side.P99CI95MS = &[2]float64{ms(v[2], side.P99MS, true), ms(v[3], side.P99MS, false)}
	}
	return side
}
