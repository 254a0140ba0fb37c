package report

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Bounds of the groups by instance header.
const (
	// maxGroupValues is how many values of one header are kept apart; the
	// responses with any other value count together in an "other values"
	// group. An instance header has a few values; a header with more is
	// probably not one (a request ID), and stays bounded all the same.
	maxGroupValues = 64

	// groupSlice is the width of a time slice of the groups' time strata
	// at first; it doubles whenever the run would need more than
	// maxGroupSlices of them, so a long run has at most that many.
	groupSlice     = time.Second
	maxGroupSlices = 64
)

// MaxGroupTimes bounds a saved group's time strata (distinct shapes).
const MaxGroupTimes = 1 << 14

// OtherValues is the value of the group that counts the responses whose
// header value came past the first maxGroupValues.
const OtherValues = "(other values)"

// Group is the responses that named one instance: one value of one
// instance header (X-Served-By: gw-3), with their tallies.
type Group struct {
	Header string `json:"header"`
	Value  string `json:"value"`
	Stats
	// Addresses counts the group's responses by the address they came
	// from, and FailedBy its failed responses.
	Addresses map[string]int64 `json:"addresses"`
	FailedBy  map[string]int64 `json:"failed_by_address"`
	// Times splits a failing group's responses, and the other responses
	// of the same address at the same time, into strata: one per address
	// and slice of the run (a second, or longer in a long run), kept where
	// both have responses, each shape once with the number of strata that
	// had it. They let the judge compare an instance with the rest at the
	// same time, so that an instance that only answered while everything
	// failed more (one added by an autoscaler during the incident) is not
	// taken for a failing one. Empty for a group that never failed.
	Times []TimeCounts `json:"times"`
}

// TimeCounts is one shape of time stratum of a group (Group.Times): the
// group's responses and failures, the other responses of the same address
// in the same slice and theirs, and how many strata had these counts.
type TimeCounts struct {
	Requests     int64 `json:"requests"`
	Failed       int64 `json:"failed"`
	RestRequests int64 `json:"rest_requests"`
	RestFailed   int64 `json:"rest_failed"`
	Strata       int64 `json:"strata"`
}

// GroupTally rolls responses up by instance header and value: the
// aggregator counts each response into it, Merge each saved group.
type GroupTally struct {
	Headers []string // canonical names, in the order they rank
	byKey   map[groupKey]*groupAcc
	order   []groupKey
	values  map[string]int // distinct values kept per header

	// The time slices: from t0, width wide; resp counts every response of
	// each address by slice (see Response).
	t0    time.Time
	width time.Duration
	resp  map[string][]sliceCount
}

// sliceCount is a slice's responses and failed responses.
type sliceCount [2]int64

// slice returns at's slice, coarsening the slices so that there are at
// most maxGroupSlices.
func (g *GroupTally) slice(at time.Time) int {
	if g.t0.IsZero() {
		g.t0, g.width = at, groupSlice
	}
	i := max(int(at.Sub(g.t0)/g.width), 0)
	for i >= maxGroupSlices {
		g.width *= 2
		g.resp = coarsenSlices(g.resp)
		for _, a := range g.byKey {
			a.times = coarsenSlices(a.times)
		}
		i = max(int(at.Sub(g.t0)/g.width), 0)
	}
	return i
}

// coarsenSlices merges pairs of slices.
func coarsenSlices(m map[string][]sliceCount) map[string][]sliceCount {
	for k, s := range m {
		out := make([]sliceCount, (len(s)+1)/2)
		for i, c := range s {
			out[i/2][0] += c[0]
			out[i/2][1] += c[1]
		}
		m[k] = out
	}
	return m
}

// countAt counts one response, failed or not, into slice i of m[addr].
func countAt(m map[string][]sliceCount, addr string, i int, failed bool) {
	s := m[addr]
	for len(s) <= i {
		s = append(s, sliceCount{})
	}
	s[i][0]++
	if failed {
		s[i][1]++
	}
	m[addr] = s
}

// Response counts one response of addr (any response, with an instance
// header or not; not a request that got none) at time at: the other
// responses a group is weighed against in its time strata.
func (g *GroupTally) Response(addr string, at time.Time, failed bool) {
	i := g.slice(at)
	if g.resp == nil {
		g.resp = map[string][]sliceCount{}
	}
	countAt(g.resp, addr, i, failed)
}

type groupKey struct{ header, value string }

// groupAcc is one group's tallies: a Tally of the responses the aggregator
// counts, or the sum of the saved groups Merge counts (their histograms
// kept encoded until the group is written).
type groupAcc struct {
	t      *Tally
	s      *StatsSum
	addrs  map[string]int64
	failed map[string]int64
	times  map[string][]sliceCount // by address and slice
	saved  []TimeCounts            // of saved groups (Merge)
}

// acc returns the accumulator of header's value, made on first use (of
// saved groups when saved); past maxGroupValues values of a header, the
// "other values" one.
func (g *GroupTally) acc(header, value string, saved bool) *groupAcc {
	k := groupKey{header, value}
	if a := g.byKey[k]; a != nil {
		return a
	}
	if g.byKey == nil {
		g.byKey, g.values = map[groupKey]*groupAcc{}, map[string]int{}
	}
	if !slices.Contains(g.Headers, header) {
		g.Headers = append(g.Headers, header)
	}
	if k.value != OtherValues && g.values[header] >= maxGroupValues {
		k.value = OtherValues
		if a := g.byKey[k]; a != nil {
			return a
		}
	}
	a := &groupAcc{addrs: map[string]int64{}, failed: map[string]int64{}, times: map[string][]sliceCount{}}
	if saved {
		a.s = NewStatsSum()
	} else {
		a.t = NewTally()
	}
	g.byKey[k] = a
	g.order = append(g.order, k)
	if k.value != OtherValues {
		g.values[header]++
	}
	return a
}

// Add counts one response that named value in header, from addr, sent at
// at; Response counts it too, among every response of addr.
func (g *GroupTally) Add(header, value, addr string, at time.Time, o Outcome) {
	a := g.acc(header, value, false)
	a.t.Record(o)
	if o.Failed {
		a.failed[addr]++
	}
	a.addrs[addr]++
	countAt(a.times, addr, g.slice(at), o.Failed)
}

// Apart reports whether header's value is counted as a group of its own,
// not among the other values: it was among the first maxGroupValues values
// of header counted.
func (g *GroupTally) Apart(header, value string) bool {
	_, ok := g.byKey[groupKey{header, value}]
	return ok && value != OtherValues
}

// AddSaved counts a saved group in. A GroupTally counts responses (Add) or
// saved groups, never both.
func (g *GroupTally) AddSaved(s *Group) {
	a := g.acc(s.Header, s.Value, true)
	a.s.Add(&s.Stats)
	for ad, n := range s.Addresses {
		a.addrs[ad] += n
	}
	for ad, n := range s.FailedBy {
		a.failed[ad] += n
	}
	// Strata of different runs are strata all the same: they add up by
	// shape. A value folded into the other values keeps none.
	if s.Value != OtherValues && a != g.byKey[groupKey{s.Header, OtherValues}] {
		a.saved = append(a.saved, s.Times...)
	}
}

// addTimes adds up strata by shape, in a stable order.
func addTimes(ts ...[]TimeCounts) []TimeCounts {
	out := []TimeCounts{}
	at := map[TimeCounts]int{}
	for _, l := range ts {
		for _, t := range l {
			k := t
			k.Strata = 0
			if i, ok := at[k]; ok {
				out[i].Strata += t.Strata
				continue
			}
			at[k] = len(out)
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b TimeCounts) int {
		return cmp.Or(cmp.Compare(a.Requests, b.Requests), cmp.Compare(a.Failed, b.Failed),
			cmp.Compare(a.RestRequests, b.RestRequests), cmp.Compare(a.RestFailed, b.RestFailed))
	})
	return out
}

// times returns the time strata of acc, a group with failed responses:
// none for one that never failed, and none when there would be more
// shapes than MaxGroupTimes (the judge then weighs the group by address
// only).
func (g *GroupTally) times(acc *groupAcc, failed int64) []TimeCounts {
	if failed == 0 {
		return []TimeCounts{}
	}
	var live []TimeCounts
	for addr, s := range acc.times {
		all := g.resp[addr]
		for i, c := range s {
			if c[0] == 0 || i >= len(all) {
				continue
			}
			rest, restF := all[i][0]-c[0], all[i][1]-c[1]
			if rest <= 0 {
				continue
			}
			live = append(live, TimeCounts{Requests: c[0], Failed: c[1], RestRequests: rest, RestFailed: min(max(restF, 0), rest), Strata: 1})
		}
	}
	out := addTimes(live, acc.saved)
	if len(out) > MaxGroupTimes {
		return []TimeCounts{}
	}
	return out
}

// Report lists the groups by header (in GroupBy order), most requests first.
func (g *GroupTally) Report(secs float64) []Group {
	out, _ := g.SavedGroups(secs) // only saved groups can fail
	return out
}

// SavedGroups is Report of saved groups (AddSaved), decoding their
// histograms one group at a time; it fails when one does not decode.
func (g *GroupTally) SavedGroups(secs float64) ([]Group, error) {
	out := []Group{}
	var h *Hist
	for _, k := range g.order {
		acc := g.byKey[k]
		var st Stats
		if acc.s != nil {
			if h == nil {
				h = NewLatencyHist()
			}
			if err := acc.s.Hist(h); err != nil {
				return nil, fmt.Errorf("group %s: %s: %w", k.header, k.value, err)
			}
			st = acc.s.Stats(h, secs)
			acc.s = nil
		} else {
			st = acc.t.Stats(secs)
		}
		times := []TimeCounts{}
		if k.value != OtherValues {
			times = g.times(acc, st.Failed)
		}
		out = append(out, Group{Header: k.header, Value: k.value, Stats: st, Addresses: acc.addrs, FailedBy: acc.failed, Times: times})
	}
	rank := map[string]int{}
	for i, h := range g.Headers {
		rank[h] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Header != b.Header {
			return rank[a.Header] < rank[b.Header]
		}
		if (a.Value == OtherValues) != (b.Value == OtherValues) {
			return b.Value == OtherValues
		}
		return a.Requests > b.Requests
	})
	return out, nil
}
