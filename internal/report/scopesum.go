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
	c                   Stats   // the counts: requests to bytes, statuses and errors
	sumMS, minMS, maxMS float64 // latency: the sum of every request's, the extremes
	hdrs                []string
}

// NewStatsSum is an empty sum.
func NewStatsSum() *StatsSum {
	return &StatsSum{c: Stats{Status: map[string]int64{}, Errors: map[string]int64{}}}
}

// Add counts s in.
func (a *StatsSum) Add(s *Stats) {
	a.add(s, s.LatencyMS.Min, s.LatencyMS.Max, s.LatencyMS.Mean*float64(s.Requests))
	if s.HDR != "" {
		a.hdrs = append(a.hdrs, s.HDR)
	}
}

// AddSum counts another sum in, but not its histograms: the caller merges
// those (see Hist).
func (a *StatsSum) AddSum(b *StatsSum) { a.add(&b.c, b.minMS, b.maxMS, b.sumMS) }

// add counts c in, its latencies' extremes lo and hi and their sum sumMS.
func (a *StatsSum) add(c *Stats, lo, hi, sumMS float64) {
	if c.Requests > 0 {
		if a.c.Requests == 0 || lo < a.minMS {
			a.minMS = lo
		}
		a.maxMS = max(a.maxMS, hi)
		a.sumMS += sumMS
	}
	a.c.Requests += c.Requests
	a.c.OK += c.OK
	a.c.Failed += c.Failed
	a.c.Dropped += c.Dropped
	a.c.ClientErrors += c.ClientErrors
	a.c.Abandoned += c.Abandoned
	a.c.Bytes += c.Bytes
	for k, n := range c.Status {
		if n != 0 {
			a.c.Status[k] += n
		}
	}
	for k, n := range c.Errors {
		a.c.Errors[k] += n
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
	s := a.c
	s.Status, s.Errors = maps.Clone(a.c.Status), maps.Clone(a.c.Errors)
	if s.Requests > 0 {
		s.LatencyMS = latencyOf(h, a.minMS, stat.Round(a.sumMS/float64(s.Requests), 3), a.maxMS)
	}
	s.setRates(secs)
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
