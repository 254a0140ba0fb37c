package merge

import (
	"slices"

	"github.com/pinprobe/pinprobe/internal/report"
)

// vantagesNamed reports whether any of reports names a vantage: their
// merge breaks its counts down by vantage.
func vantagesNamed(reports []*report.Report) bool {
	for _, r := range reports {
		if r.Vantage != "" || len(r.Vantages) > 0 {
			return true
		}
	}
	return false
}

// mergeVantages is the breakdown by vantage of a merge of reports into
// out (whose endpoints are merged): each run counted under its vantage, a
// merged input's vantages added by name (so merges of merges stay exact),
// each endpoint's timeline from vtl (nil: none). nil when no input names one.
func mergeVantages(reports []*report.Report, out *report.Report, vtl *vantageTimelines) []report.VantageStats {
	if !vantagesNamed(reports) {
		return nil
	}
	var vs []report.VantageStats
	at := map[string]int{}
	get := func(name string) *report.VantageStats {
		i, ok := at[name]
		if !ok {
			i = len(vs)
			at[name] = i
			vs = append(vs, report.VantageStats{Name: name, Families: map[string]report.ConnStats{}})
		}
		return &vs[i]
	}
	type key struct {
		vantage string
		ep      report.EpKey
	}
	eps := map[key]*report.VantageEndpoint{}
	add := func(v *report.VantageStats, e report.VantageEndpoint) {
		v.Requests += e.Requests
		v.Failed += e.Failed
		v.Dropped += e.Dropped
		f := v.Families[e.Family]
		f.Requests += e.Requests
		f.Failed += e.Failed
		v.Families[e.Family] = f
		k := key{v.Name, report.EpKey{Target: e.Target, Address: e.Address}}
		if p := eps[k]; p != nil {
			p.Requests += e.Requests
			p.Failed += e.Failed
			p.Dropped += e.Dropped
			return
		}
		c := e
		eps[k] = &c
	}
	for _, r := range reports {
		if len(r.Inputs) > 0 {
			// A merged input: its vantages, or one unnamed vantage of all
			// its runs when it kept none.
			if len(r.Vantages) == 0 {
				v := get("")
				v.Runs += len(r.Inputs)
				for i := range r.Endpoints {
					add(v, report.VantageEndpointOf(&r.Endpoints[i]))
				}
				continue
			}
			for _, rv := range r.Vantages {
				v := get(rv.Name)
				v.Runs += rv.Runs
				for _, e := range rv.Endpoints {
					add(v, e)
				}
			}
			continue
		}
		v := get(r.Vantage)
		v.Runs++
		for i := range r.Endpoints {
			add(v, report.VantageEndpointOf(&r.Endpoints[i]))
		}
	}
	for i := range vs {
		v := &vs[i]
		v.Endpoints = []report.VantageEndpoint{}
		for j := range out.Endpoints {
			if e := eps[key{v.Name, report.KeyOf(&out.Endpoints[j])}]; e != nil {
				e.Timeline = vtl.series(v.Name, j)
				v.Endpoints = append(v.Endpoints, *e)
			}
		}
	}
	return vs
}

// vantageTimelines gathers, while a merge lays out its timeline, each
// vantage's requests and failures per endpoint and merged bucket: a run's
// series under its vantage, a merged input's vantage series under theirs
// (one that kept none leaves that vantage's endpoint without a timeline).
// Each vantage's series span only the buckets its runs reach.
type vantageTimelines struct {
	n       int               // buckets of the merged timeline
	span    map[string][2]int // by vantage: the first and last bucket its runs reach
	acc     map[vantageEp]*vantageAcc
	missing map[vantageEp]bool // a merged input kept no timeline of it
}

type vantageEp struct {
	vantage string
	ep      int // the merged endpoint's index
}

// vantageAcc is one vantage endpoint's counts from bucket lo on.
type vantageAcc struct {
	lo          int
	req, failed []int64
}

func newVantageTimelines(n int) *vantageTimelines {
	return &vantageTimelines{n: n, span: map[string][2]int{}, acc: map[vantageEp]*vantageAcc{}, missing: map[vantageEp]bool{}}
}

// vantageSources calls f with each series of r that a merge counts under
// a vantage: a run's endpoint series under its vantage, a merged input's
// under "" when it kept no breakdown by vantage, or else its vantage
// series under their vantages. first is the bucket of r's timeline that
// req[0] and failed[0] count; kept is false for a vantage series that a
// merged input did not keep (it was merged before they were).
func vantageSources(r *report.Report, f func(vantage string, ep report.EpKey, first int, req, failed []int64, kept bool)) {
	if len(r.Inputs) == 0 || len(r.Vantages) == 0 {
		name := r.Vantage
		if len(r.Inputs) > 0 {
			name = ""
		}
		for si, ser := range r.Timeline.Series {
			if si < len(r.Endpoints) {
				f(name, report.KeyOf(&r.Endpoints[si]), 0, ser.Requests, ser.Failed, true)
			}
		}
		return
	}
	for _, rv := range r.Vantages {
		for _, e := range rv.Endpoints {
			k := report.EpKey{Target: e.Target, Address: e.Address}
			if e.Timeline == nil {
				f(rv.Name, k, 0, nil, nil, e.Requests == 0)
				continue
			}
			f(rv.Name, k, e.Timeline.First, e.Timeline.Requests, e.Timeline.Failed, true)
		}
	}
}

// reach widens each vantage's span by the buckets r's series reach, at(k)
// being the merged bucket of r's bucket k.
func (vt *vantageTimelines) reach(r *report.Report, at func(k int) int) {
	vantageSources(r, func(v string, _ report.EpKey, first int, req, _ []int64, _ bool) {
		if len(req) == 0 {
			return
		}
		lo, hi := at(first), at(first+len(req)-1)
		if sp, ok := vt.span[v]; ok {
			lo, hi = min(lo, sp[0]), max(hi, sp[1])
		}
		vt.span[v] = [2]int{lo, hi}
	})
}

// add counts r's series in, at(k) being the merged bucket of r's bucket k
// and index the merged endpoints' indexes.
func (vt *vantageTimelines) add(r *report.Report, at func(k int) int, index map[report.EpKey]int) {
	vantageSources(r, func(v string, ep report.EpKey, first int, req, failed []int64, kept bool) {
		j := index[ep]
		key := vantageEp{v, j}
		if !kept {
			vt.missing[key] = true
			return
		}
		if len(req) == 0 {
			return
		}
		a := vt.acc[key]
		if a == nil {
			sp := vt.span[v]
			a = &vantageAcc{lo: sp[0], req: make([]int64, sp[1]-sp[0]+1), failed: make([]int64, sp[1]-sp[0]+1)}
			vt.acc[key] = a
		}
		for k := range req {
			b := at(first+k) - a.lo
			a.req[b] += req[k]
			a.failed[b] += failed[k]
		}
	})
}

// series is the timeline of endpoint j from vantage v, its empty buckets
// at either end left out; nil when it is not known.
func (vt *vantageTimelines) series(v string, j int) *report.VantageSeries {
	if vt == nil || vt.missing[vantageEp{v, j}] {
		return nil
	}
	a := vt.acc[vantageEp{v, j}]
	if a == nil {
		return &report.VantageSeries{Requests: []int64{}, Failed: []int64{}}
	}
	lo, hi := 0, len(a.req)
	for lo < hi && a.req[lo] == 0 {
		lo++
	}
	for hi > lo && a.req[hi-1] == 0 {
		hi--
	}
	if lo == hi {
		return &report.VantageSeries{Requests: []int64{}, Failed: []int64{}}
	}
	return &report.VantageSeries{First: a.lo + lo, Requests: slices.Clone(a.req[lo:hi]), Failed: slices.Clone(a.failed[lo:hi])}
}
