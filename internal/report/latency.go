package report

import (
	"math"
	"slices"
	"sort"
)

// The timeline's latencies over time are counted in log bins, not HDR
// histograms: a bucket of the timeline holds, for each scope, how many of
// its requests took a latency in each bin, so p50 and p99 can be read per
// bucket, and two reports' buckets add up exactly (a quantile cannot be
// merged; counts can). Bin k holds the latencies of at least 2^(k/8) µs and
// less than 2^((k+1)/8) µs (a bin 9% wide: a quantile read from it, its
// geometric middle, is within 4.5% of the exact value); bin 0 holds 1 µs
// and less. pinprobe's latencies end at one hour (bin 253).
const (
	LatencyBinsPerOctave = 8
	LatencyBins          = 256
)

// Bounds of the latency series a timeline keeps: every family's, and those
// of the first MaxLatencyEndpoints endpoints (in the report's order) and
// the first MaxGroupSeries instance groups (values kept apart, in the order
// first seen), so an aggregator's memory does not grow with the endpoints
// (a run over 1000 endpoints keeps 32 latency series, not 1000).
const (
	MaxLatencyEndpoints = 32
	MaxGroupSeries      = 32
)

// binLow[k] is the least whole number of microseconds in bin k (several
// low bins hold none: they are narrower than a microsecond).
var binLow = func() (low [LatencyBins]int64) {
	for k := range low {
		low[k] = int64(math.Ceil(math.Pow(2, float64(k)/LatencyBinsPerOctave)))
	}
	return low
}()

// LatencyBin is the bin of a latency of us microseconds.
func LatencyBin(us int64) int {
	// The last bin whose least value is at most us.
	return max(sort.Search(LatencyBins, func(k int) bool { return binLow[k] > us })-1, 0)
}

// LatencyBinMS is the latency bin k stands for, in milliseconds: its
// geometric middle.
func LatencyBinMS(k int) float64 {
	if k <= 0 {
		return 0.001
	}
	return math.Pow(2, (float64(k)+0.5)/LatencyBinsPerOctave) / 1000
}

// Latencies is one scope's latencies per timeline bucket: Bins[i] lists
// the bins (see LatencyBin) that hold requests of bucket i, in increasing
// order, and Counts[i] how many requests each holds, failed ones too; both
// have a row per bucket, [] when the bucket has no request.
type Latencies struct {
	Bins   [][]uint16 `json:"bins"`
	Counts [][]int64  `json:"counts"`
}

// Buckets is how many buckets l has.
func (l *Latencies) Buckets() int { return len(l.Bins) }

// Total is how many requests bucket i of l holds.
func (l *Latencies) Total(i int) int64 {
	var n int64
	for _, c := range l.Counts[i] {
		n += c
	}
	return n
}

// FamilySeries is the latency over time of one address family: every
// request of its endpoints, bucket by bucket of the timeline.
type FamilySeries struct {
	Family  string    `json:"family"`
	Latency Latencies `json:"latency"`
}

// GroupSeries is one instance group over time (Group: the responses that
// named one value of an instance header): its responses, failed responses
// and latencies per bucket of the timeline.
type GroupSeries struct {
	Header   string    `json:"header"`
	Value    string    `json:"value"`
	Requests []int64   `json:"requests"`
	Failed   []int64   `json:"failed"`
	Latency  Latencies `json:"latency"`
}

// LatencyTally counts one scope's latencies per timeline bucket, in the
// bins of LatencyBin: the aggregator and Merge fill it, and it writes a
// Latencies. A bucket holds only the bins it has counts in, each a
// bin<<56|count word, in increasing order of bin, so a bucket of requests
// that took about the same time is a few words.
type LatencyTally struct {
	buckets [][]uint64
}

const countMask = 1<<56 - 1

// Add counts n requests of bin in bucket i.
func (t *LatencyTally) Add(i, bin int, n int64) {
	for len(t.buckets) <= i {
		t.buckets = append(t.buckets, nil)
	}
	t.buckets[i] = addBin(t.buckets[i], uint64(bin), uint64(n))
}

// addBin adds n to bin's word of the sorted bucket b.
func addBin(b []uint64, bin, n uint64) []uint64 {
	j, found := slices.BinarySearchFunc(b, bin, func(w, bin uint64) int {
		return int(w>>56) - int(bin)
	})
	if found {
		b[j] += n
		return b
	}
	return slices.Insert(b, j, bin<<56|n)
}

// Coarsen merges the buckets pairwise, as the timeline does when its
// interval doubles.
func (t *LatencyTally) Coarsen() {
	out := make([][]uint64, (len(t.buckets)+1)/2)
	for i, b := range t.buckets {
		out[i/2] = mergeBins(out[i/2], b)
	}
	t.buckets = out
}

// mergeBins adds the sorted bucket b into a.
func mergeBins(a, b []uint64) []uint64 {
	if len(a) == 0 {
		return b
	}
	for _, w := range b {
		a = addBin(a, w>>56, w&countMask)
	}
	return a
}

// AddSaved counts a saved scope's latencies in, each bucket k of it into
// bucket place(k) (Merge puts every input on one grid).
func (t *LatencyTally) AddSaved(l *Latencies, place func(k int) int) {
	for k := range l.Bins {
		for j, bin := range l.Bins[k] {
			t.Add(place(k), int(bin), l.Counts[k][j])
		}
	}
}

// Latencies writes the tally over n buckets.
func (t *LatencyTally) Latencies(n int) Latencies {
	l := Latencies{Bins: make([][]uint16, n), Counts: make([][]int64, n)}
	for i := range n {
		var b []uint64
		if i < len(t.buckets) {
			b = t.buckets[i]
		}
		l.Bins[i], l.Counts[i] = make([]uint16, len(b)), make([]int64, len(b))
		for j, w := range b {
			l.Bins[i][j], l.Counts[i][j] = uint16(w>>56), int64(w&countMask)
		}
	}
	return l
}

// Words is how many bin words t holds: its size, for tests of its bound.
func (t *LatencyTally) Words() int {
	n := 0
	for _, b := range t.buckets {
		n += len(b)
	}
	return n
}

// BinCounts is one column of a chart's latencies: requests per bin, added
// up over the buckets the column covers.
type BinCounts [LatencyBins]int64

// Add adds bucket i of l.
func (c *BinCounts) Add(l *Latencies, i int) {
	for j, bin := range l.Bins[i] {
		c[bin] += l.Counts[i][j]
	}
}

// Quantile is the latency, in milliseconds, that a share q of c's n
// requests took at most: the bin of the request of rank ⌈q·n⌉, as
// LatencyBinMS says it; 0 when n is 0.
func (c *BinCounts) Quantile(n int64, q float64) float64 {
	if n <= 0 {
		return 0
	}
	rank := max(int64(math.Ceil(q*float64(n))), 1)
	var seen int64
	for k, m := range c {
		if seen += m; seen >= rank {
			return LatencyBinMS(k)
		}
	}
	return LatencyBinMS(LatencyBins - 1)
}
