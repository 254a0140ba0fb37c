package report

import (
	"maps"

	"github.com/pinprobe/pinprobe/internal/stat"
)

// StatsSum adds up one scope's saved Stats over the inputs of a merge, as a
// Tally would, but keeps the inputs' encoded histograms instead of a
// histogram of its own: a merge of thousands of endpoints then holds their
// counts, not a histogram per scope. Stats decodes them
// into a histogram the caller lends, one scope at a time.
type StatsSum struct {
	requests, ok, failed, dropped, clientErrors, bytes int64
	abandoned                                          int64
	status, errors                                     map[string]int64
	sumMS, minMS, maxMS                                float64 // latency: the sum of every request's, the extremes
	hdrs                                               []string
}

func NewStatsSum() *StatsSum {
	return &StatsSum{status: map[string]int64{}, errors: map[string]int64{}}
}

// Add counts s in.
func (a *StatsSum) Add(s *Stats) {
	if s.Requests > 0 {
		if a.requests == 0 || s.LatencyMS.Min < a.minMS {
			a.minMS = s.LatencyMS.Min
		}
		a.maxMS = max(a.maxMS, s.LatencyMS.Max)
		a.sumMS += s.LatencyMS.Mean * float64(s.Requests)
	}
	a.requests += s.Requests
	a.ok += s.OK
	a.failed += s.Failed
	a.dropped += s.Dropped
	a.clientErrors += s.ClientErrors
	a.abandoned += s.Abandoned
	a.bytes += s.Bytes
	for k, n := range s.Status {
		if n != 0 {
			a.status[k] += n
		}
	}
	for k, n := range s.Errors {
		a.errors[k] += n
	}
	if s.HDR != "" {
		a.hdrs = append(a.hdrs, s.HDR)
	}
}

// AddSum counts another sum in, histograms and all.
func (a *StatsSum) AddSum(b *StatsSum) {
	if b.requests > 0 {
		if a.requests == 0 || b.minMS < a.minMS {
			a.minMS = b.minMS
		}
		a.maxMS = max(a.maxMS, b.maxMS)
		a.sumMS += b.sumMS
	}
	a.requests += b.requests
	a.ok += b.ok
	a.failed += b.failed
	a.dropped += b.dropped
	a.clientErrors += b.clientErrors
	a.abandoned += b.abandoned
	a.bytes += b.bytes
	for k, n := range b.status {
		a.status[k] += n
	}
	for k, n := range b.errors {
		a.errors[k] += n
	}
}

// Hist decodes the sum's histograms into h, emptied first.
func (a *StatsSum) Hist(h *Hist) error {
	h.Reset()
	for _, enc := range a.hdrs {
		if err := h.Add(enc); err != nil {
			return err
		}
	}
	return nil
}

// Stats writes the sum as Tally.Stats would, its percentiles read from h,
// the merge of its histograms (see Hist), rates over secs.
func (a *StatsSum) Stats(h *Hist, secs float64) Stats {
	s := Stats{
		Requests: a.requests, OK: a.ok, Failed: a.failed, Dropped: a.dropped, Bytes: a.bytes, ClientErrors: a.clientErrors, Abandoned: a.abandoned,
		Status: maps.Clone(a.status), Errors: maps.Clone(a.errors),
	}
	if a.requests > 0 {
		s.FailureRate = stat.Round(float64(a.failed)/float64(a.requests), 6)
		lo, hi := a.minMS, a.maxMS
		q := func(p float64) float64 { return min(max(MicrosToMillis(h.ValueAtQuantile(p)), lo), hi) }
		s.LatencyMS = Latency{Min: lo, Mean: stat.Round(a.sumMS/float64(a.requests), 3), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: hi}
	}
	if secs > 0 {
		s.RPS = stat.Round(float64(a.requests+a.abandoned)/secs, 2) // every request sent: the abandoned were too
	}
	s.HDR = Reencode(h, a.hdrs)
	return s
}

// Reencode is the encoding of h, the merge of encs: the one input's own
// when there is one (a report re-rendered, an endpoint only one input
// probed), already checked when read and the same counts, which spares a
// compressor pass per scope.
func Reencode(h *Hist, encs []string) string {
	if len(encs) == 1 {
		return encs[0]
	}
	return h.Encode()
}
