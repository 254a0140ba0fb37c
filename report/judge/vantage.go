package judge

import (
	"fmt"
	"strings"

	"github.com/pinprobe/pinprobe/report"
	"github.com/pinprobe/pinprobe/report/phrase"
)

// vantageRests lists, for a merged report broken down by vantage (see
// report.VantageStats), the vantage tests to make: each endpoint that
// several vantages probed, from each of them against the others. A single
// run, or a merge of runs from one vantage, has none.
func vantageRests(r *report.Report) []vantageCase {
	if len(r.Vantages) < 2 {
		return nil
	}
	// Each endpoint's figures from each vantage, in the vantages' order:
	// one pass over the breakdown, however many endpoints and vantages.
	type fromVantage struct {
		vantage int
		e       report.VantageEndpoint
	}
	by := map[report.EpKey][]fromVantage{}
	for vi := range r.Vantages {
		for _, e := range r.Vantages[vi].Endpoints {
			if e.Requests > 0 {
				k := report.EpKey{Target: e.Target, Address: e.Address}
				by[k] = append(by[k], fromVantage{vi, e})
			}
		}
	}
	var cases []vantageCase
	for i := range r.Endpoints {
		var from []int // vantage indexes that probed it
		var at []report.VantageEndpoint
		for _, fv := range by[report.KeyOf(&r.Endpoints[i])] {
			from = append(from, fv.vantage)
			at = append(at, fv.e)
		}
		if len(from) < 2 {
			continue
		}
		var failed, n int64
		for _, e := range at {
			failed += e.Failed
			n += e.Requests
		}
		for x, vi := range from {
			cases = append(cases, vantageCase{endpoint: i, vantage: vi, e: at[x], restFailed: failed - at[x].Failed, restN: n - at[x].Requests, from: from})
		}
	}
	return cases
}

// vantageCase is one vantage test to make: endpoint's requests from one
// vantage against its requests from the others.
type vantageCase struct {
	endpoint, vantage int
	e                 report.VantageEndpoint
	restFailed, restN int64
	from              []int // the vantages that probed the endpoint, this one among them
}

// vantageName says a vantage's name, or what the runs without one are.
func vantageName(name string) string {
	if name == "" {
		return "the runs that named no vantage"
	}
	return name
}

// vantages tests each endpoint from each vantage point against the same
// endpoint from the other vantages (Fisher's exact test, one-sided, at the
// verdict's level like every other failure test: its slots are in
// testCount). An endpoint that fails significantly more from one vantage is
// a difference in how the vantages reach it — their DNS answers or their
// routes — which no test within a vantage can see; the summary names it.
func (j *judgement) vantages() {
	for _, c := range vantageRests(j.r) {
		name := j.r.Vantages[c.vantage].Name
		t := fisher(report.TestVantage, "vantage "+vantageName(name)+": endpoint "+j.label(c.endpoint),
			c.e.Failed, c.e.Requests, c.restFailed, c.restN)
		e := &j.r.Endpoints[c.endpoint]
		t.Vantage, t.Address, t.Target, t.Family = name, e.Address, e.Target, e.Family
		t = j.test(t)
		if t.Significant {
			var others []string
			for _, vj := range c.from {
				if vj != c.vantage {
					others = append(others, vantageName(j.r.Vantages[vj].Name))
				}
			}
			j.vantageFind = append(j.vantageFind, vantageFinding{test: t, endpoint: c.endpoint, others: others})
		}
	}
}

// vantageFinding is an endpoint that fails more from one vantage.
type vantageFinding struct {
	test     report.Test
	endpoint int
	others   []string
}

// vantageSentences say the vantage findings, one sentence per vantage:
// "Only the runs from eu-west see ::1 fail: …".
func (j *judgement) vantageSentences() []string {
	var order []string
	by := map[string][]vantageFinding{}
	for _, f := range j.vantageFind {
		if _, ok := by[f.test.Vantage]; !ok {
			order = append(order, f.test.Vantage)
		}
		by[f.test.Vantage] = append(by[f.test.Vantage], f)
	}
	var out []string
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
			evidence = append(evidence, fmt.Sprintf("%s%d of %d failed from there (%s) against %d of %d from %s (%s), %s",
				prefix, t.Failed, t.Requests, ci(t.Failed, t.Requests), t.RestFailed, t.RestTotal,
				phrase.JoinAnd(phrase.CapItems(f.others, 4)), ciShort(t.RestFailed, t.RestTotal), phrase.PValue(t.P)))
		}
		from := "the runs from " + v
		if v == "" {
			from = vantageName(v)
		}
		lead := "Only " + from + " see " + phrase.JoinAnd(phrase.CapItems(labels, 8)) + " fail"
		if !only {
			lead = phrase.Capitalize(from) + " see " + phrase.JoinAnd(phrase.CapItems(labels, 8)) + " fail more than the other vantages do"
		}
		out = append(out, lead+": "+strings.Join(evidence, "; ")+
			". The vantage points reach "+itThem(len(labels))+" differently: a DNS or routing difference.")
	}
	return out
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// vantageHeadline says the vantage findings in a few words, for the
// headline beside the suspects: "only eu-west sees ::1 fail".
func (j *judgement) vantageHeadline() string {
	var order []string
	by := map[string][]string{}
	only := map[string]bool{}
	for _, f := range j.vantageFind {
		v := f.test.Vantage
		if _, ok := by[v]; !ok {
			order = append(order, v)
			only[v] = true
		}
		by[v] = append(by[v], j.label(f.endpoint))
		only[v] = only[v] && f.test.RestFailed == 0
	}
	var parts []string
	for _, v := range order {
		name := v
		if v == "" {
			name = "the runs without a vantage"
		}
		what := phrase.JoinAnd(phrase.CapItems(by[v], 4))
		if only[v] {
			parts = append(parts, "only "+name+" sees "+what+" fail")
		} else {
			parts = append(parts, name+" sees "+what+" fail more")
		}
	}
	return strings.Join(parts, "; ")
}
