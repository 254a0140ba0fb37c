package report

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Bounds that keep an aggregator's memory flat however long the run.
const (
	MaxPoints       = 300   // timeline buckets before the auto interval doubles
	HardMaxPoints   = 10000 // even an explicit --interval doubles past this
	MaxFingerprints = 64    // distinct failure fingerprints kept; the rest count as one
	MaxPorts        = 1000  // local ports listed (all are counted)
)

func NewPhaseHist() *hdr.Histogram { return hdr.New(histMin, histMax, 2) }

func PhaseOf(h *hdr.Histogram) Phase {
	n := h.TotalCount()
	if n == 0 {
		return Phase{}
	}
	p := Phase{Count: n, P50: MicrosToMillis(h.ValueAtQuantile(50)), P99: MicrosToMillis(h.ValueAtQuantile(99)), Max: MicrosToMillis(h.Max())}
	if enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		p.HDR = string(enc)
	}
	return p
}
