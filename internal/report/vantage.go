package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxVantageLen is the longest vantage name: a DNS label's length, which
// every zone, region and host name pinprobe is given fits in.
const MaxVantageLen = 63

// VantageStats is what one vantage point — the place a run was probed
// from, Report.Vantage — saw in a merged report: its runs, requests and
// failures, per family and per endpoint. The vantages of a merged report
// add up to its totals, families and endpoints exactly.
type VantageStats struct {
	// Name is the vantage's name; "" for the runs that named none (reports
	// written before runs recorded their vantage).
	Name     string `json:"name"`
	Runs     int    `json:"runs"`
	Requests int64  `json:"requests"`
	Failed   int64  `json:"failed"`
	Dropped  int64  `json:"dropped"`
	// Families counts the requests and failures of each family ("ipv4",
	// "ipv6") from this vantage.
	Families map[string]ConnStats `json:"families"`
	// Endpoints are the endpoints it probed, in the merged report's order.
	Endpoints []VantageEndpoint `json:"endpoints"`
}

// VantageEndpoint is one endpoint's requests and failures from one
// vantage point.
type VantageEndpoint struct {
	Target   string `json:"target"`
	Address  string `json:"address"`
	Family   string `json:"family"`
	Requests int64  `json:"requests"`
	Failed   int64  `json:"failed"`
	Dropped  int64  `json:"dropped"`
	// Timeline is when they were sent: their requests and failures in the
	// buckets of the report's timeline, so that vantages are compared only
	// over the time they share. nil in a report merged before it was kept
	// and when the report has no timeline.
	Timeline *VantageSeries `json:"timeline,omitempty"`
}

// VantageSeries is one endpoint's requests and failures from one vantage
// over time: Requests[i] and Failed[i] are those of bucket First+i of the
// report's timeline (Report.Timeline); the buckets before First and after
// the last hold none of them. Over every vantage, they add up to the
// endpoint's series, bucket by bucket.
type VantageSeries struct {
	First    int     `json:"first"`
	Requests []int64 `json:"requests"`
	Failed   []int64 `json:"failed"`
}

// CheckVantage reports whether name is a vantage name: 1 to MaxVantageLen
// letters, digits, '.', '_' and '-', starting with a letter or digit (a
// zone, region or host name: "eu-west-1a", "laptop.corp").
func CheckVantage(name string) error {
	switch {
	case name == "":
		return errors.New("empty: want a name such as eu-west-1a")
	case len(name) > MaxVantageLen:
		return fmt.Errorf("%d characters: at most %d", len(name), MaxVantageLen)
	case !alnum(name[0]):
		return errors.New("must start with a letter or digit")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("character %q at %d: want letters, digits, '.', '_' and '-'", c, i+1)
		}
	}
	return nil
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// HostVantage makes a vantage name of a host name (the default of
// --vantage): characters a vantage name cannot hold become '-', leading
// ones are dropped, and it is cut to MaxVantageLen; "" when nothing is
// left.
func HostVantage(host string) string {
	var b strings.Builder
	for i := 0; i < len(host) && b.Len() < MaxVantageLen; i++ {
		c := host[i]
		switch {
		case alnum(c):
			b.WriteByte(c)
		case b.Len() == 0:
		case c == '.' || c == '_' || c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// vantagesNamed reports whether any of reports names a vantage: their
// merge breaks its counts down by vantage.
func vantagesNamed(reports []*Report) bool {
	for _, r := range reports {
		if r.Vantage != "" || len(r.Vantages) > 0 {
			return true
		}
	}
	return false
}

// mergeVantages is the breakdown by vantage of a merge of reports into
// out (whose endpoints are merged): each run counted under its vantage, a
// merged input's vantages kept as they are, each endpoint's timeline from
// vtl (nil: none). nil when no input names one.
func mergeVantages(reports []*Report, out *Report, vtl *vantageTimelines) []VantageStats {
	if !vantagesNamed(reports) {
		return nil
	}
	var vs []VantageStats
	at := map[string]int{}
	get := func(name string) *VantageStats {
		i, ok := at[name]
		if !ok {
			i = len(vs)
			at[name] = i
			vs = append(vs, VantageStats{Name: name, Families: map[string]ConnStats{}})
		}
		return &vs[i]
	}
	type key struct {
		vantage string
		ep      EpKey
	}
	eps := map[key]*VantageEndpoint{}
	add := func(v *VantageStats, e VantageEndpoint) {
		v.Requests += e.Requests
		v.Failed += e.Failed
		v.Dropped += e.Dropped
		f := v.Families[e.Family]
		f.Requests += e.Requests
		f.Failed += e.Failed
		v.Families[e.Family] = f
		k := key{v.Name, EpKey{e.Target, e.Address}}
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
					add(v, vantageEndpoint(&r.Endpoints[i]))
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
			add(v, vantageEndpoint(&r.Endpoints[i]))
		}
	}
	for i := range vs {
		v := &vs[i]
		v.Endpoints = []VantageEndpoint{}
		for j := range out.Endpoints {
			if e := eps[key{v.Name, KeyOf(&out.Endpoints[j])}]; e != nil {
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
func vantageSources(r *Report, f func(vantage string, ep EpKey, first int, req, failed []int64, kept bool)) {
	if len(r.Inputs) == 0 || len(r.Vantages) == 0 {
		name := r.Vantage
		if len(r.Inputs) > 0 {
			name = ""
		}
		for si, ser := range r.Timeline.Series {
			if si < len(r.Endpoints) {
				f(name, KeyOf(&r.Endpoints[si]), 0, ser.Requests, ser.Failed, true)
			}
		}
		return
	}
	for _, rv := range r.Vantages {
		for _, e := range rv.Endpoints {
			k := EpKey{e.Target, e.Address}
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
func (vt *vantageTimelines) reach(r *Report, at func(k int) int) {
	vantageSources(r, func(v string, _ EpKey, first int, req, _ []int64, _ bool) {
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
func (vt *vantageTimelines) add(r *Report, at func(k int) int, index map[EpKey]int) {
	vantageSources(r, func(v string, ep EpKey, first int, req, failed []int64, kept bool) {
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
func (vt *vantageTimelines) series(v string, j int) *VantageSeries {
	if vt == nil || vt.missing[vantageEp{v, j}] {
		return nil
	}
	a := vt.acc[vantageEp{v, j}]
	if a == nil {
		return &VantageSeries{Requests: []int64{}, Failed: []int64{}}
	}
	lo, hi := 0, len(a.req)
	for lo < hi && a.req[lo] == 0 {
		lo++
	}
	for hi > lo && a.req[hi-1] == 0 {
		hi--
	}
	if lo == hi {
		return &VantageSeries{Requests: []int64{}, Failed: []int64{}}
	}
	return &VantageSeries{First: a.lo + lo, Requests: slices.Clone(a.req[lo:hi]), Failed: slices.Clone(a.failed[lo:hi])}
}

// checkVantageSeries says what is wrong with a vantage endpoint's
// timeline of requests and failed, on a report timeline of buckets
// buckets; "" when nothing is.
func checkVantageSeries(tl *VantageSeries, buckets int, requests, failed int64) string {
	switch {
	case len(tl.Requests) != len(tl.Failed):
		return fmt.Sprintf("%d request buckets, %d failure buckets", len(tl.Requests), len(tl.Failed))
	case tl.First < 0 || tl.First > buckets || len(tl.Requests) > buckets-tl.First:
		return fmt.Sprintf("buckets %d to %d of a timeline of %d", tl.First, tl.First+len(tl.Requests), buckets)
	}
	var req, fail int64
	for k := range tl.Requests {
		if tl.Requests[k] < 0 || tl.Failed[k] < 0 || tl.Failed[k] > tl.Requests[k] {
			return fmt.Sprintf("bucket %d: %d failed of %d", tl.First+k, tl.Failed[k], tl.Requests[k])
		}
		req += tl.Requests[k]
		fail += tl.Failed[k]
	}
	if req != requests || fail != failed {
		return fmt.Sprintf("%d requests, %d failed; the endpoint has %d, %d", req, fail, requests, failed)
	}
	return ""
}

func vantageEndpoint(e *Endpoint) VantageEndpoint {
	return VantageEndpoint{Target: e.Target, Address: e.Address, Family: e.Family,
		Requests: e.Requests, Failed: e.Failed, Dropped: e.Dropped}
}

// checkVantages checks a saved report's vantage names and breakdown: every
// name a vantage name; each vantage once, its endpoints the report's, each
// once, its families and totals their sums, no count impossible; and the
// vantages adding up to the report's endpoints and runs. It returns the
// faults found, at most 3.
func checkVantages(r *Report) []string {
	var errs []string
	bad := func(format string, args ...any) bool {
		errs = append(errs, fmt.Sprintf(format, args...))
		return len(errs) >= 3
	}
	if r.Vantage != "" {
		if err := CheckVantage(r.Vantage); err != nil {
			bad("vantage %q: %v", shown(r.Vantage), err)
		}
	}
	for _, in := range r.Inputs {
		if in.Vantage != "" {
			if err := CheckVantage(in.Vantage); err != nil && bad("inputs: %s: vantage %q: %v", shown(in.File), shown(in.Vantage), err) {
				return errs
			}
		}
	}
	if len(r.Vantages) == 0 {
		return errs
	}
	if len(r.Inputs) == 0 {
		return append(errs, "vantages: a breakdown by vantage in a report with no inputs")
	}
	if len(r.Vantages) > len(r.Inputs) {
		return append(errs, fmt.Sprintf("vantages: %d of them for %d inputs", len(r.Vantages), len(r.Inputs)))
	}
	index := map[EpKey]int{}
	for i := range r.Endpoints {
		index[KeyOf(&r.Endpoints[i])] = i
	}
	sum := make([][3]int64, len(r.Endpoints))
	// The vantages' timelines of each endpoint, added up bucket by bucket,
	// and whether every vantage that probed it kept one.
	buckets := 0
	if len(r.Timeline.Series) > 0 {
		buckets = len(r.Timeline.Series[0].Requests)
	}
	tlSum := make([][2][]int64, len(r.Endpoints))
	tlPart := make([]bool, len(r.Endpoints))
	names := map[string]bool{}
	runs := 0
	for _, v := range r.Vantages {
		name := "vantage " + fmt.Sprintf("%q", shown(v.Name))
		if v.Name != "" {
			if err := CheckVantage(v.Name); err != nil && bad("vantages: %q: %v", shown(v.Name), err) {
				return errs
			}
		}
		if names[v.Name] && bad("vantages: %s listed twice", name) {
			return errs
		}
		names[v.Name] = true
		runs += v.Runs
		if v.Runs <= 0 && bad("vantages: %s: %d runs", name, v.Runs) {
			return errs
		}
		var tot [3]int64
		fam := map[string]ConnStats{}
		seen := map[EpKey]bool{}
		for _, e := range v.Endpoints {
			k := EpKey{e.Target, e.Address}
			i, ok := index[k]
			switch {
			case !ok:
				bad("vantages: %s: endpoint %s (%s) is not among the report's", name, shown(e.Address), shown(e.Target))
			case seen[k]:
				bad("vantages: %s: endpoint %s (%s) listed twice", name, shown(e.Address), shown(e.Target))
			case e.Family != r.Endpoints[i].Family:
				bad("vantages: %s: endpoint %s (%s) of family %q, not %q", name, shown(e.Address), shown(e.Target), shown(e.Family), shown(r.Endpoints[i].Family))
			case e.Requests < 0 || e.Failed < 0 || e.Dropped < 0 || e.Failed > e.Requests:
				bad("vantages: %s: endpoint %s (%s): %d failed of %d requests, %d dropped", name, shown(e.Address), shown(e.Target), e.Failed, e.Requests, e.Dropped)
			case e.Timeline != nil && checkVantageSeries(e.Timeline, buckets, e.Requests, e.Failed) != "":
				bad("vantages: %s: endpoint %s (%s): timeline: %s", name, shown(e.Address), shown(e.Target), checkVantageSeries(e.Timeline, buckets, e.Requests, e.Failed))
			default:
				if tl := e.Timeline; tl == nil {
					tlPart[i] = tlPart[i] || e.Requests > 0
				} else if len(tl.Requests) > 0 {
					if tlSum[i][0] == nil {
						tlSum[i] = [2][]int64{make([]int64, buckets), make([]int64, buckets)}
					}
					for k := range tl.Requests {
						tlSum[i][0][tl.First+k] += tl.Requests[k]
						tlSum[i][1][tl.First+k] += tl.Failed[k]
					}
				}
				seen[k] = true
				sum[i][0] += e.Requests
				sum[i][1] += e.Failed
				sum[i][2] += e.Dropped
				tot[0] += e.Requests
				tot[1] += e.Failed
				tot[2] += e.Dropped
				f := fam[e.Family]
				f.Requests += e.Requests
				f.Failed += e.Failed
				fam[e.Family] = f
				continue
			}
			return errs
		}
		if tot != [3]int64{v.Requests, v.Failed, v.Dropped} && bad("vantages: %s: %d requests, %d failed, %d dropped, but its endpoints add up to %d, %d, %d",
			name, v.Requests, v.Failed, v.Dropped, tot[0], tot[1], tot[2]) {
			return errs
		}
		for f, c := range v.Families {
			if fam[f] != c && bad("vantages: %s: family %s: %d failed of %d, but its endpoints add up to %d of %d", name, shown(f), c.Failed, c.Requests, fam[f].Failed, fam[f].Requests) {
				return errs
			}
			delete(fam, f)
		}
		for f := range fam {
			if bad("vantages: %s: family %s missing", name, shown(f)) {
				return errs
			}
		}
	}
	if runs != len(r.Inputs) {
		bad("vantages: %d runs for %d inputs", runs, len(r.Inputs))
	}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if sum[i] != [3]int64{e.Requests, e.Failed, e.Dropped} {
			bad("vantages: endpoint %s (%s): the vantages add up to %d requests, %d failed, %d dropped; it has %d, %d, %d",
				shown(e.Address), shown(e.Target), sum[i][0], sum[i][1], sum[i][2], e.Requests, e.Failed, e.Dropped)
			break
		}
		if tlSum[i][0] == nil || tlPart[i] || i >= len(r.Timeline.Series) {
			continue
		}
		ser := &r.Timeline.Series[i]
		if !slices.Equal(tlSum[i][0], ser.Requests) || !slices.Equal(tlSum[i][1], ser.Failed) {
			bad("vantages: endpoint %s (%s): the vantages' timelines do not add up to its timeline", shown(e.Address), shown(e.Target))
			break
		}
	}
	if len(errs) > 3 {
		errs = errs[:3]
	}
	return errs
}
