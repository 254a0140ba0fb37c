package report

import (
	"fmt"
	"maps"
	"math"
)

// Validate checks the invariants every pinprobe report holds: at every level
// requests == ok + failed (groups too); the endpoints add up to their
// families and to the totals, status by status and error class by error
// class; each latency histogram holds exactly its scope's requests; and each
// timeline series adds up to its endpoint, and each latency series of the
// timeline to its scope's requests, bucket by bucket. Reports read back from files (report, compare)
// are refused when they break one; tests use it on everything they render.
func Validate(r *Report) error {
	f := &faults{}
	bad := f.bad
	if r.Schema != Schema {
		bad("schema %q: want %q", Shown(r.Schema), Schema)
	}
	validateStats("totals", &r.Totals, bad)
	validateSums(r, bad)
	for i := range r.Groups {
		g := &r.Groups[i]
		validateStats("group "+g.Header+": "+g.Value, &g.Stats, bad)
	}
	validateSeries(r, bad)
	validateLatencies(r, bad)
	return f.err()
}

// validateStats checks one scope's counts: requests == ok + failed, none
// negative, statuses and errors adding up to the requests, the failure
// rate, and a histogram holding exactly the requests.
func validateStats(scope string, s *Stats, bad badFunc) {
	if s.Requests != s.OK+s.Failed {
		bad("%s: requests %d != ok %d + failed %d", scope, s.Requests, s.OK, s.Failed)
	}
	if s.Requests < 0 || s.OK < 0 || s.Failed < 0 || s.Dropped < 0 || s.ClientErrors < 0 || s.Abandoned < 0 {
		bad("%s: negative count", scope)
	}
	var answered int64
	for _, n := range s.Status {
		answered += n
	}
	for _, n := range s.Errors {
		answered += n
	}
	if answered != s.Requests {
		bad("%s: statuses and errors add up to %d, not the %d requests", scope, answered, s.Requests)
	}
	if s.Requests > 0 && math.Abs(s.FailureRate-float64(s.Failed)/float64(s.Requests)) > 1e-5 {
		bad("%s: failure_rate %v is not failed/requests", scope, s.FailureRate)
	}
	if s.HDR != "" {
		n, err := HDRCount(s.HDR)
		switch {
		case err != nil:
			bad("%s: hdr does not decode: %v", scope, err)
		case n != s.Requests:
			bad("%s: hdr holds %d values, not the %d requests", scope, n, s.Requests)
		}
	}
}

// validateSums checks that the endpoints add up to their families and to
// the totals, status by status and error class by error class.
func validateSums(r *Report, bad badFunc) {
	fams := map[string]*Stats{}
	for name, s := range r.Families {
		if s == nil {
			bad("family %s: null", Shown(name))
			continue
		}
		validateStats("family "+Shown(name), s, bad)
		fams[name] = &Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	}
	sum := Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		scope := "endpoint " + Shown(e.Address) + " (" + Shown(e.Target) + ")"
		validateStats(scope, &e.Stats, bad)
		AddCounts(&sum, &e.Stats)
		f, ok := fams[e.Family]
		if !ok {
			if e.Requests > 0 || e.Dropped > 0 {
				bad("%s: family %q is not in families", scope, Shown(e.Family))
			}
			continue
		}
		AddCounts(f, &e.Stats)
	}
	same := func(scope string, got, want *Stats) {
		if got.Requests != want.Requests || got.OK != want.OK || got.Failed != want.Failed || got.Dropped != want.Dropped ||
			!maps.Equal(NonZero(got.Status), NonZero(want.Status)) || !maps.Equal(NonZero(got.Errors), NonZero(want.Errors)) {
			bad("%s: %d requests (%d failed, %d dropped, %v %v) but its endpoints add up to %d (%d failed, %d dropped, %v %v)",
				scope, got.Requests, got.Failed, got.Dropped, got.Status, got.Errors,
				want.Requests, want.Failed, want.Dropped, want.Status, want.Errors)
		}
		if got.Abandoned != want.Abandoned {
			bad("%s: %d requests abandoned, but its endpoints add up to %d", scope, got.Abandoned, want.Abandoned)
		}
	}
	same("totals", &r.Totals, &sum)
	for name, f := range fams {
		same("family "+Shown(name), r.Families[name], f)
	}
}

// validateSeries checks that each timeline series adds up to its endpoint.
func validateSeries(r *Report, bad badFunc) {
	if n := len(r.Timeline.Series); n > 0 {
		if n != len(r.Endpoints) {
			bad("timeline: %d series for %d endpoints", n, len(r.Endpoints))
		} else {
			for i, s := range r.Timeline.Series {
				e := &r.Endpoints[i]
				if len(s.Requests) != len(s.Failed) {
					bad("timeline %s: %d request buckets, %d failure buckets", Shown(s.Address), len(s.Requests), len(s.Failed))
					continue
				}
				req, failed, _ := bucketSums(s.Requests, s.Failed)
				if s.Address != e.Address || req != e.Requests || failed != e.Failed {
					bad("timeline %s: %d requests, %d failed; its endpoint %s has %d, %d", Shown(s.Address), req, failed, Shown(e.Address), e.Requests, e.Failed)
				}
			}
		}
	}
}

// bucketSums adds up a series' buckets of requests and failed (as many),
// and finds the first that fails more than it holds (-1: none).
func bucketSums(requests, failed []int64) (req, fail int64, over int) {
	over = -1
	for i := range min(len(requests), len(failed)) {
		if failed[i] > requests[i] && over < 0 {
			over = i
		}
		req += requests[i]
		fail += failed[i]
	}
	return req, fail, over
}

// AddCounts adds src's requests, outcomes, statuses and errors to dst's.
func AddCounts(dst, src *Stats) {
	dst.Requests += src.Requests
	dst.OK += src.OK
	dst.Failed += src.Failed
	dst.Dropped += src.Dropped
	dst.Abandoned += src.Abandoned
	for k, n := range src.Status {
		dst.Status[k] += n
	}
	for k, n := range src.Errors {
		dst.Errors[k] += n
	}
}

// NonZero is m without its zero counts.
func NonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range m {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}

// validateLatencies checks the timeline's latency series: each has a
// bucket for every bucket of the timeline and counts exactly its scope's
// requests in each (an endpoint's, its family's endpoints', an instance
// group's); a group series adds up to its group, and fails no more
// requests in a bucket than it holds.
func validateLatencies(r *Report, bad badFunc) {
	tl := &r.Timeline
	n := 0
	for _, s := range tl.Series {
		n = max(n, len(s.Requests))
	}
	for i := range tl.Series {
		s := &tl.Series[i]
		switch {
		case s.Latency == nil:
			continue
		case len(s.Requests) != n:
			bad("timeline %s (%s): latency for %d buckets of requests, not the timeline's %d", Shown(s.Address), Shown(s.Target), len(s.Requests), n)
			continue
		}
		if msg := latencySums(s.Latency, n, func(j int) int64 { return s.Requests[j] }); msg != "" {
			bad("timeline %s (%s): latency: %s", Shown(s.Address), Shown(s.Target), msg)
		}
	}
	seen := map[string]bool{}
	validateFamilyLatencies(r, n, seen, bad)
	validateGroupLatencies(r, n, seen, bad)
}

// latencyShape says what is wrong with l's shape for n buckets, "" when
// nothing is.
func latencyShape(l *Latencies, n int) string {
	if len(l.Bins) != n || len(l.Counts) != n {
		return fmt.Sprintf("%d bins and %d counts for %d buckets", len(l.Bins), len(l.Counts), n)
	}
	for i := range l.Bins {
		if len(l.Bins[i]) != len(l.Counts[i]) {
			return fmt.Sprintf("bucket %d: %d bins, %d counts", i, len(l.Bins[i]), len(l.Counts[i]))
		}
	}
	return ""
}

// latencySums says where l, of n buckets, does not count want(i) requests
// in bucket i; "" when it counts them all.
func latencySums(l *Latencies, n int, want func(i int) int64) string {
	if msg := latencyShape(l, n); msg != "" {
		return msg
	}
	for i := range n {
		if got, w := l.Total(i), want(i); got != w {
			return fmt.Sprintf("bucket %d: latencies of %d requests, not %d", i, got, w)
		}
	}
	return ""
}

// validateFamilyLatencies checks the families' latency series: each of a
// family of the report, once, counting its endpoints' requests in each of
// the n buckets (when every endpoint has its series; else the timeline is
// refused before).
func validateFamilyLatencies(r *Report, n int, seen map[string]bool, bad badFunc) {
	tl := &r.Timeline
	famReq := map[string][]int64{}
	if len(tl.Series) == len(r.Endpoints) {
		for e := range r.Endpoints {
			f := r.Endpoints[e].Family
			if famReq[f] == nil {
				famReq[f] = make([]int64, n)
			}
			for j, c := range tl.Series[e].Requests {
				famReq[f][j] += c
			}
		}
	}
	for k := range tl.Families {
		f := &tl.Families[k]
		switch _, ok := r.Families[f.Family]; {
		case !ok:
			bad("timeline: latency of family %q, which is not in families", Shown(f.Family))
			continue
		case seen[f.Family]:
			bad("timeline: latency of family %s twice", Shown(f.Family))
			continue
		}
		seen[f.Family] = true
		if req, ok := famReq[f.Family]; ok {
			if msg := latencySums(&f.Latency, n, func(j int) int64 { return req[j] }); msg != "" {
				bad("timeline: latency of family %s: %s", Shown(f.Family), msg)
			}
		}
	}
}

// validateGroupLatencies checks the instance groups' series: each of a
// group of the report, once, n buckets that fail no more than they hold
// and add up to the group, its latency counting its requests.
func validateGroupLatencies(r *Report, n int, seen map[string]bool, bad badFunc) {
	tl := &r.Timeline
	groups := make(map[groupKey]*Group, len(r.Groups))
	for i := range r.Groups {
		groups[groupKey{r.Groups[i].Header, r.Groups[i].Value}] = &r.Groups[i]
	}
	for k := range tl.Groups {
		g := &tl.Groups[k]
		name := "timeline: group " + Shown(g.Header) + ": " + Shown(g.Value)
		key := groupKey{g.Header, g.Value}
		grp := groups[key]
		switch {
		case grp == nil:
			bad("%s: no such group in groups", name)
			continue
		case seen["\x00"+g.Header+"\x00"+g.Value]:
			bad("%s: twice", name)
			continue
		}
		seen["\x00"+g.Header+"\x00"+g.Value] = true
		if len(g.Requests) != n || len(g.Failed) != n {
			bad("%s: %d request buckets and %d failure buckets for %d buckets", name, len(g.Requests), len(g.Failed), n)
			continue
		}
		var req, failed int64
		for i := range n {
			if g.Failed[i] > g.Requests[i] {
				bad("%s: bucket %d: %d failed of %d responses", name, i, g.Failed[i], g.Requests[i])
			}
			req += g.Requests[i]
			failed += g.Failed[i]
		}
		if req != grp.Requests || failed != grp.Failed {
			bad("%s: %d responses, %d failed; the group has %d, %d", name, req, failed, grp.Requests, grp.Failed)
		}
		if msg := latencySums(&g.Latency, n, func(i int) int64 { return g.Requests[i] }); msg != "" {
			bad("%s: latency: %s", name, msg)
		}
	}
}
