package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
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
	// its one address: then it is not a finding of its own, only the word
	// that the header agrees with the address (see instances). union is
	// set for one that is the whole of several addresses: named only when
	// no test names any of them.
	coincide, union bool
	// sameTimes is set when test weighed it against the other responses
	// of its addresses slice by slice of the run (Group.Times).
	sameTimes bool
}

// timeStrata are a group's time strata as the strata of repeatTest: the
// group's responses in the place of the requests after a failure, the
// other responses of the same address and slice in that of the others.
func timeStrata(ts []report.TimeCounts) []report.MomentCounts {
	out := make([]report.MomentCounts, 0, len(ts))
	for _, t := range ts {
		out = append(out, report.MomentCounts{RepeatCounts: report.RepeatCounts{AfterFailure: t.Requests, AfterFailureFailed: t.Failed,
			AfterOK: t.RestRequests, AfterOKFailed: t.RestFailed}, Strata: t.Strata})
	}
	return out
}

// instances tests every instance against its header's other instances and
// weighs it against the addresses it came through: one whose responses are
// exactly its addresses' is the same scope (the addresses are named, the header
// agrees); else it is compared with the other responses on the same addresses
// at the same times (Zelen's exact test by address and slice of the run, or by
// address alone without time strata), and if significant is a suspect itself.
func (j *judgement) instances() {
	r := j.r
	// Every response of each address (every target), and the failed ones:
	// what an instance is compared against on its addresses. Requests
	// without a response carry no header and are left out.
	resp, respF := map[string]int64{}, map[string]int64{}
	for _, e := range r.Endpoints {
		var errs int64
		for _, n := range e.Errors {
			errs += n
		}
		resp[e.Address] += e.Requests - errs
		respF[e.Address] += e.Failed - errs
	}
	for _, h := range j.headers {
		idx := j.groupsByHead[h]
		var failed, n int64
		for _, i := range idx {
			failed, n = failed+r.Groups[i].Failed, n+r.Groups[i].Requests
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
			addrs := words.SortedKeys(g.Addresses)
			// The instance against every other response of the same
			// addresses: the other instances, and responses that named
			// none.
			coincide := true
			strata := make([]report.RepeatCounts, 0, len(addrs))
			for _, a := range addrs {
				c, f := g.Addresses[a], g.FailedBy[a]
				coincide = coincide && c >= resp[a]
				strata = append(strata, report.RepeatCounts{AfterFailure: c, AfterFailureFailed: f,
					AfterOK: max(resp[a]-c, 0), AfterOKFailed: max(min(respF[a]-f, resp[a]-c), 0)})
			}
			gf := &groupFinding{g: g, name: name, addrs: failingFirst(g.FailedBy)}
			if len(addrs) == 1 {
				gf.behind = addrs[0]
			}
			if coincide {
				// Every response of its addresses named it, and no other
				// address's: the same scope as its one address, or the whole
				// of several, whose own tests say which fail; then it is named
				// only when none of them is (see resolve).
				if marg.Significant {
					gf.test, gf.coincide, gf.union = marg, len(addrs) == 1, len(addrs) != 1
					j.groupFind = append(j.groupFind, gf)
					if gf.coincide {
						j.agrees[addrs[0]] = append(j.agrees[addrs[0]], name)
					}
				}
				continue
			}
			rr, scope := RepeatTest(strata), "group "+name+" against the other responses of the same addresses"
			if len(g.Times) > 0 {
				// The same, slice by slice of the run: an instance that
				// answered only while every instance failed more is not
				// worse than the others at the same time.
				rr, scope = repeatTest(timeStrata(g.Times)), scope+" at the same times"
				gf.sameTimes = true
			}
			t := repeatAsTest(report.TestGroupWithin, scope, rr)
			t.Header, t.Value = g.Header, g.Value
			if gf.test = j.test(t); gf.test.Significant {
				j.groupFind = append(j.groupFind, gf)
			}
		}
	}
}

// failingFirst lists the addresses of m with a count, most first.
func failingFirst(m map[string]int64) []string {
	out := []string{}
	for _, a := range words.ByCount(m) {
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
		if !gf.coincide && !gf.union {
			out = append(out, gf)
		}
	}
	return out
}

// resolve weighs the findings against each other, widest scope first: an
// address failing only through failing instances behind it is not named beside
// them; one whose failures stick to connections that differ from those open at
// the same moment is named by them; an instance that coincides with its
// addresses makes them suspects; a URL failing with none of its addresses named
// is the cause itself.
func (j *judgement) resolve() {
	j.demoteBehindInstances()
	j.demoteByConnections()
	j.nameCoincidingAddresses()
	// The family frames its addresses only when every one of them is a
	// suspect: one bad IPv4 address among good ones is that address.
	for i, e := range j.r.Endpoints {
		if e.Family == j.badFamily && e.Requests > 0 && !j.isEndpointSuspect(i) {
			j.badFamily = ""
			break
		}
	}
	for _, tg := range j.g.targets {
		if !j.badTarget[tg] {
			continue
		}
		blamed := false
		for _, i := range j.g.endpoints[tg] {
			_, conn := j.connFind[i]
			blamed = blamed || j.isEndpointSuspect(i) || conn || j.demoted[i]
		}
		if !blamed {
			j.failingURLs = append(j.failingURLs, tg)
		}
	}
}

// demoteBehindInstances demotes each suspect address that fails more
// than the others only through the suspect instances behind it: its
// other responses against the other addresses' other responses, header
// by header (two headers may name the same instance), over every URL the
// address serves (an instance's counts are the address's, all URLs
// together).
func (j *judgement) demoteBehindInstances() {
	groups := j.suspectGroups()
	for _, i := range slices.Sorted(maps.Keys(j.endpoint)) {
		e := &j.r.Endpoints[i]
		byHeader := map[string][]*groupFinding{} // the suspect instances behind e, by header
		var heads []string
		for _, gf := range groups {
			if gf.g.FailedBy[e.Address] > 0 {
				heads = appendTo(heads, byHeader, gf.g.Header, gf)
			}
		}
		for _, h := range heads {
			t := j.beyond(e, byHeader[h])
			if t.Significant {
				continue
			}
			names := make([]string, len(byHeader[h]))
			for k, gf := range byHeader[h] {
				names[k] = gf.name
			}
			j.demoted[i] = true
			j.notes = append(j.notes, fmt.Sprintf("%s fails more than the other addresses only through %s: its other responses failed %d of %d times (%s) against %d of %d on the other addresses (%s), so the instance%s behind it, not the whole address, %s named.",
				j.label(i), words.JoinAnd(names), t.Failed, t.Requests, words.PctRate(rate(t.Failed, t.Requests)), t.RestFailed, t.RestTotal,
				words.PctRate(rate(t.RestFailed, t.RestTotal)), words.Plural(len(names)), words.Agree(len(names), "is", "are")))
			break
		}
	}
}

// demoteByConnections demotes an address whose failures stick to some of
// its connections, which then name it, unless its other connections, at
// the same moments, fail more than the other addresses do: then it fails
// beyond them too.
func (j *judgement) demoteByConnections() {
	r := j.r
	for _, i := range slices.Sorted(maps.Keys(j.connFind)) {
		if _, ok := j.endpoint[i]; !ok {
			continue
		}
		e := &r.Endpoints[i]
		m := j.connFind[i].moment
		restF, restN := j.sumEndpoints(j.g.endpoints[e.Target], func(k int) bool { return r.Endpoints[k].Address != e.Address })
		if !j.test(endpointFisher(report.TestBeyond, e, " on its other connections", m.AfterOKFailed, m.AfterOK, restF, restN)).Significant {
			j.demoted[i] = true
		}
	}
}

// nameCoincidingAddresses: of an instance that coincides with its
// addresses, the addresses are the suspects; when no test named them (an
// address alone in its URL), the instance's own test does, for the one
// address it fails on. An instance that is the whole of several
// addresses, and fails where none of them alone shows it, stays named.
func (j *judgement) nameCoincidingAddresses() {
	for _, gf := range j.groupFind {
		if !gf.coincide && !gf.union {
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
		switch {
		case named:
		case gf.coincide && len(j.byAddr[gf.behind]) == 1:
			j.endpoint[j.byAddr[gf.behind][0]] = gf.test.P
		case gf.union:
			gf.union = false
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
					on = words.SortedKeys(gf.g.Addresses)
				}
			}
			parts = append(parts, fmt.Sprintf("every response of %s, and no other address's, named %s", words.JoinAnd(on), name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": the header agrees with the address, and the data cannot tell them apart"
}

// beyond tests endpoint e's address without the responses of the suspect
// instances gs behind it (all of one header) against the other addresses
// of its URLs likewise: whether the address fails beyond its instances.
// Counts are the address's over every URL, as an instance's are.
func (j *judgement) beyond(e *report.Endpoint, gs []*groupFinding) report.Test {
	r := j.r
	targets := map[string]bool{}
	for _, k := range j.byAddr[e.Address] {
		targets[r.Endpoints[k].Target] = true
	}
	var ownF, ownN, restF, restN int64
	inTargets := map[string]bool{}
	for k := range r.Endpoints {
		o := &r.Endpoints[k]
		if !targets[o.Target] {
			continue
		}
		inTargets[o.Address] = true
		if o.Address == e.Address {
			ownF, ownN = ownF+o.Failed, ownN+o.Requests
		} else {
			restF, restN = restF+o.Failed, restN+o.Requests
		}
	}
	for _, gf := range gs {
		for a, n := range gf.g.Addresses {
			switch {
			case a == e.Address:
				ownF, ownN = ownF-gf.g.FailedBy[a], ownN-n
			case inTargets[a]:
				restF, restN = restF-gf.g.FailedBy[a], restN-n
			}
		}
	}
	ownN, restN = max(ownN, 0), max(restN, 0)
	ownF, restF = min(max(ownF, 0), ownN), min(max(restF, 0), restN)
	t := endpointFisher(report.TestBeyond, e, " beyond its failing instances of "+gs[0].g.Header, ownF, ownN, restF, restN)
	t.Header = gs[0].g.Header
	return j.test(t)
}
