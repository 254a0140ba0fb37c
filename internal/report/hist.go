package report

import (
	"math/bits"
	"slices"
)

// Hist is a histogram of one of pinprobe's two layouts (latency or phase)
// that stores only the buckets in use: their indexes in hdr's flat layout,
// ascending, and their counts. A scope holds what it saw, not the layout's
// range: an endpoint that answered 10 requests within a few hundred
// microseconds holds a few buckets (10 bytes each), where hdr's dense
// histogram holds all 23,552 (188 KB). Its buckets, counts, quantiles,
// extremes and encoding are those of hdr.Histogram over the same values,
// exactly (TestHistMatchesDense), so a Hist merges with any saved report.
// One goroutine writes it; the zero value is not ready (NewLatencyHist).
type Hist struct {
	g     *histGeometry
	idx   []uint16 // bucket indexes in use, ascending (both layouts have fewer than 2¹⁶)
	n     []int64  // their counts, all > 0
	total int64
	last  int // where the last Record landed, tried first
}

// NewLatencyHist is an empty latency Hist (the layout of NewHist).
func NewLatencyHist() *Hist { return &Hist{g: latencyGeometry} }

// NewPhaseTimes is an empty phase Hist (the layout of NewPhaseHist).
func NewPhaseTimes() *Hist { return &Hist{g: phaseGeometry} }

// index is the bucket of v, a value in [histMin, histMax] (hdr's
// countsIndexFor for a lowest discernible value of 1).
func (g *histGeometry) index(v int64) int {
	mask := int64(2*g.halfCount - 1)
	bucket := 64 - bits.LeadingZeros64(uint64(v|mask)) - int(g.halfMag+1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<g.halfMag + sub - int(g.halfCount)
}

// top is the highest value of bucket idx (hdr's highestEquivalentValue
// of its lowest).
func (g *histGeometry) top(idx int) int64 {
	bucket := max(idx>>g.halfMag-1, 0)
	return g.value(idx) + int64(1)<<uint(bucket) - 1
}

// Record counts one value, in microseconds, clamped to the layout's range.
func (h *Hist) Record(us int64) { h.add(h.g.index(min(max(us, histMin), histMax)), 1) }

// add adds c > 0 to bucket idx.
func (h *Hist) add(idx int, c int64) {
	h.total += c
	k := h.last
	if k < len(h.idx) && int(h.idx[k]) == idx {
		h.n[k] += c
		return
	}
	if n := len(h.idx); n == 0 || int(h.idx[n-1]) < idx { // ascending input: a decode, a merge
		h.idx = append(h.idx, uint16(idx))
		h.n = append(h.n, c)
		h.last = n
		return
	}
	k = lowerBound(h.idx, uint16(idx))
	if found := k < len(h.idx) && int(h.idx[k]) == idx; !found {
		h.idx = slices.Insert(h.idx, k, uint16(idx))
		h.n = slices.Insert(h.n, k, 0)
	}
	h.n[k] += c
	h.last = k
}

// lowerBound is the position of the first of a at or above x: a binary
// search without branches to mispredict (the compiler makes the step a
// conditional move), the collector's cost per request.
func lowerBound(a []uint16, x uint16) int {
	base, n := 0, len(a)
	for n > 1 {
		half := n / 2
		if a[base+half-1] < x {
			base += half
		}
		n -= half
	}
	if n == 1 && a[base] < x {
		base++
	}
	return base
}

// Reset empties h, keeping its storage.
func (h *Hist) Reset() {
	h.idx, h.n, h.total, h.last = h.idx[:0], h.n[:0], 0, 0
}

// Merge adds the counts of o, of h's layout, to h: one pass over both.
func (h *Hist) Merge(o *Hist) {
	switch {
	case len(o.idx) == 0:
		return
	case len(h.idx) == 0 || h.idx[len(h.idx)-1] < o.idx[0]:
		h.idx = append(h.idx, o.idx...)
		h.n = append(h.n, o.n...)
		h.total += o.total
		return
	}
	// Count the union, grow once, and merge from the end so that nothing
	// of h is overwritten before it is read.
	union := len(h.idx)
	for i, j := 0, 0; j < len(o.idx); {
		switch {
		case i < len(h.idx) && h.idx[i] < o.idx[j]:
			i++
		case i < len(h.idx) && h.idx[i] == o.idx[j]:
			i++
			j++
		default:
			union++
			j++
		}
	}
	i, j := len(h.idx)-1, len(o.idx)-1
	h.idx = slices.Grow(h.idx, union-len(h.idx))[:union]
	h.n = slices.Grow(h.n, union-len(h.n))[:union]
	for out := union - 1; j >= 0; out-- {
		switch {
		case i >= 0 && h.idx[i] > o.idx[j]:
			h.idx[out], h.n[out] = h.idx[i], h.n[i]
			i--
		case i >= 0 && h.idx[i] == o.idx[j]:
			h.idx[out], h.n[out] = h.idx[i], h.n[i]+o.n[j]
			i--
			j--
		default:
			h.idx[out], h.n[out] = o.idx[j], o.n[j]
			j--
		}
	}
	h.total += o.total
}

// SetDifference makes h the counts of a less those of b, bucket by bucket
// (b's being among a's; a bucket b holds more of counts none).
func (h *Hist) SetDifference(a, b *Hist) {
	h.Reset()
	j := 0
	for i, idx := range a.idx {
		c := a.n[i]
		for j < len(b.idx) && b.idx[j] < idx {
			j++
		}
		if j < len(b.idx) && b.idx[j] == idx {
			c -= b.n[j]
		}
		if c > 0 {
			h.add(int(idx), c)
		}
	}
}

// TotalCount is how many values h holds.
func (h *Hist) TotalCount() int64 { return h.total }

// Len is how many buckets h uses.
func (h *Hist) Len() int { return len(h.idx) }

// Bucket is the i-th bucket in use (0 ≤ i < Len): its index in the
// layout, the same for every Hist of it and in value order, and its count.
func (h *Hist) Bucket(i int) (idx int, count int64) { return int(h.idx[i]), h.n[i] }

// Max is the highest value of the highest bucket in use, as hdr's Max; 0
// when empty.
func (h *Hist) Max() int64 {
	if len(h.idx) == 0 {
		return 0
	}
	return h.g.top(int(h.idx[len(h.idx)-1]))
}

// ValueAtQuantile is hdr's ValueAtQuantile: the highest value of the
// bucket holding the value of rank q/100 × TotalCount (rounded to the
// nearest, at least 1); the lowest of the first bucket for q = 0; 0 when
// empty.
func (h *Hist) ValueAtQuantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 100)
	rank := percentileRank(q, h.total)
	var sum int64
	for i, c := range h.n {
		sum += c
		if sum >= rank {
			if q == 0 {
				return h.g.value(int(h.idx[i]))
			}
			return h.g.top(int(h.idx[i]))
		}
	}
	return 0
}

// ValueAtRank is the highest value of the bucket holding the value of
// rank r (1-based, at most TotalCount); 0 when empty.
func (h *Hist) ValueAtRank(r int64) int64 {
	var sum int64
	for i, c := range h.n {
		if sum += c; sum >= r {
			return h.g.top(int(h.idx[i]))
		}
	}
	return 0
}

// CountAtOrBelow is how many values lie in buckets whose highest value is
// at most us: those certainly at or below it.
func (h *Hist) CountAtOrBelow(us int64) int64 {
	var sum int64
	for i, c := range h.n {
		if h.g.top(int(h.idx[i])) > us {
			break
		}
		sum += c
	}
	return sum
}

// ValueAtPercentilesSlice is ValueAtQuantile of each of qs, in their order.
func (h *Hist) ValueAtPercentilesSlice(qs []float64) []int64 {
	out := make([]int64, len(qs))
	for i, q := range qs {
		out[i] = h.ValueAtQuantile(q)
	}
	return out
}

// percentileRank is hdr's: the rank of percentile of total values, in
// [1, total] for total > 0.
func percentileRank(percentile float64, total int64) int64 {
	rank := (percentile/100)*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// Add adds the counts of enc, a saved histogram of h's layout; h is left as
// it was when enc does not decode. enc is inflated once: into h when it is
// empty (emptied again on an error), else beside it, then merged.
func (h *Hist) Add(enc string) error {
	if h.total == 0 {
		h.Reset()
		_, err := scanHDR(enc, h.g, func(idx int, count int64) { h.add(idx, count) })
		if err != nil {
			h.Reset()
		}
		return err
	}
	o := Hist{g: h.g}
	if _, err := scanHDR(enc, h.g, func(idx int, count int64) { o.add(idx, count) }); err != nil {
		return err
	}
	h.Merge(&o)
	return nil
}

// Encode writes h as hdr's Encode writes the same counts (the V2 compressed
// encoding, base64), byte for byte.
func (h *Hist) Encode() string {
	var payload []byte
	next := 0 // the bucket after the last written
	for i, idx := range h.idx {
		if z := int64(int(idx) - next); z == 1 {
			payload = appendZigZag(payload, 0)
		} else if z > 1 {
			payload = appendZigZag(payload, -z)
		}
		payload = appendZigZag(payload, h.n[i])
		next = int(idx) + 1
	}
	if len(h.idx) == 0 {
		payload = appendZigZag(payload, 0) // hdr writes one bucket at least
	}
	return encodePayload(payload, h.g)
}
