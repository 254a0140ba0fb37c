package report

import (
	"fmt"
	"slices"
	"sort"
)

// Bounds of the groups by instance header.
const (
	// maxGroupValues is how many values of one header are kept apart; the
	// responses with any other value count together in an "other values"
	// group. An instance header has a few values; a header with more is
	// probably not one (a request ID), and stays bounded all the same.
	maxGroupValues = 64
)

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
}

// groupTally rolls responses up by instance header and value: the
// aggregator counts each response into it, Merge each saved group.
type GroupTally struct {
	Headers []string // canonical names, in the order they rank
	byKey   map[groupKey]*groupAcc
	order   []groupKey
	values  map[string]int // distinct values kept per header
}

type groupKey struct{ header, value string }

// groupAcc is one group's tallies: a Tally of the responses the aggregator
// counts, or the sum of the saved groups Merge counts (their histograms
// kept encoded until the group is written).
type groupAcc struct {
	t      *Tally
	s      *scopeSum
	addrs  map[string]int64
	failed map[string]int64
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
	a := &groupAcc{addrs: map[string]int64{}, failed: map[string]int64{}}
	if saved {
		a.s = newScopeSum()
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

// add counts one response that named value in header, from addr.
func (g *GroupTally) Add(header, value, addr string, o Outcome) {
	a := g.acc(header, value, false)
	a.t.Record(o)
	if o.Failed {
		a.failed[addr]++
	}
	a.addrs[addr]++
}

// addSaved counts a saved group in. A GroupTally counts responses (Add) or
// saved groups, never both.
func (g *GroupTally) addSaved(s *Group) {
	a := g.acc(s.Header, s.Value, true)
	a.s.add(&s.Stats)
	for ad, n := range s.Addresses {
		a.addrs[ad] += n
	}
	for ad, n := range s.FailedBy {
		a.failed[ad] += n
	}
}

// Report lists the groups by header (in GroupBy order), most requests first.
func (g *GroupTally) Report(secs float64) []Group {
	out, _ := g.report(secs) // only saved groups can fail
	return out
}

// report is Report, decoding saved groups' histograms one group at a time.
func (g *GroupTally) report(secs float64) ([]Group, error) {
	out := []Group{}
	var h *Scratch
	for _, k := range g.order {
		acc := g.byKey[k]
		var st Stats
		if acc.s != nil {
			if h == nil {
				h = NewScratch()
			}
			if err := acc.s.hist(h); err != nil {
				return nil, fmt.Errorf("group %s: %s: %w", k.header, k.value, err)
			}
			st = acc.s.stats(h, secs)
			acc.s = nil
		} else {
			st = acc.t.Stats(secs)
		}
		out = append(out, Group{Header: k.header, Value: k.value, Stats: st, Addresses: acc.addrs, FailedBy: acc.failed})
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
