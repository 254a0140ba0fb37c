package judge

import (
	"fmt"
	"sort"
	"strings"

	"pinprobe/report"
	"pinprobe/report/phrase"
	"pinprobe/report/stat"
)

// groupFinding is an instance (one value of an instance header) that fails
// more than the other instances on the same addresses.
type groupFinding struct {
	g    *report.Group
	name string // "HEADER: VALUE"
	test report.Test
	// addrs are the addresses its failures came through, most first;
	// behind is the one address all its responses came through, "" when
	// they came through several.
	addrs  []string
	behind string
	// coincide is set for an instance whose responses are exactly those of
	// its addresses: then it is not a finding of its own, only the word
	// that the header agrees with the addresses (see instances).
	coincide bool
}

// instances tests every instance against the other instances of its
// header, and weighs it against the addresses its responses came through:
//   - an instance whose responses are exactly its addresses' (every
//     response those addresses gave carried it) is the same scope as they
//     are, and the data cannot tell them apart: the addresses are named,
//     and the header agrees;
//   - otherwise it is compared with the other instances on the same
//     addresses (stratified by address, Zelen's exact test): significant,
//     it is a suspect of its own, behind its one address or across all of
//     them (a shared backend pool).
func (j *judgement) instances() {
	r := j.r
	for _, h := range j.headers {
		idx := j.groupsByHead[h]
		nh, fh := map[string]int64{}, map[string]int64{} // the header's responses by address
		var failed, n int64
		for _, i := range idx {
			g := &r.Groups[i]
			failed, n = failed+g.Failed, n+g.Requests
			for a, c := range g.Addresses {
				nh[a] += c
			}
			for a, c := range g.FailedBy {
				fh[a] += c
			}
		}
		for _, i := range idx {
			g := &r.Groups[i]
			name := g.Header + ": " + g.Value
			marg := fisher(report.TestGroup, "group "+name, g.Failed, g.Requests, failed-g.Failed, n-g.Requests)
			marg.Header, marg.Value = g.Header, g.Value
			marg = j.test(marg)
			if g.Value == report.OtherValues || g.Failed == 0 {
				continue
			}
			addrs := phrase.SortedKeys(g.Addresses)
			coincide := true
			strata := make([]report.RepeatCounts, 0, len(addrs))
			for _, a := range addrs {
				c := g.Addresses[a]
				coincide = coincide && c == nh[a]
				strata = append(strata, report.RepeatCounts{AfterFailure: c, AfterFailureFailed: g.FailedBy[a],
					AfterOK: nh[a] - c, AfterOKFailed: fh[a] - g.FailedBy[a]})
			}
			gf := &groupFinding{g: g, name: name, addrs: failingFirst(g.FailedBy), coincide: coincide}
			if len(addrs) == 1 {
				gf.behind = addrs[0]
			}
			if coincide {
				if marg.Significant {
					gf.test = marg
					j.groupFind = append(j.groupFind, gf)
					for _, a := range addrs {
						j.agrees[a] = append(j.agrees[a], name)
					}
				}
				continue
			}
			rr := RepeatTest(strata)
			gf.test = j.test(report.Test{Kind: report.TestGroupWithin, Scope: "group " + name + " against the other values of " + g.Header + " on the same addresses",
				Header: g.Header, Value: g.Value, Requests: rr.AfterFailure, Failed: rr.AfterFailureFailed,
				FailureRate: rr.AfterFailureRate, CI95: rr.AfterFailureCI95, RestFailed: rr.AfterOKFailed, RestTotal: rr.AfterOK, P: rr.P})
			if gf.test.Significant {
				j.groupFind = append(j.groupFind, gf)
			}
		}
	}
}

// failingFirst lists the addresses of m with a count, most first.
func failingFirst(m map[string]int64) []string {
	out := []string{}
	for _, a := range phrase.ByCount(m) {
		if m[a] > 0 {
			out = append(out, a)
		}
	}
	return out
}

// suspectGroups are the instances that are suspects of their own (not the
// ones that coincide with their addresses).
func (j *judgement) suspectGroups() []*groupFinding {
	var out []*groupFinding
	for _, gf := range j.groupFind {
		if !gf.coincide {
			out = append(out, gf)
		}
	}
	return out
}

// resolve weighs the findings against each other, from the widest scope to
// the narrowest:
//   - an address that fails more than the others only through the failing
//     instances behind it (its other responses fail no more than the other
//     addresses' do) is not named beside them: the instances are;
//   - an address whose failures stick to some of its connections, which
//     differ from the connections open at the same moment, is named by
//     those connections: instances behind it, not the whole address;
//   - an instance that coincides with its addresses makes them suspects
//     when no test named them (the header and the address are one scope,
//     and the address is what pinprobe pinned);
//   - a URL that fails more than the others with none of its addresses
//     named fails on every address: the URL is the cause.
func (j *judgement) resolve() {
	r := j.r
	groups := j.suspectGroups()
	for _, i := range sortedKeys(j.endpoint) {
		e := &r.Endpoints[i]
		var gs []*groupFinding
		for _, gf := range groups {
			if gf.g.FailedBy[e.Address] > 0 {
				gs = append(gs, gf)
			}
		}
		if len(gs) == 0 {
			continue
		}
		// Beyond the instances: the address's other responses against the
		// other addresses' other responses.
		var ownF, ownN, restF, restN int64
		inTarget := map[string]bool{}
		for _, k := range j.g.endpoints[e.Target] {
			o := &r.Endpoints[k]
			inTarget[o.Address] = true
			if o.Address == e.Address {
				ownF, ownN = ownF+o.Failed, ownN+o.Requests
			} else {
				restF, restN = restF+o.Failed, restN+o.Requests
			}
		}
		for _, gf := range groups {
			for a, n := range gf.g.Addresses {
				if a == e.Address {
					ownF, ownN = ownF-gf.g.FailedBy[a], ownN-n
				} else if inTarget[a] {
					restF, restN = restF-gf.g.FailedBy[a], restN-n
				}
			}
		}
		ownF, ownN, restF, restN = max(ownF, 0), max(ownN, 0), max(restF, 0), max(restN, 0)
		t := fisher(report.TestBeyond, "endpoint "+e.Address+" ("+e.Target+") beyond its failing instances", ownF, ownN, restF, restN)
		t.Address, t.Target, t.Family = e.Address, e.Target, e.Family
		if j.test(t).Significant {
			continue
		}
		j.demoted[i] = true
		names := make([]string, len(gs))
		for k, gf := range gs {
			names[k] = gf.name
		}
		j.notes = append(j.notes, fmt.Sprintf("%s fails more than the other addresses only through %s: its other responses failed %d of %d times (%s) against %d of %d on the other addresses (%s), so the instance%s behind it, not the whole address, %s named.",
			j.label(i), phrase.JoinAnd(names), ownF, ownN, phrase.PctRate(rate(ownF, ownN)), restF, restN, phrase.PctRate(rate(restF, restN)),
			map[bool]string{true: "", false: "s"}[len(gs) == 1], map[bool]string{true: "is", false: "are"}[len(gs) == 1]))
	}
	for i := range j.connFind {
		if _, ok := j.endpoint[i]; ok {
			j.demoted[i] = true
		}
	}
	// An instance that coincides with its addresses: the addresses are the
	// suspects; when no test named them (an address alone in its URL), the
	// instance's own test does, for the one address it fails on.
	for _, gf := range j.groupFind {
		if !gf.coincide {
			continue
		}
		named := false
		for _, a := range gf.addrs {
			for _, i := range j.byAddr[a] {
				if _, ok := j.endpoint[i]; ok && !j.demoted[i] {
					named = true
				}
			}
		}
		if named || len(gf.addrs) != 1 || len(j.byAddr[gf.addrs[0]]) != 1 {
			continue
		}
		j.endpoint[j.byAddr[gf.addrs[0]][0]] = gf.test.P
	}
	// The family frames its addresses only when every one of them is a
	// suspect: one bad IPv4 address among good ones is that address.
	if j.badFamily != "" {
		for i, e := range r.Endpoints {
			if e.Family == j.badFamily && e.Requests > 0 && !j.isEndpointSuspect(i) {
				j.badFamily = ""
				break
			}
		}
	}
	for _, tg := range j.g.targets {
		if !j.badTarget[tg] {
			continue
		}
		blamed := false
		for _, i := range j.g.endpoints[tg] {
			_, conn := j.connFind[i]
			blamed = blamed || j.isEndpointSuspect(i) || conn
		}
		if !blamed {
			j.failingURLs = append(j.failingURLs, tg)
		}
	}
}

// isEndpointSuspect reports whether endpoint i is named as an address.
func (j *judgement) isEndpointSuspect(i int) bool {
	_, ok := j.endpoint[i]
	return ok && !j.demoted[i]
}

// agreeWords says which instance header agrees with addresses: "every
// response of ::1, and no other address's, named X-Backend: ::1".
func (j *judgement) agreeWords(addrs []string) string {
	var parts []string
	seen := map[string]bool{}
	for _, a := range addrs {
		for _, name := range j.agrees[a] {
			if seen[name] {
				continue
			}
			seen[name] = true
			var on []string
			for _, gf := range j.groupFind {
				if gf.name == name {
					on = phrase.SortedKeys(gf.g.Addresses)
				}
			}
			parts = append(parts, fmt.Sprintf("every response of %s, and no other address's, named %s", phrase.JoinAnd(on), name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": the header agrees with the address, and the data cannot tell them apart"
}

func rate(k, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(k) / float64(n)
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// ci says a rate and its Wilson interval: "100%, 95% CI 89–100%".
func ci(k, n int64) string {
	lo, hi := stat.Wilson(k, n)
	return phrase.PctRate(rate(k, n)) + ", 95% CI " + phrase.CIRange(lo, hi)
}

// ciShort says a rate and its interval without the words: "13%, 6.9–24%".
func ciShort(k, n int64) string {
	lo, hi := stat.Wilson(k, n)
	return phrase.PctRate(rate(k, n)) + ", " + phrase.CIRange(lo, hi)
}
