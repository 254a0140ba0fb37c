package judge

import (
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// targetGroups is a report's endpoints grouped by target, in the order the
// targets first appear, with each target's summed counts.
type targetGroups struct {
	targets   []string
	endpoints map[string][]int // target -> endpoint indexes
	counts    map[string]tcount
}

type tcount struct{ failed, n int64 }

func groupTargets(r *report.Report) targetGroups {
	g := targetGroups{endpoints: map[string][]int{}, counts: map[string]tcount{}}
	for i, e := range r.Endpoints {
		g.targets = appendTo(g.targets, g.endpoints, e.Target, i)
		c := g.counts[e.Target]
		g.counts[e.Target] = tcount{c.failed + e.Failed, c.n + e.Requests}
	}
	return g
}

// appendTo appends v to by[k], and k to order the first time: a grouping
// that keeps the order in which keys first appear.
func appendTo[K comparable, V any](order []K, by map[K][]V, k K, v V) []K {
	if _, ok := by[k]; !ok {
		order = append(order, k)
	}
	by[k] = append(by[k], v)
	return order
}

// fisher is one exact test of a scope's failures against the rest's: a
// Test of kind, one-sided (the scope fails more).
func fisher(kind, scope string, failed, n, restFailed, restN int64) report.Test {
	fr, ci95 := RateCI95(failed, n)
	return report.Test{Kind: kind, Scope: scope, Requests: n, Failed: failed, FailureRate: fr, CI95: ci95,
		RestFailed: restFailed, RestTotal: restN, P: stat.FisherGreater(failed, n, restFailed, restN)}
}

// endpointFisher is fisher of endpoint e ("endpoint ADDRESS (URL)" and
// about), with e's address, URL and family.
func endpointFisher(kind string, e *report.Endpoint, about string, failed, n, restFailed, restN int64) report.Test {
	return atEndpoint(fisher(kind, "endpoint "+e.Address+" ("+e.Target+")"+about, failed, n, restFailed, restN), e)
}

// atEndpoint is t with e's address, URL and family.
func atEndpoint(t report.Test, e *report.Endpoint) report.Test {
	t.Address, t.Target, t.Family = e.Address, e.Target, e.Family
	return t
}

// repeatAsTest is a RepeatResult as a Test of kind: the requests after a
// failure against the others.
func repeatAsTest(kind, scope string, rr RepeatResult) report.Test {
	return report.Test{Kind: kind, Scope: scope, Requests: rr.AfterFailure, Failed: rr.AfterFailureFailed,
		FailureRate: rr.AfterFailureRate, CI95: rr.AfterFailureCI95, RestFailed: rr.AfterOKFailed, RestTotal: rr.AfterOK, P: rr.P}
}

// sumEndpoints is the failed requests and the requests of the endpoints idx
// that keep holds.
func (j *judgement) sumEndpoints(idx []int, keep func(k int) bool) (failed, n int64) {
	for _, k := range idx {
		if e := &j.r.Endpoints[k]; keep(k) {
			failed, n = failed+e.Failed, n+e.Requests
		}
	}
	return failed, n
}

// addresses makes the tests between families, URLs and addresses.
//
// Families are tested against each other across every target. With more
// than one target, each target is tested against the other targets, and
// each endpoint only against the other endpoints of its own target: two
// URLs on the same addresses, one failing everywhere and one nowhere, say
// nothing about the addresses. When a family stands out, each of its
// failing endpoints is also judged against the other family's endpoints of
// its target alone, so four failing IPv6 addresses do not hide each other.
func (j *judgement) addresses() {
	r := j.r
	tot := r.Totals
	if tot.Requests == 0 || tot.Failed == 0 {
		return
	}
	fams := words.SortedKeys(r.Families)
	if len(fams) == 2 {
		for i, f := range fams {
			s, o := r.Families[f], r.Families[fams[1-i]]
			t := fisher(report.TestFamily, "family "+f, s.Failed, s.Requests, o.Failed, o.Requests)
			t.Family = f
			if j.test(t).Significant {
				j.badFamily = f
			}
		}
	}
	if len(j.g.targets) > 1 {
		for _, tg := range j.g.targets {
			c := j.g.counts[tg]
			t := fisher(report.TestTarget, "target "+tg, c.failed, c.n, tot.Failed-c.failed, tot.Requests-c.n)
			t.Target = tg
			if j.test(t).Significant {
				j.badTarget[tg] = true
			}
		}
	}
	for _, tg := range j.g.targets {
		idx := j.g.endpoints[tg]
		if len(idx) < 2 {
			continue // alone in its target: nothing to compare it with
		}
		c := j.g.counts[tg]
		for _, i := range idx {
			e := &r.Endpoints[i]
			if t := j.test(endpointFisher(report.TestEndpoint, e, "", e.Failed, e.Requests, c.failed-e.Failed, c.n-e.Requests)); t.Significant {
				j.endpoint[i] = t.P
			}
		}
	}
	if j.badFamily == "" {
		return
	}
	for i, e := range r.Endpoints {
		if e.Family != j.badFamily || e.Failed == 0 {
			continue
		}
		of, on := j.sumEndpoints(j.g.endpoints[e.Target], func(k int) bool { return r.Endpoints[k].Family != j.badFamily })
		if on == 0 {
			continue // no address of the other family to compare it with
		}
		t := j.test(endpointFisher(report.TestEndpoint, &e, " against the other family's addresses of its URL", e.Failed, e.Requests, of, on))
		if t.Significant {
			if old, ok := j.endpoint[i]; !ok || t.P < old {
				j.endpoint[i] = t.P
				j.againstFamily[i] = t
			}
		}
	}
}
