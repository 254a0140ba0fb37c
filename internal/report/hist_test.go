package report

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// quantilesToCheck are the percentiles compared between Hist and hdr.
var quantilesToCheck = []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100}

// sameAsDense fails t unless h holds exactly the counts of d: the same
// total, bucket counts (through the encoding, byte for byte), quantiles
// and maximum.
func sameAsDense(t *testing.T, what string, h *Hist, d *hdr.Histogram) {
	t.Helper()
	if h.TotalCount() != d.TotalCount() {
		t.Fatalf("%s: %d values; dense %d", what, h.TotalCount(), d.TotalCount())
	}
	want, err := d.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Encode(); got != string(want) {
		t.Fatalf("%s: the encoding differs from hdr's of the same values:\n%s\n%s", what, got, want)
	}
	for _, q := range quantilesToCheck {
		if a, b := h.ValueAtQuantile(q), d.ValueAtQuantile(q); a != b {
			t.Fatalf("%s: p%g = %d; dense %d", what, q, a, b)
		}
	}
	if d.TotalCount() > 0 && h.Max() != d.Max() {
		t.Fatalf("%s: max %d; dense %d", what, h.Max(), d.Max())
	}
	if got, want := h.ValueAtPercentilesSlice(quantilesToCheck), d.ValueAtPercentilesSlice(quantilesToCheck); len(got) != len(want) {
		t.Fatalf("%s: %d quantiles; want %d", what, len(got), len(want))
	} else {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: ValueAtPercentilesSlice[%g] = %d; dense %d", what, quantilesToCheck[i], got[i], want[i])
			}
		}
	}
}

// TestHistMatchesDense: a Hist recording, merging, decoding and
// subtracting the same values as hdr's dense histogram holds the same
// counts, quantiles, maximum and encoding, in both layouts, whatever the
// order the values and the merges come in.
func TestHistMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	for _, g := range []*histGeometry{latencyGeometry, phaseGeometry} {
		for range 60 / check.RaceScale { // the race detector makes each ten times slower
			parts := 1 + rng.IntN(6)
			dense := g.newHist()
			var sparse []*Hist
			var encs []string
			for range parts {
				d := randomHist(rng, g, []int{0, 1, 3, 50, 2000}[rng.IntN(5)])
				h := &Hist{g: g}
				// Record value by value, in a shuffled order, as a collector does.
				var vals []int64
				for _, b := range d.Distribution() {
					for range min(b.Count, 3) {
						vals = append(vals, b.From)
					}
					if b.Count > 3 {
						h.add(g.index(b.From), b.Count-3)
					}
				}
				rng.Shuffle(len(vals), func(a, b int) { vals[a], vals[b] = vals[b], vals[a] })
				for _, v := range vals {
					h.Record(v)
				}
				sameAsDense(t, g.name+": recorded", h, d)
				dense.Merge(d)
				sparse = append(sparse, h)
				encs = append(encs, h.Encode())
			}
			merged := &Hist{g: g}
			for _, k := range rng.Perm(parts) {
				merged.Merge(sparse[k])
			}
			sameAsDense(t, g.name+": merged", merged, dense)
			decoded := &Hist{g: g}
			for _, k := range rng.Perm(parts) {
				if err := decoded.Add(encs[k]); err != nil {
					t.Fatal(err)
				}
			}
			sameAsDense(t, g.name+": decoded", decoded, dense)
			// The whole less one part is the merge of the others.
			k := rng.IntN(parts)
			rest, want := &Hist{g: g}, g.newHist()
			rest.SetDifference(merged, sparse[k])
			for j, h := range sparse {
				if j != k {
					d := g.newHist()
					if err := addHDR(d, h.Encode(), g); err != nil {
						t.Fatal(err)
					}
					want.Merge(d)
				}
			}
			sameAsDense(t, g.name+": difference", rest, want)
			merged.Reset()
			sameAsDense(t, g.name+": reset", merged, g.newHist())
		}
	}
}

// TestHistReadsSavedHistograms: a histogram as pinprobe wrote it before
// Hist (hdr's own encoding of a dense histogram) reads into a Hist with
// every count, and writes back the same bytes: old saved reports read,
// merge and re-save unchanged.
func TestHistReadsSavedHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, g := range []*histGeometry{latencyGeometry, phaseGeometry} {
		for range 50 {
			d := randomHist(rng, g, 500)
			old, err := d.Encode(hdr.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			h := &Hist{g: g}
			if err := h.Add(string(old)); err != nil {
				t.Fatal(err)
			}
			sameAsDense(t, g.name+": an old encoding read", h, d)
		}
	}
	// A saved report's latency histogram in another layout is refused,
	// and leaves the Hist as it was.
	h := NewLatencyHist()
	h.Record(1500)
	phase, _ := NewPhaseHist().Encode(hdr.V2CompressedEncodingCookieBase)
	if err := h.Add(string(phase)); err == nil || h.TotalCount() != 1 {
		t.Errorf("a phase histogram added to a latency Hist: %v, %d values; want an error and 1 value", err, h.TotalCount())
	}
}

// TestHistSizedByUse: an endpoint's histograms take memory for the
// buckets it used, not for the layout: 1,000 latency histograms of 20
// requests each within a few milliseconds hold under 1 kB each (a dense
// one is 188 kB).
func TestHistSizedByUse(t *testing.T) {
	if check.Race {
		t.Skip("the race detector's allocations are not the program's")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	hs := make([]*Hist, 1000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range hs {
		hs[i] = NewLatencyHist()
		for range 20 {
			hs[i].Record(200 + rng.Int64N(3000))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(len(hs))
	t.Logf("%d bytes a histogram of 20 values", per)
	if per > 1024 {
		t.Errorf("a histogram of 20 values holds %d bytes; want at most 1 kB", per)
	}
	runtime.KeepAlive(hs)
}

// BenchmarkHistRecord: a collector's cost per request, sparse against
// hdr's dense histogram, for latencies spread over a few hundred buckets.
func BenchmarkHistRecord(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	vals := make([]int64, 4096)
	for i := range vals {
		vals[i] = 100 + int64(rng.ExpFloat64()*800)
	}
	b.Run("sparse", func(b *testing.B) {
		h := NewLatencyHist()
		i := 0
		for b.Loop() {
			h.Record(vals[i&4095])
			i++
		}
	})
	b.Run("dense", func(b *testing.B) {
		h := NewHist()
		i := 0
		for b.Loop() {
			h.RecordValue(vals[i&4095])
			i++
		}
	})
}
