package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// vantagePlan is what a merge by vantage (report.VantageStats) gives the vantage
// tests: each endpoint several vantages probed, each vantage against the others
// over the time they share (where the runs' sending windows meet), counted in
// the timeline buckets at least half shared. A single run, or runs from one
// vantage, have no plan.
type vantagePlan struct {
	// unknown says why the vantages cannot be compared at all: their
	// times or timelines are not in the report. "" when they are.
	unknown string
	cases   []vantageCase
	vs      []vantageTime // by vantage, in r.Vantages' order
}

// vantageTime is one vantage's time in a merge: its own, the part it
// shares with the other vantages, and the buckets of the report's timeline
// it is compared over.
type vantageTime struct {
	own, shared []span
	buckets     []bucketRange // in order, apart
	// decisive is set when some endpoint's test of this vantage could be
	// significant: enough of its requests, and of the others', fall in
	// the shared time.
	decisive bool
}

// span is a stretch of time, from its start up to its end.
type span struct{ from, to time.Time }

// bucketRange is the buckets from lo up to hi of a report's timeline.
type bucketRange struct{ lo, hi int }

// vantageCase is one vantage test to make: endpoint's requests from one
// vantage against its requests from the others, both over the time that
// vantage shares with the others.
type vantageCase struct {
	endpoint, vantage int
	failed, n         int64
	restFailed, restN int64
	// strata are the same, bucket by bucket of the shared time (the
	// vantage as "after a failure", the others as "after successes"), so
	// that the test compares requests of the same moment only.
	strata []report.RepeatCounts
}

// maxVantageWork bounds the work of comparing vantages over their shared
// time (bucket ranges summed over every test): a forged report of
// thousands of vantages, runs and endpoints is not worked through.
const maxVantageWork = 1 << 26

// planVantages makes the vantage plan of r; nil when r has fewer than
// two vantages.
func planVantages(r *report.Report) *vantagePlan {
	if len(r.Vantages) < 2 {
		return nil
	}
	pl := &vantagePlan{vs: make([]vantageTime, len(r.Vantages))}
	at := map[string]int{}
	for vi, v := range r.Vantages {
		at[v.Name] = vi
	}
	for _, in := range r.Inputs {
		vi, ok := at[in.Vantage]
		if !ok || in.StartedAt.IsZero() {
			pl.unknown = "when each vantage's runs were sent is not in the report"
			return pl
		}
		end := in.EndedAt.Time
		if in.SendS > 0 {
			end = in.StartedAt.Add(report.SecondsDuration(in.SendS))
		}
		pl.vs[vi].own = append(pl.vs[vi].own, span{in.StartedAt.Time, end})
	}
	buckets := 0
	if len(r.Timeline.Series) > 0 {
		buckets = len(r.Timeline.Series[0].Requests)
	}
	step := report.SecondsDuration(r.Timeline.IntervalS)
	// Each endpoint's vantage timelines, by the vantages that probed it.
	by := map[report.EpKey][]vantageFrom{}
	for vi := range r.Vantages {
		for x := range r.Vantages[vi].Endpoints {
			e := &r.Vantages[vi].Endpoints[x]
			if e.Requests == 0 {
				continue
			}
			if e.Timeline == nil || step <= 0 {
				pl.unknown = "the report keeps no timeline of each vantage's requests (it was merged by an older pinprobe, or an input had no timeline)"
				return pl
			}
			k := report.EpKey{Target: e.Target, Address: e.Address}
			by[k] = append(by[k], vantageFrom{vi, e.Timeline})
		}
	}
	var all []span // every vantage's own time, each once
	for vi := range pl.vs {
		pl.vs[vi].own = union(pl.vs[vi].own)
		all = append(all, pl.vs[vi].own...)
	}
	// Where two vantages or more probed at once: a vantage's own spans
	// are apart, so that is where two spans or more overlap.
	multi := overlaps(all)
	work := 0
	for vi := range pl.vs {
		vt := &pl.vs[vi]
		vt.shared = intersect(vt.own, multi)
		vt.buckets = sharedBuckets(vt.own, vt.shared, r.Timeline.Start.Time, step, buckets)
		work += len(vt.buckets) * max(len(r.Vantages[vi].Endpoints), 1)
	}
	if work > maxVantageWork {
		pl.unknown = fmt.Sprintf("the report merges too many runs, vantages and endpoints (%d vantages, %d runs, %d endpoints) to work out the time they share", len(r.Vantages), len(r.Inputs), len(r.Endpoints))
		return pl
	}
	var sums vantageSums
	for i := range r.Endpoints {
		if fs := by[report.KeyOf(&r.Endpoints[i])]; len(fs) >= 2 {
			pl.addCases(i, fs, &sums, buckets)
		}
	}
	return pl
}

// vantageFrom is a vantage's timeline of an endpoint.
type vantageFrom struct {
	vantage int
	tl      *report.VantageSeries
}

// vantageSums are an endpoint's requests and failures of every vantage,
// added up bucket by bucket, as running sums (bucket b is [b, b+1)).
type vantageSums struct{ req, failed []int64 }

// addCases adds the cases of endpoint i, probed by the vantages of fs:
// each vantage's requests over the buckets it shared with others, and the
// others' over the same buckets, with the strata bucket by bucket.
func (pl *vantagePlan) addCases(i int, fs []vantageFrom, sums *vantageSums, buckets int) {
	if sums.req == nil {
		sums.req, sums.failed = make([]int64, buckets+1), make([]int64, buckets+1)
	}
	sumReq, sumFailed := sums.req, sums.failed
	clear(sumReq)
	clear(sumFailed)
	for _, f := range fs {
		for b := range f.tl.Requests {
			sumReq[f.tl.First+b+1] += f.tl.Requests[b]
			sumFailed[f.tl.First+b+1] += f.tl.Failed[b]
		}
	}
	for b := range buckets {
		sumReq[b+1] += sumReq[b]
		sumFailed[b+1] += sumFailed[b]
	}
	for _, f := range fs {
		c := vantageCase{endpoint: i, vantage: f.vantage}
		var totN, totFailed int64
		for _, br := range pl.vs[f.vantage].buckets {
			totN += sumReq[br.hi] - sumReq[br.lo]
			totFailed += sumFailed[br.hi] - sumFailed[br.lo]
		}
		c.n, c.failed = inBuckets(f.tl, pl.vs[f.vantage].buckets)
		c.restN, c.restFailed = totN-c.n, totFailed-c.failed
		if c.n <= 0 || c.restN <= 0 {
			continue
		}
		for _, br := range pl.vs[f.vantage].buckets {
			for b := br.lo; b < br.hi; b++ {
				n, failed := bucketOf(f.tl, b)
				allN, allFailed := sumReq[b+1]-sumReq[b], sumFailed[b+1]-sumFailed[b]
				if n > 0 && allN > n {
					c.strata = append(c.strata, report.RepeatCounts{AfterFailure: n, AfterFailureFailed: failed,
						AfterOK: allN - n, AfterOKFailed: allFailed - failed})
				}
			}
		}
		pl.cases = append(pl.cases, c)
	}
}

// bucketOf is tl's requests and failures in bucket b of the report's
// timeline.
func bucketOf(tl *report.VantageSeries, b int) (n, failed int64) {
	if i := b - tl.First; i >= 0 && i < len(tl.Requests) {
		return tl.Requests[i], tl.Failed[i]
	}
	return 0, 0
}

// inBuckets is how many requests of tl, and how many failed, lie in the
// bucket ranges brs.
func inBuckets(tl *report.VantageSeries, brs []bucketRange) (n, failed int64) {
	for _, br := range brs {
		for b := max(br.lo, tl.First); b < min(br.hi, tl.First+len(tl.Requests)); b++ {
			n, failed = n+tl.Requests[b-tl.First], failed+tl.Failed[b-tl.First]
		}
	}
	return n, failed
}

// sharedBuckets is the buckets (of step from start, buckets of them) in
// which at least half of own's time is in shared, shared being part of
// own: so a run shorter than a bucket is compared with another at the
// same moment, and the requests of a bucket at either end of the shared
// time lie outside it by less than a bucket.
func sharedBuckets(own, shared []span, start time.Time, step time.Duration, buckets int) []bucketRange {
	var out []bucketRange
	// add adds the buckets from lo up to hi, in order.
	add := func(lo, hi int) {
		lo, hi = max(lo, 0), min(hi, buckets)
		if n := len(out); n > 0 && out[n-1].hi >= lo {
			out[n-1].hi = max(out[n-1].hi, hi)
		} else if hi > lo {
			out = append(out, bucketRange{lo, hi})
		}
	}
	edge := func(b int) {
		from, to := start.Add(time.Duration(b)*step), start.Add(time.Duration(b+1)*step)
		if in, of := within(shared, from, to), within(own, from, to); in > 0 && 2*in >= of {
			add(b, b+1)
		}
	}
	bucketOf := func(t time.Time) int { return int(min(max(t.Sub(start)/step, -1), time.Duration(buckets))) }
	for _, s := range shared {
		lo, hi := bucketOf(s.from), bucketOf(s.to.Add(-1))
		if lo < 0 || lo >= buckets || hi < lo {
			lo = max(lo, -1) // the time before the timeline holds no bucket
		} else {
			edge(lo)
		}
		if hi > lo+1 { // inside s, so inside own: all of it shared
			add(lo+1, hi)
		}
		if hi > lo && hi < buckets {
			edge(hi)
		}
	}
	return out
}

// within is how long spans (in order, apart) cover of [from, to).
func within(spans []span, from, to time.Time) time.Duration {
	i, _ := slices.BinarySearchFunc(spans, from, func(s span, t time.Time) int {
		if s.to.After(t) {
			return 1
		}
		return -1
	})
	var d time.Duration
	for ; i < len(spans) && spans[i].from.Before(to); i++ {
		if c := clip(spans[i], from, to); c.to.After(c.from) {
			d += c.to.Sub(c.from)
		}
	}
	return d
}

// overlaps is where two or more of spans cover the same time, in order.
func overlaps(spans []span) []span {
	type edge struct {
		at time.Time
		d  int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, s := range spans {
		edges = append(edges, edge{s.from, 1}, edge{s.to, -1})
	}
	// Ends before starts at the same moment: spans that only touch do
	// not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d
	})
	var out []span
	n := 0
	var from time.Time
	for _, e := range edges {
		n += e.d
		switch {
		case e.d > 0 && n == 2:
			from = e.at
		case e.d < 0 && n == 1 && e.at.After(from):
			out = append(out, span{from, e.at})
		}
	}
	return union(out)
}

// union is the stretches of time iv cover, in order, overlaps joined.
func union(iv []span) []span {
	iv = slices.Clone(iv)
	slices.SortFunc(iv, func(a, b span) int { return a.from.Compare(b.from) })
	var out []span
	for _, s := range iv {
		if !s.to.After(s.from) {
			continue
		}
		if n := len(out); n > 0 && !s.from.After(out[n-1].to) {
			if s.to.After(out[n-1].to) {
				out[n-1].to = s.to
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// clip is the part of s from from up to to; empty (to not after from) when
// they do not meet.
func clip(s span, from, to time.Time) span {
	if from.After(s.from) {
		s.from = from
	}
	if to.Before(s.to) {
		s.to = to
	}
	return s
}

// intersect is the time both a and b cover, each in order and apart.
func intersect(a, b []span) []span {
	var out []span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if c := clip(a[i], b[j].from, b[j].to); c.to.After(c.from) {
			out = append(out, c)
		}
		if a[i].to.Before(b[j].to) {
			i++
		} else {
			j++
		}
	}
	return out
}

// length is how long spans cover.
func length(spans []span) time.Duration {
	var d time.Duration
	for _, s := range spans {
		d += s.to.Sub(s.from)
	}
	return d
}

// vantageName says a vantage's name, or what the runs without one are.
func vantageName(name string) string {
	if name == "" {
		return "the runs that named no vantage"
	}
	return name
}

// vantages tests each endpoint from each vantage point against the same
// endpoint from the other vantages, over the time they share, bucket by
// bucket of the timeline (Zelen's exact test, one-sided, stratified by
// bucket, at the verdict's level like every other failure test: its slots
// are in testCount). An endpoint that fails significantly
// more from one vantage at the same time is a difference in how the
// vantages reach it — their DNS answers or their routes — which no test
// within a vantage can see; the summary names it. Vantages that share too
// little time to tell are blamed for nothing, and a note says so.
func (j *judgement) vantages() {
	pl := j.vplan
	if pl == nil {
		return
	}
	for _, c := range pl.cases {
		// Could the test be significant at all: every one of this
		// vantage's requests failed, and none of the others'?
		if stat.FisherGreater(c.n, c.n, 0, c.restN) < j.level.Each {
			pl.vs[c.vantage].decisive = true
		}
		name, e := j.r.Vantages[c.vantage].Name, &j.r.Endpoints[c.endpoint]
		t := atEndpoint(fisher(report.TestVantage, "vantage "+vantageName(name)+": endpoint "+j.label(c.endpoint),
			c.failed, c.n, c.restFailed, c.restN), e)
		// The p is of the test stratified by bucket (Zelen's exact test of a
		// common odds ratio, as for repeats): runs of one vantage at
		// different rates, or failures that came and went within the
		// shared time, weigh each moment as it was, not pooled.
		t.P, t.Vantage = RepeatTest(c.strata).P, name
		if t = j.test(t); t.Significant {
			var others []string
			for vj, v := range j.r.Vantages {
				if vj != c.vantage && sharedRequests(&v, report.KeyOf(e), pl.vs[c.vantage].buckets) > 0 {
					others = append(others, vantageName(v.Name))
				}
			}
			j.vantageFind = append(j.vantageFind, vantageFinding{test: t, endpoint: c.endpoint, others: others})
		}
	}
	j.notes = append(j.notes, j.vantageTimeNotes()...)
}

// sharedRequests is how many of endpoint k's requests from vantage v
// fall in the bucket ranges brs.
func sharedRequests(v *report.VantageStats, k report.EpKey, brs []bucketRange) int64 {
	for _, e := range v.Endpoints {
		if e.Target == k.Target && e.Address == k.Address && e.Timeline != nil {
			n, _ := inBuckets(e.Timeline, brs)
			return n
		}
	}
	return 0
}

// vantageTimeNotes say which vantages were not compared, and why: the
// time they share is unknown, there is none, or too little to tell; and,
// for those compared over part of their time only, which part.
func (j *judgement) vantageTimeNotes() []string {
	pl := j.vplan
	const why = "Vantages are compared only over the time they probed at once: a failure that began or ended between their runs would otherwise read as a difference of place."
	if pl.unknown != "" {
		return []string{"The vantages are not compared with each other, and none is blamed: " + pl.unknown + ", so the time they share is unknown. " + why}
	}
	var undecided, partial []string
	var longest time.Duration
	for vi, vt := range pl.vs {
		name := vantageName(j.r.Vantages[vi].Name)
		shared, own := length(vt.shared), length(vt.own)
		longest = max(longest, shared)
		switch {
		case !vt.decisive && shared == 0:
			undecided = append(undecided, fmt.Sprintf("%s shares no time with the others (it probed %s)", name, spans(vt.own)))
		case !vt.decisive:
			undecided = append(undecided, fmt.Sprintf("%s shares only %s with the others (%s), too few requests then for any difference to be significant", name, secs(shared), spans(vt.shared)))
		case shared < own*9/10:
			partial = append(partial, fmt.Sprintf("%s over %s of its %s (%s)", name, secs(shared), secs(own), spans(vt.shared)))
		}
	}
	var notes []string
	switch {
	case len(undecided) == len(pl.vs) && longest == 0:
		var when []string
		for vi, vt := range pl.vs {
			when = append(when, vantageName(j.r.Vantages[vi].Name)+" "+spans(vt.own))
		}
		notes = append(notes, "No vantage is blamed: the vantages probed at different times ("+strings.Join(words.CapItems(when, 8), "; ")+
			") and share none of it, so none is compared with another. "+why+" To compare them, probe from every vantage at the same time.")
	case len(undecided) == len(pl.vs):
		notes = append(notes, "No vantage is blamed: the vantages probed at the same time too briefly to tell them apart: "+strings.Join(words.CapItems(undecided, 8), "; ")+
			" (even had every request of one vantage failed then and none of the others'). "+why+" To compare them, probe from every vantage at the same time for longer.")
	case len(undecided) > 0:
		notes = append(notes, "Not compared with the other vantages, and not blamed: "+strings.Join(words.CapItems(undecided, 8), "; ")+". "+why)
	}
	if len(partial) > 0 {
		notes = append(notes, "The vantages are compared only over the time they share: "+strings.Join(words.CapItems(partial, 8), ", ")+
			"; their other requests are left out of those tests.")
	}
	return notes
}

// spans says stretches of time: "20:43:00.000–20:43:20.000 UTC", several
// joined by commas (at most 4, then how many more).
func spans(ss []span) string {
	var out []string
	for _, s := range ss {
		out = append(out, words.Clock(s.from)+"–"+words.Clock(s.to))
	}
	if len(out) == 0 {
		return "no time"
	}
	return strings.Join(words.CapItems(out, 4), ", ") + " UTC"
}

// secs says a duration in seconds, to a tenth: "20.0s".
func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// vantageFinding is an endpoint that fails more from one vantage.
type vantageFinding struct {
	test     report.Test
	endpoint int
	others   []string
}

// vantageWords say the vantage findings, by vantage: in a few words for the
// headline beside the suspects ("only eu-west sees ::1 fail"), and in one
// sentence each for the summary ("Only the runs from eu-west see ::1 fail: …").
func (j *judgement) vantageWords() (headline string, sentences []string) {
	var order []string
	by := map[string][]vantageFinding{}
	for _, f := range j.vantageFind {
		order = appendTo(order, by, f.test.Vantage, f)
	}
	var parts []string
	for _, v := range order {
		fs := by[v]
		only := true
		var labels, evidence []string
		for _, f := range fs {
			t := f.test
			only = only && t.RestFailed == 0
			labels = append(labels, j.label(f.endpoint))
			prefix := j.label(f.endpoint) + ": "
			if len(fs) == 1 {
				prefix = ""
			}
			evidence = append(evidence, prefix+against(t.Failed, t.Requests, " failed from there", t.RestFailed, t.RestTotal,
				" from "+words.JoinAnd(words.CapItems(f.others, 4)), t.P))
		}
		from, name, what := "the runs from "+v, v, words.JoinAnd(words.CapItems(labels, 4))
		if v == "" {
			from, name = vantageName(v), "the runs without a vantage"
		}
		lead := "Only " + from + " see " + words.JoinAnd(words.CapItems(labels, 8)) + " fail"
		part := "only " + name + " sees " + what + " fail"
		if !only {
			lead = words.Capitalize(from) + " see " + words.JoinAnd(words.CapItems(labels, 8)) + " fail more than the other vantages do"
			part = name + " sees " + what + " fail more"
		}
		parts = append(parts, part)
		sentences = append(sentences, lead+": "+strings.Join(evidence, "; ")+
			". The vantage points reach "+words.Agree(len(labels), "it", "them")+" differently: a DNS or routing difference.")
	}
	return strings.Join(parts, "; "), sentences
}
