package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// randomHist records n values of a random shape into a histogram of g.
func randomHist(rng *rand.Rand, g *histGeometry, n int) *hdr.Histogram {
	h := g.newHist()
	for range n {
		var v int64
		switch rng.IntN(4) {
		case 0:
			v = 1 + rng.Int64N(2000)
		case 1:
			v = int64(rng.ExpFloat64() * 3000)
		case 2:
			v = rng.Int64N(histMax) + 1
		default:
			v = int64(math.Exp(rng.Float64() * math.Log(float64(histMax))))
		}
		h.RecordValues(min(max(v, histMin), histMax), 1+rng.Int64N(3)*rng.Int64N(1000))
	}
	return h
}

// TestHDRCodecIsHdrs: the reader and writer of saved histograms agree
// with hdr's own, byte for byte and count for count, for both layouts.
func TestHDRCodecIsHdrs(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 4))
	for _, g := range []*histGeometry{latencyGeometry, phaseGeometry} {
		for i := range 300 / check.RaceScale { // the race detector makes each ten times slower
			h := randomHist(rng, g, []int{0, 1, 2, 40, 3000}[i%5])
			want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeHDR(h, g); got != string(want) {
				t.Fatalf("%s: encodeHDR differs from hdr's Encode for %d values:\n%s\n%s", g.name, h.TotalCount(), got, want)
			}
			n, err := scanHDR(string(want), g, nil)
			if err != nil || n != h.TotalCount() {
				t.Fatalf("%s: scanHDR = %d, %v; want %d", g.name, n, err, h.TotalCount())
			}
			back := g.newHist()
			if err := addHDR(back, string(want), g); err != nil {
				t.Fatal(err)
			}
			if !back.Equals(h) {
				t.Fatalf("%s: addHDR did not give back the histogram of %d values", g.name, h.TotalCount())
			}
		}
	}
}

// TestHDRRefusesOtherGeometries: a histogram of any layout but pinprobe's
// (a 60-byte one declaring 1 to 2⁶³ at 5 digits) is refused from its
// header, before anything is allocated.
func TestHDRRefusesOtherGeometries(t *testing.T) {
	wide, err := hdr.New(1, math.MaxInt64, 5).Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	phase, _ := NewPhaseHist().Encode(hdr.V2CompressedEncodingCookieBase)
	for _, tt := range []struct {
		name, enc, want string
	}{
		{"1 to 2^63 at 5 digits", string(wide), "a histogram of 1 to 9223372036854775807 at 5 digits: pinprobe writes latency histograms of 1 to 3600000000 µs at 3"},
		{"a phase's layout", string(phase), "at 2 digits: pinprobe writes latency histograms"},
		{"not base64", "HIST!!", "not base64"},
		{"not a histogram", "AAAAAAAAAAAA", "not an HdrHistogram"},
	} {
		_, err := DecodeHDR(tt.enc)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: DecodeHDR = %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
	var m1, m2 runtimeMem
	m1.read()
	for range 10 {
		HDRCount(string(wide))
		DecodeHDR(string(wide))
	}
	m2.read()
	if per := (m2.total - m1.total) / 10; per > 512<<10 && !check.Race {
		t.Errorf("refusing a 1 to 2^63 histogram allocated %d bytes; want at most an empty histogram of pinprobe's (188 kB)", per)
	}
}

// TestHDRBudget: a report whose histograms would inflate to more than
// HDRInflation times its size is refused from their headers.
func TestHDRBudget(t *testing.T) {
	bomb, n := LatencyBomb()
	r := &Report{}
	for range 100 {
		r.Groups = append(r.Groups, Group{Stats: Stats{Requests: n, OK: n, HDR: bomb}})
	}
	if err := checkHDRBudget(r, 20000); err == nil || !strings.Contains(err.Error(), "its histograms inflate to more than 64 times its size") {
		t.Errorf("checkHDRBudget(100 histograms of 23,552 bytes in 20 kB) = %v; want it refused", err)
	}
	if err := checkHDRBudget(r, 100*len(bomb)*4); err != nil {
		t.Errorf("checkHDRBudget(100 such histograms in a report of 4 times their size) = %v; want nil", err)
	}
}

// TestScratchTally: Tally counts what Add does, bucket by bucket, without
// the histogram; Bucket bounds each bucket as hdr does, its greatest value
// being what hdr reads a percentile in it as.
func TestScratchTally(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	full, tally := NewScratch(), NewScratch() // emptied for each histogram
	n := 100
	if check.Race {
		n = 24 // each of the four sizes 6 times under the race detector
	}
	for i := range n {
		h := randomHist(rng, latencyGeometry, []int{1, 2, 40, 3000}[i%4])
		enc := encodeHDR(h, latencyGeometry)
		full.Reset()
		tally.Reset()
		if err := full.Add(enc); err != nil {
			t.Fatal(err)
		}
		n, from, to, err := tally.Tally(enc)
		if err != nil || n != h.TotalCount() || tally.H.TotalCount() != 0 {
			t.Fatalf("Tally = %d, %v, H holding %d; want %d, the counts alone", n, err, tally.H.TotalCount(), h.TotalCount())
		}
		first, last := len(tally.Counts), -1
		var cum int64
		for idx, c := range tally.Counts {
			if c != full.Counts[idx] {
				t.Fatalf("bucket %d: Tally counted %d, Add %d", idx, c, full.Counts[idx])
			}
			if c == 0 {
				continue
			}
			first, last = min(first, idx), max(last, idx)
			cum += c
			lo, hi := tally.Bucket(idx)
			if !h.ValuesAreEquivalent(lo, hi) || h.ValuesAreEquivalent(lo, lo-1) || h.ValuesAreEquivalent(hi, hi+1) {
				t.Fatalf("bucket %d: [%d, %d] is not one of hdr's buckets", idx, lo, hi)
			}
			if got := h.ValueAtPercentile(100 * float64(cum) / float64(n)); got != hi && cum < n {
				t.Fatalf("bucket %d: hdr reads the percentile of rank %d as %d; want %d", idx, cum, got, hi)
			}
		}
		if from != first || to != last {
			t.Fatalf("Tally's buckets in use %d to %d; want %d to %d", from, to, first, last)
		}
	}
	if _, _, _, err := NewScratch().Tally("bm90IGEgaGlzdG9ncmFt"); err == nil {
		t.Errorf("Tally of a string that is no histogram: no error")
	}
}
