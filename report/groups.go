package report

import (
	"sort"

	"pinprobe/probe"
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

// groups tallies the responses by the values of the GroupBy headers.
type groups struct {
	headers []string // canonical names, in the order of probe.Options.GroupBy
	byKey   map[groupKey]*groupAcc
	order   []groupKey
	values  map[string]int // distinct values kept per header
}

type groupKey struct{ header, value string }

type groupAcc struct {
	t      *tally
	addrs  map[string]int64
	failed map[string]int64
}

// SetGroupBy names the headers of probe.Result.Groups, in order.
func (a *Aggregator) SetGroupBy(headers []string) {
	a.groups.headers = append([]string(nil), headers...)
}

func (g *groups) add(r *probe.Result, failed bool, addr string) {
	if r.Groups == nil {
		return
	}
	for i, v := range r.Groups {
		if v == "" || i >= len(g.headers) {
			continue
		}
		k := groupKey{g.headers[i], v}
		acc := g.byKey[k]
		if acc == nil {
			if g.byKey == nil {
				g.byKey, g.values = map[groupKey]*groupAcc{}, map[string]int{}
			}
			if g.values[k.header] >= maxGroupValues {
				k.value = OtherValues
				acc = g.byKey[k]
			}
			if acc == nil {
				acc = &groupAcc{t: newTally(), addrs: map[string]int64{}, failed: map[string]int64{}}
				g.byKey[k] = acc
				g.order = append(g.order, k)
				if k.value != OtherValues {
					g.values[k.header]++
				}
			}
		}
		acc.t.record(r, failed)
		if failed {
			acc.failed[addr]++
		}
		acc.addrs[addr]++
	}
}

// report lists the groups by header (in GroupBy order), most requests first.
func (g *groups) report(secs float64) []Group {
	out := []Group{}
	for _, k := range g.order {
		acc := g.byKey[k]
		out = append(out, Group{Header: k.header, Value: k.value, Stats: acc.t.stats(secs), Addresses: acc.addrs, FailedBy: acc.failed})
	}
	rank := map[string]int{}
	for i, h := range g.headers {
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
	return out
}
