package judge

import (
	"iter"
	"math"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The practical rule of SlowerTest: a scope is slow only where its latency is at
// least SlowRatio times the rest's and SlowMinDiff above it at the same
// percentile, over at least SlowMinShare of the percentiles. With many requests
// Mann-Whitney finds any difference (::1 against 127.0.0.1 on loopback, healthy
// backends 10% apart); 1.5× is outside healthy spread, 2 ms above scheduling
// noise. A share of percentiles catches one slow instance in four (25%), where a
// bimodal latency moving a few points shifts only a few percentiles.
const (
	SlowRatio    = 1.5
	SlowMinDiff  = 2 * time.Millisecond
	SlowMinShare = 0.2
)

// Reasons a scope is not slow.
const (
	SlowNoData         = "no data"
	SlowNotSignificant = "not significant"
	SlowTooSmall       = "difference too small"
)

// exactMWCells bounds n·m for the exact Mann-Whitney law.
const exactMWCells = 400

// SlowerTest tests whether scope's latencies are higher than rest's, both
// histograms of microseconds with the same geometry (every pinprobe
// histogram has it). The test is a one-sided Mann-Whitney U on the
// histograms' buckets, values in one bucket being ties: exact (the
// permutation law given the ties) when n·m ≤ 400, otherwise the normal
// approximation with tie correction and continuity correction. A
// significant result is slow only if the difference is also large enough to
// matter, by the rule of SlowRatio, SlowMinDiff and SlowMinShare.
func SlowerTest(scope, rest *hdr.Histogram, alpha float64) report.SlowResult {
	if scope == nil || rest == nil {
		return slowerTest(nil, nil, nil, alpha)
	}
	return slowerTest(scope, rest, tieGroups(scope, rest), alpha)
}

// histTest is slowerTest of two sparse histograms of pinprobe's latency
// layout; nil when either is.
func histTest(scope, rest *report.Hist, alpha float64) report.SlowResult {
	if scope == nil || rest == nil {
		return slowerTest(nil, nil, nil, alpha)
	}
	return slowerTest(scope, rest, histTieGroups(scope, rest), alpha)
}

// quantiles is what slowerTest reads of a histogram beyond its tie groups:
// hdr.Histogram's and report.Hist's.
type quantiles interface {
	TotalCount() int64
	ValueAtPercentilesSlice([]float64) []int64
}

// slowerTest is SlowerTest of scope and rest (nil: no data), groups their
// tie groups in value order.
func slowerTest(scope, rest quantiles, groups iter.Seq[tieGroup], alpha float64) report.SlowResult {
	r := report.SlowResult{P: 1, Method: "none", Reason: SlowNoData}
	if scope == nil || rest == nil {
		return r
	}
	r.Requests, r.RestRequests = scope.TotalCount(), rest.TotalCount()
	if r.Requests == 0 || r.RestRequests == 0 {
		return r
	}
	grid := make([]float64, 0, 103)
	for i := range 100 {
		grid = append(grid, float64(i)+0.5)
	}
	grid = append(grid, 50, 90, 99)
	sq, rq := scope.ValueAtPercentilesSlice(grid), rest.ValueAtPercentilesSlice(grid)
	r.MedianMS, r.RestMedianMS = report.MicrosToMillis(sq[100]), report.MicrosToMillis(rq[100])
	r.P90MS, r.RestP90MS = report.MicrosToMillis(sq[101]), report.MicrosToMillis(rq[101])
	r.P99MS, r.RestP99MS = report.MicrosToMillis(sq[102]), report.MicrosToMillis(rq[102])
	if rq[100] > 0 {
		r.Ratio = stat.Round(float64(sq[100])/float64(rq[100]), 3)
	}
	minDiff := SlowMinDiff.Microseconds()
	slower := 0
	for i := range 100 {
		if float64(sq[i]) >= SlowRatio*float64(rq[i]) && sq[i]-rq[i] >= minDiff {
			slower++
		}
	}
	r.Share = float64(slower) / 100

	exact := r.Requests <= exactMWCells/r.RestRequests // n·m ≤ 400, without the product's overflow
	n1, n2 := float64(r.Requests), float64(r.RestRequests)
	u, ties, kept := mwSums(groups, exact)
	r.Superiority = stat.Round(u/(n1*n2), 6)
	if exact {
		r.P, r.Method = exactMannWhitney(kept, r.Requests, r.RestRequests, u), "exact"
	} else {
		r.P, r.Method = normalMW(n1, n2, u, ties), "normal"
	}
	r.Significant = r.P < alpha
	switch {
	case !r.Significant:
		r.Reason = SlowNotSignificant
	case r.Share < SlowMinShare:
		r.Reason = SlowTooSmall
	default:
		r.Slow, r.Reason = true, ""
	}
	return r
}

// tieGroup is one histogram bucket with a values of the scope and b of the
// rest in it.
type tieGroup struct{ a, b int64 }

// mwSums is the scope's U over the rest in groups (in value order) and the
// normal law's tie term, Σ t³ − t over groups of t tied values; with keep,
// the groups too, for the exact law. One pass, allocating nothing without.
func mwSums(groups iter.Seq[tieGroup], keep bool) (u, ties float64, kept []tieGroup) {
	var below float64 // rest values below the current group
	for g := range groups {
		u += float64(g.a) * (below + float64(g.b)/2)
		below += float64(g.b)
		t := float64(g.a + g.b)
		ties += t*t*t - t
		if keep {
			kept = append(kept, g)
		}
	}
	return u, ties, kept
}

// histTieGroups yields the groups of tied values of two sparse histograms
// of one layout, in value order: a bucket is the same index in both.
func histTieGroups(x, y *report.Hist) iter.Seq[tieGroup] {
	at := func(h *report.Hist) func(int) (int64, int64) {
		return func(i int) (int64, int64) { k, n := h.Bucket(i); return int64(k), n }
	}
	return mergeTies(x.Len(), y.Len(), at(x), at(y))
}

// tieGroups yields the groups of tied values of two histograms, in value
// order. With one geometry (pinprobe's), a bucket is the same index in both
// count arrays; otherwise buckets are matched by their lowest value.
func tieGroups(x, y *hdr.Histogram) iter.Seq[tieGroup] {
	xs, ys := x.Export(), y.Export()
	if xs.LowestTrackableValue == ys.LowestTrackableValue && xs.HighestTrackableValue == ys.HighestTrackableValue &&
		xs.SignificantFigures == ys.SignificantFigures && len(xs.Counts) == len(ys.Counts) {
		return countTies(xs.Counts, ys.Counts)
	}
	xb, yb := x.Distribution(), y.Distribution()
	at := func(bs []hdr.Bar) func(int) (int64, int64) {
		return func(i int) (int64, int64) { return bs[i].From, bs[i].Count }
	}
	return mergeTies(len(xb), len(yb), at(xb), at(yb))
}

// countTies yields the non-empty groups of two count arrays of one layout,
// bucket by bucket.
func countTies(x, y []int64) iter.Seq[tieGroup] {
	return func(yield func(tieGroup) bool) {
		for i, a := range x {
			if b := y[i]; a+b > 0 && !yield(tieGroup{a, b}) {
				return
			}
		}
	}
}

// mergeTies yields the non-empty tie groups of two bucket lists in value
// order, nx and ny long, x and y giving bucket i's key and count: buckets of
// one key are tied.
func mergeTies(nx, ny int, x, y func(int) (key, n int64)) iter.Seq[tieGroup] {
	return func(yield func(tieGroup) bool) {
		for i, j := 0, 0; i < nx || j < ny; {
			var xk, yk int64
			var g tieGroup
			if i < nx {
				xk, g.a = x(i)
			}
			if j < ny {
				yk, g.b = y(j)
			}
			switch {
			case j == ny || (i < nx && xk < yk):
				g.b = 0
				i++
			case i == nx || yk < xk:
				g.a = 0
				j++
			default:
				i++
				j++
			}
			if g.a+g.b > 0 && !yield(g) {
				return
			}
		}
	}
}

// normalMW is P(U ≥ u) by the normal law with the variance corrected for
// ties and a continuity correction of ½, given the groups' tie term, the
// sum of t³ − t over the groups of t tied values.
func normalMW(n1, n2, u, ties float64) float64 {
	n := n1 + n2
	v := n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if v <= 0 {
		return 1 // every value tied
	}
	z := (u - n1*n2/2 - 0.5) / math.Sqrt(v)
	return min(1, normalTail(z))
}

// normalTail is P(Z ≥ z) for a standard normal Z.
func normalTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// exactMannWhitney is P(U ≥ u) when the scope's n1 values are a uniformly
// random n1 of all the values, ties kept where they are. Dynamic
// programming over the groups in value order; the state is the scope
// values placed so far and 2U so far. Placing x of a group's t values in
// the scope adds x·(2·(rest values below) + t - x) to 2U, in C(t, x) ways.
func exactMannWhitney(groups []tieGroup, n1, n2 int64, u float64) float64 {
	maxU2 := 2 * n1 * n2
	obs := int64(math.Round(2 * u))
	width := maxU2 + 1
	cur := make([]float64, (n1+1)*width)
	nxt := make([]float64, (n1+1)*width)
	cur[0] = 1
	var below int64 // values in earlier groups
	for _, g := range groups {
		t := g.a + g.b
		clear(nxt)
		for a := int64(0); a <= n1; a++ {
			row := cur[a*width : (a+1)*width]
			restBelow := below - a
			if restBelow < 0 || restBelow > n2 {
				continue
			}
			for x := int64(0); x <= min(t, n1-a); x++ {
				if t-x > n2-restBelow {
					continue // more rest values than there are
				}
				w := math.Exp(stat.LogChoose(t, x))
				add := x * (2*restBelow + t - x)
				out := nxt[(a+x)*width : (a+x+1)*width]
				for s, v := range row {
					if v != 0 {
						out[int64(s)+add] += v * w
					}
				}
			}
		}
		cur, nxt = nxt, cur
		below += t
	}
	total, tail := 0.0, 0.0
	for s, v := range cur[n1*width:] {
		total += v
		if int64(s) >= obs {
			tail += v
		}
	}
	if total == 0 {
		return 1
	}
	return min(1, tail/total)
}

// MannWhitney is SlowerTest's Mann-Whitney test alone, both ways: the
// one-sided p of x's values being greater than y's, and of their being
// less, from two histograms' counts bucket by bucket, of one layout (any
// same range of its buckets), holding nx and ny values: for a caller that
// needs no percentile of either, and so no histogram.
func MannWhitney(x, y []int64, nx, ny int64) (pGreater, pLess float64) {
	if nx == 0 || ny == 0 || len(x) != len(y) {
		return 1, 1
	}
	exact := nx <= exactMWCells/ny // n·m ≤ 400, without the product's overflow
	u, ties, groups := mwSums(countTies(x, y), exact)
	uy := float64(nx)*float64(ny) - u // y's U over x
	if !exact {
		return normalMW(float64(nx), float64(ny), u, ties), normalMW(float64(ny), float64(nx), uy, ties)
	}
	pGreater = exactMannWhitney(groups, nx, ny, u)
	for i := range groups {
		groups[i].a, groups[i].b = groups[i].b, groups[i].a
	}
	return pGreater, exactMannWhitney(groups, ny, nx, uy)
}
