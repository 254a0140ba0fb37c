package report

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/pinprobe/pinprobe/internal/stat"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to one hour, to 3
// significant digits, and phases to 2; every report uses these geometries
// so histograms merge, and a saved report with another is refused.
const (
	histMin     = 1
	histMax     = int64(time.Hour / time.Microsecond)
	histDigits  = 3
	phaseDigits = 2
)

// NewHist is an empty dense hdr histogram of the latency layout, for
// callers that want hdr's own (tests, fixtures); a scope keeps a Hist.
func NewHist() *hdr.Histogram { return hdr.New(histMin, histMax, histDigits) }

// Outcome is one request's result as a tally counts it.
type Outcome struct {
	// Status is the HTTP status of the response; not counted when Class
	// is set.
	Status int
	// Class is the error class of a request that got no response; "" when
	// it got one.
	Class   string
	Failed  bool
	Bytes   int64
	Latency time.Duration
}

// Tally accumulates the results of one scope: an endpoint, a family, an
// instance. The aggregator and Merge both roll up into it. One goroutine
// writes it. It holds what the scope saw: the statuses and latency
// buckets it got, not every one there could be.
type Tally struct {
	requests, ok, failed, Dropped, bytes int64
	ClientErrors                         int64         // requests this machine could not send (probe.ClassClient)
	Abandoned                            int64         // requests sent and not waited for (probe.Result.Abandoned)
	status                               []statusCount // by HTTP status, ascending
	lastStatus                           int           // where the last status landed, tried first
	errors                               map[string]int64
	hist                                 *Hist
	sum                                  time.Duration
	min, max                             time.Duration
}

// statusCount is how many responses had one HTTP status.
type statusCount struct {
	code int
	n    int64
}

// NewTally is an empty tally.
func NewTally() *Tally {
	return &Tally{errors: map[string]int64{}, hist: NewLatencyHist()}
}

// addStatus counts n responses of HTTP status code.
func (t *Tally) addStatus(code int, n int64) {
	if k := t.lastStatus; k < len(t.status) && t.status[k].code == code {
		t.status[k].n += n
		return
	}
	k, found := slices.BinarySearchFunc(t.status, code, func(s statusCount, c int) int { return cmp.Compare(s.code, c) })
	if !found {
		t.status = slices.Insert(t.status, k, statusCount{code: code})
	}
	t.status[k].n += n
	t.lastStatus = k
}

// Record counts one request's outcome in t.
func (t *Tally) Record(o Outcome) {
	t.requests++
	if o.Class != "" {
		t.errors[o.Class]++
	} else if o.Status >= 0 && o.Status < 1000 {
		t.addStatus(o.Status, 1)
	}
	if o.Failed {
		t.failed++
	} else {
		t.ok++
	}
	t.bytes += o.Bytes
	t.sum += o.Latency
	if t.requests == 1 || o.Latency < t.min {
		t.min = o.Latency
	}
	t.max = max(t.max, o.Latency)
	t.hist.Record(Micros(o.Latency))
}

// Micros is d in whole microseconds, within the histograms' range.
func Micros(d time.Duration) int64 { return min(max(d.Microseconds(), histMin), histMax) }

// MergeTally counts src into dst.
func MergeTally(dst, src *Tally) {
	if src.requests > 0 && (dst.requests == 0 || src.min < dst.min) {
		dst.min = src.min
	}
	dst.max = max(dst.max, src.max)
	dst.requests += src.requests
	dst.ok += src.ok
	dst.failed += src.failed
	dst.Dropped += src.Dropped
	dst.ClientErrors += src.ClientErrors
	dst.Abandoned += src.Abandoned
	dst.bytes += src.bytes
	dst.sum += src.sum
	for _, sc := range src.status {
		dst.addStatus(sc.code, sc.n)
	}
	for k, v := range src.errors {
		dst.errors[k] += v
	}
	dst.hist.Merge(src.hist)
}

// Stats writes the tally as a scope's Stats, rates over secs.
func (t *Tally) Stats(secs float64) Stats {
	s := Stats{
		Requests: t.requests, OK: t.ok, Failed: t.failed, Dropped: t.Dropped, Bytes: t.bytes, ClientErrors: t.ClientErrors, Abandoned: t.Abandoned,
		Status: map[string]int64{}, Errors: map[string]int64{},
	}
	if t.requests > 0 {
		s.LatencyMS = latencyOf(t.hist, Millis(t.min), Millis(t.sum/time.Duration(t.requests)), Millis(t.max))
	}
	s.setRates(secs)
	for _, sc := range t.status {
		s.Status[strconv.Itoa(sc.code)] = sc.n
	}
	for k, v := range t.errors {
		s.Errors[k] = v
	}
	s.HDR = t.hist.Encode()
	return s
}

// latencyOf is a scope's Latency: its extremes lo and hi and its mean, known
// exactly, and percentiles read from h. The histogram answers with the
// highest value of a bucket (up to 0.1% above what was recorded, and whole
// microseconds below it): clamped to the extremes, min <= p50 <= … <= max.
func latencyOf(h *Hist, lo, mean, hi float64) Latency {
	q := func(p float64) float64 { return min(max(MicrosToMillis(h.ValueAtQuantile(p)), lo), hi) }
	return Latency{Min: lo, Mean: mean, P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: hi}
}

// setRates sets s's failure rate from its counts and its requests per
// second over secs: every request sent, the abandoned too.
func (s *Stats) setRates(secs float64) {
	if s.Requests > 0 {
		s.FailureRate = stat.Round(float64(s.Failed)/float64(s.Requests), 6)
	}
	if secs > 0 {
		s.RPS = stat.Round(float64(s.Requests+s.Abandoned)/secs, 2)
	}
}

// DecodeHDR decodes a Stats.HDR string: a latency histogram of pinprobe's
// layout (any other is refused before it is allocated); reports written by
// any pinprobe merge exactly.
func DecodeHDR(s string) (*hdr.Histogram, error) { return decodeHDR(NewHist(), s, latencyGeometry) }

// DecodePhaseHDR decodes a Phase.HDR string, as DecodeHDR does.
func DecodePhaseHDR(s string) (*hdr.Histogram, error) {
	return decodeHDR(NewPhaseHist(), s, phaseGeometry)
}

func decodeHDR(h *hdr.Histogram, s string, g *histGeometry) (*hdr.Histogram, error) {
	if err := addHDR(h, s, g); err != nil {
		return nil, err
	}
	return h, nil
}

// HDRCount is how many values a Stats.HDR string holds, read without
// decoding it into a histogram.
func HDRCount(s string) (int64, error) { return scanHDR(s, latencyGeometry, nil) }

// phaseHDRCount is HDRCount for a Phase.HDR string.
func phaseHDRCount(s string) (int64, error) { return scanHDR(s, phaseGeometry, nil) }

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return stat.Round(float64(d)/float64(time.Millisecond), 3) }

// MicrosToMillis is us microseconds in milliseconds.
func MicrosToMillis(us int64) float64 { return stat.Round(float64(us)/1000, 3) }

// Bounds that keep an aggregator's memory flat however long the run.
const (
	MaxPoints       = 300   // timeline buckets before the auto interval doubles
	HardMaxPoints   = 10000 // even an explicit --interval doubles past this
	MaxFingerprints = 64    // distinct failure fingerprints kept; the rest count as one
	MaxPorts        = 1000  // local ports listed (all are counted)
)

// NewPhaseHist is NewHist of the phase layout.
func NewPhaseHist() *hdr.Histogram { return hdr.New(histMin, histMax, phaseDigits) }

// PhaseOf summarises a phase histogram (of NewPhaseTimes), with its encoding.
func PhaseOf(h *Hist) Phase {
	p := PhaseSummary(h)
	if p.Count > 0 {
		p.HDR = h.Encode()
	}
	return p
}

// PhaseSummary is PhaseOf without the encoding.
func PhaseSummary(h *Hist) Phase {
	n := h.TotalCount()
	if n == 0 {
		return Phase{}
	}
	return Phase{Count: n, P50: MicrosToMillis(h.ValueAtQuantile(50)), P99: MicrosToMillis(h.ValueAtQuantile(99)), Max: MicrosToMillis(h.Max())}
}
