package judge

import (
	"fmt"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// slowTests is how many latency tests the verdict makes: each endpoint
// against the other endpoints of its URL, each instance against the other
// values of its header.
func (j *judgement) slowTests() int {
	n := 0
	for _, tg := range j.g.targets {
		if k := len(j.latencyEndpoints(tg)); k > 1 {
			n += k
		}
	}
	for _, h := range j.headers {
		n += len(j.groupsByHead[h])
	}
	return n
}

// latencyEndpoints are the endpoints of URL tg with latencies to compare.
func (j *judgement) latencyEndpoints(tg string) []int {
	var idx []int
	for _, i := range j.g.endpoints[tg] {
		if e := &j.r.Endpoints[i]; e.Requests > 0 && e.HDR != "" {
			idx = append(idx, i)
		}
	}
	return idx
}

// slow names the endpoints (within their URL) and the groups (within their
// header) whose latency is higher than the rest's, significantly and by
// enough to matter. Latency gets the verdict's Alpha of its own, split
// over its tests. A client that could not send many of its requests (out of
// descriptors or ports) is itself slow, and would blame backends: then
// latency is not compared.
func (j *judgement) slow() {
	r := j.r
	j.level.SlowEach = j.level.Alpha / float64(max(j.slowTests(), 1))
	if c := r.Totals.ClientErrors; c > 0 && c*10 >= r.Totals.Requests {
		return
	}
	if t := r.Totals; t.Requests > 0 && t.Failed == t.Requests {
		// Every request failed: latencies are of failures alone (a timeout
		// against a refusal), which the verdict says as how they failed.
		return
	}
	// among tests each scope of idx against the others, enc giving its
	// histogram and finding what it is.
	among := func(idx []int, enc func(i int) string, finding func(i int) report.SlowFinding) {
		encs := make([]string, len(idx))
		for k, i := range idx {
			encs[k] = enc(i)
		}
		lo := newLeaveOneOut(encs)
		for k, i := range idx {
			if own, rest := lo.pair(k); own != nil {
				if res := histTest(own, rest, j.level.SlowEach); res.Slow {
					f := finding(i)
					f.SlowResult = res
					j.slows = append(j.slows, f)
				}
			}
		}
	}
	for _, tg := range j.g.targets {
		if idx := j.latencyEndpoints(tg); len(idx) > 1 {
			among(idx, func(i int) string { return r.Endpoints[i].HDR }, func(i int) report.SlowFinding {
				e := &r.Endpoints[i]
				return report.SlowFinding{Kind: report.TestEndpoint, Scope: "endpoint " + e.Address + " (" + e.Target + ")", Address: e.Address, Target: e.Target}
			})
		}
	}
	for _, h := range j.headers {
		among(j.groupsByHead[h], func(i int) string { return r.Groups[i].HDR }, func(i int) report.SlowFinding {
			g := &r.Groups[i]
			return report.SlowFinding{Kind: report.TestGroup, Scope: "group " + g.Header + ": " + g.Value, Header: g.Header, Value: g.Value}
		})
	}
}

// slowNotes say each slow finding in a sentence, or why latency was not
// compared.
func (j *judgement) slowNotes() []string {
	r := j.r
	if c := r.Totals.ClientErrors; c > 0 && c*10 >= r.Totals.Requests {
		return []string{"Latency is not compared between addresses: this machine could not send many of its requests, so it was slowed by its own trouble."}
	}
	var notes []string
	for _, f := range j.slows {
		who, than := f.Header+": "+f.Value, "the other values of "+f.Header
		if f.Kind == report.TestEndpoint {
			who, than = f.Address, "the other addresses of its URL"
			if len(j.g.targets) > 1 {
				who += " (" + j.short[f.Target] + ")"
			}
		}
		res := f.SlowResult
		how := fmt.Sprintf("median %s against %s (%.1f×)", words.Latency(res.MedianMS, 1), words.Latency(res.RestMedianMS, 1), res.Ratio)
		if res.Ratio < SlowRatio {
			how = fmt.Sprintf("its slowest %s of requests took at least %.1f× as long as the rest's (p99 %s against %s)",
				words.PctRate(res.Share), SlowRatio, words.Latency(res.P99MS, 1), words.Latency(res.RestP99MS, 1))
		}
		notes = append(notes, fmt.Sprintf("%s is slow against %s: %s, %s.", who, than, how, words.PValue(res.P)))
	}
	return notes
}

// leaveOneOut gives, for each of several encoded histograms, its own and the
// merge of the others: the whole, merged once, less its own counts, in two
// scratch histograms, so thousands of addresses cost three histograms and
// one merge, not thousands.
type leaveOneOut struct {
	encs            []string
	ok              []bool // decodes
	whole, one, rem *report.Hist
}

func newLeaveOneOut(encs []string) *leaveOneOut {
	lo := &leaveOneOut{encs: encs, ok: make([]bool, len(encs)), whole: report.NewLatencyHist(), one: report.NewLatencyHist(), rem: report.NewLatencyHist()}
	for k, enc := range encs {
		lo.ok[k] = lo.whole.Add(enc) == nil
	}
	return lo
}

// pair is the k-th histogram and the merge of the others, valid until the
// next call; nil, nil where its encoding is bad.
func (lo *leaveOneOut) pair(k int) (own, rest *report.Hist) {
	if !lo.ok[k] {
		return nil, nil
	}
	lo.one.Reset()
	if lo.one.Add(lo.encs[k]) != nil {
		return nil, nil
	}
	lo.rem.SetDifference(lo.whole, lo.one)
	return lo.one, lo.rem
}
