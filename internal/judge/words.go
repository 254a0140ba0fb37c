package judge

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// clause is one finding as the verdict says it: a subject ("IPv6 (::1)",
// "127.0.0.2 and 127.0.0.3", "X-Served-By: gw-3 behind 127.0.0.2"), how it
// fails, and the evidence, with the suspects it names.
type clause struct {
	subject string
	how     string
	plural  bool // the subject is several
	// allFailures is set for a family that has every failure of the run.
	allFailures bool
	extra       string // said after how in the headline: "(2 of 8 connections)"
	evidence    string
	suspects    []report.Suspect
}

// clauses are the verdict's findings, widest first: the family, the
// addresses, the instances, the connections of an address.
func (j *judgement) clauses() []clause {
	r := j.r
	var out []clause
	var eps []int // endpoint suspects, failing most first
	for i := range r.Endpoints {
		if j.isEndpointSuspect(i) {
			eps = append(eps, i)
		}
	}
	sort.SliceStable(eps, func(a, b int) bool {
		x, y := &r.Endpoints[eps[a]], &r.Endpoints[eps[b]]
		if x.FailureRate != y.FailureRate {
			return x.FailureRate > y.FailureRate
		}
		if x.Address != y.Address {
			return x.Address < y.Address
		}
		return x.Target < y.Target
	})
	if j.badFamily != "" {
		var in, rest []int
		for _, i := range eps {
			if r.Endpoints[i].Family == j.badFamily {
				in = append(in, i)
			} else {
				rest = append(rest, i)
			}
		}
		out = append(out, j.familyClause(in))
		eps = rest
	}
	// Addresses that fail alike are said together.
	var order []string
	byHow := map[string][]int{}
	for _, i := range eps {
		order = appendTo(order, byHow, j.endpointHow(i), i)
	}
	for _, k := range order {
		out = append(out, j.endpointClause(byHow[k]))
	}
	conns := map[string][]int{} // address -> its endpoints with a connection finding
	for _, i := range slices.Sorted(maps.Keys(j.connFind)) {
		a := r.Endpoints[i].Address
		conns[a] = append(conns[a], i)
	}
	shared := map[string][]overlap{} // address -> its suspect instances, with the failures they share with its connections
	var said []*groupFinding
	for _, gf := range j.suspectGroups() {
		// Another header that names the same instance (the same responses,
		// address by address) is said with it, not as a second suspect.
		if k := slices.IndexFunc(said, func(o *groupFinding) bool { return sameResponses(o.g, gf.g) }); k >= 0 {
			for ci := range out {
				if len(out[ci].suspects) > 0 && out[ci].suspects[0].Group == said[k].name {
					out[ci].subject = strings.Replace(out[ci].subject, said[k].name, said[k].name+" (also "+gf.name+")", 1)
				}
			}
			continue
		}
		said = append(said, gf)
		c := j.groupClause(gf)
		if is := conns[gf.behind]; gf.behind != "" && len(is) > 0 {
			o := j.overlapOf(gf, is)
			if o.same() {
				// The instance's failures are its address's failing
				// connections': one fault seen two ways, said once, as the
				// instance, with the connections as its evidence.
				c.extra = " (on " + o.words() + ")"
				c.evidence += "; " + j.sameWords(o)
				c.suspects[0].Connections, c.suspects[0].FailingConnections = o.all, o.failing
				c.suspects[0].Target = r.Endpoints[o.best].Target
				delete(conns, gf.behind)
			} else {
				shared[gf.behind] = append(shared[gf.behind], o)
			}
		}
		out = append(out, c)
	}
	for _, i := range slices.Sorted(maps.Keys(j.connFind)) {
		a := r.Endpoints[i].Address
		if _, ok := conns[a]; !ok {
			continue
		}
		c := j.connClause(i)
		if os := shared[a]; len(os) > 0 {
			c.extra, c.evidence = j.sharedWords(i, os, c.extra, c.evidence)
		}
		out = append(out, c)
	}
	return out
}

// sameResponses reports whether two groups (of different headers) are the
// same responses: the same counts and failures on every address.
func sameResponses(a, b *report.Group) bool {
	return a.Header != b.Header && a.Requests == b.Requests && a.Failed == b.Failed &&
		maps.Equal(a.Addresses, b.Addresses) && maps.Equal(a.FailedBy, b.FailedBy)
}

// headline joins the clauses: the headline names each subject and how it
// fails ("IPv6 (::1) answers 502; X-Served-By: gw-3 behind 127.0.0.2
// answers 502"); the summary says each with its evidence ("Failures
// concentrate on IPv6 (::1), which answers 502: …; and on X-Served-By:
// gw-3 behind 127.0.0.2, which answers 502: …").
func (j *judgement) headline(cs []clause) (headline, summary string) {
	heads := make([]string, len(cs))
	sents := make([]string, len(cs))
	for k, c := range cs {
		how := c.how
		if how == "" {
			how = "fails"
			if c.plural {
				how = "fail"
			}
		}
		heads[k] = c.subject + " " + how + c.extra
		lead := "and on "
		switch {
		case k == 0 && c.allFailures && len(cs) == 1:
			lead = "All failures on "
		case k == 0:
			lead = "Failures concentrate on "
		}
		which := ""
		if c.how != "" {
			which = ", which " + c.how
		}
		sents[k] = lead + c.subject + which + ": " + c.evidence
	}
	return strings.Join(heads, "; "), strings.Join(sents, "; ") + "."
}

// suspect is a suspect of kind with s's counts and interval, how s failed,
// and the p of the test that names it.
func (j *judgement) suspect(kind string, s *report.Stats, p float64) report.Suspect {
	_, ci95 := RateCI95(s.Failed, s.Requests)
	return report.Suspect{Kind: kind, How: failureKinds(s, j.fail), Requests: s.Requests, Failed: s.Failed,
		FailureRate: s.FailureRate, CI95: ci95, P: p}
}

// endpointSuspect is endpoint e as a suspect of kind.
func (j *judgement) endpointSuspect(kind string, e *report.Endpoint, p float64) report.Suspect {
	s := j.suspect(kind, &e.Stats, p)
	s.Address, s.Family, s.Target = e.Address, e.Family, e.Target
	return s
}

// suspectOf is endpoint i as an address suspect.
func (j *judgement) suspectOf(i int, p float64) report.Suspect {
	e := &j.r.Endpoints[i]
	s := j.endpointSuspect(report.SuspectEndpoint, e, p)
	s.How = j.endpointHow(i)
	if a := j.agrees[e.Address]; len(a) > 0 {
		s.Agrees = a[0]
	}
	return s
}

// addressClause starts the clause of address suspects eps: their labels as
// its subject's items, and their suspects.
func (j *judgement) addressClause(eps []int, how string) (c clause, labels []string) {
	c.how = how
	for _, i := range eps {
		labels = append(labels, j.label(i))
		c.suspects = append(c.suspects, j.suspectOf(i, j.endpoint[i]))
	}
	return c, words.CapItems(words.Dedupe(labels), 8)
}

// addressEvidence is what address suspects eps add to their evidence: the
// header that agrees with them, and the windows they failed in.
func (j *judgement) addressEvidence(eps []int) string {
	var addrs []string
	for _, i := range eps {
		addrs = append(addrs, j.r.Endpoints[i].Address)
	}
	out := ""
	if a := j.agreeWords(addrs); a != "" {
		out += "; " + a
	}
	for _, i := range eps {
		if w := j.windowFind[i]; w != nil {
			out += "; " + j.label(i) + " " + j.windowWords(w)
		}
	}
	return out
}

// endpointHow says how endpoint i fails, with its windows when its
// failures followed time.
func (j *judgement) endpointHow(i int) string {
	how := failureKinds(&j.r.Endpoints[i].Stats, j.fail)
	if w := j.windowFind[i]; w != nil {
		how += fmt.Sprintf(" in %d window%s", len(w.windows), words.Plural(len(w.windows)))
	}
	return how
}

// familyClause says the family whose every address fails: "IPv6 (::1)
// answers 502: 30 of 30 IPv6 requests failed … against 8 of 60 IPv4 …".
func (j *judgement) familyClause(eps []int) clause {
	r := j.r
	bad := j.badFamily
	other := "ipv4"
	if bad == "ipv4" {
		other = "ipv6"
	}
	s, o := r.Families[bad], r.Families[other]
	c, labels := j.addressClause(eps, failureKinds(s, j.fail))
	c.subject = words.FamilyName(bad) + " (" + strings.Join(labels, ", ") + ")"
	c.allFailures = o.Failed == 0 && s.Failed == r.Totals.Failed
	c.evidence = against(s.Failed, s.Requests, " "+words.FamilyName(bad)+" requests failed", o.Failed, o.Requests, " "+words.FamilyName(other),
		stat.FisherGreater(s.Failed, s.Requests, o.Failed, o.Requests)) + j.addressEvidence(eps)
	return c
}

// endpointClause says addresses that fail alike, and compares them with
// the other endpoints of their URLs, as their tests did.
func (j *judgement) endpointClause(eps []int) clause {
	r := j.r
	var failed, n int64
	var targets []string
	minP, byFamily := 1.0, true
	c, labels := j.addressClause(eps, j.endpointHow(eps[0]))
	for _, i := range eps {
		e := &r.Endpoints[i]
		failed, n = failed+e.Failed, n+e.Requests
		targets = append(targets, e.Target)
		minP = math.Min(minP, j.endpoint[i])
		_, ok := j.againstFamily[i]
		byFamily = byFamily && ok
	}
	targets = words.Dedupe(targets)
	restF, restN := r.Totals.Failed-failed, r.Totals.Requests-n
	others := "on the other endpoints"
	switch {
	case byFamily:
		// Named against the other family's addresses alone: say that.
		restF, restN = 0, 0
		for _, tg := range targets {
			f, n := j.sumEndpoints(j.g.endpoints[tg], func(k int) bool { return r.Endpoints[k].Family != r.Endpoints[eps[0]].Family })
			restF, restN = restF+f, restN+n
		}
		others = "on the other family's endpoints"
	case len(j.g.targets) > 1:
		restF, restN = -failed, -n
		for _, tg := range targets {
			restF += j.g.counts[tg].failed
			restN += j.g.counts[tg].n
		}
		others = "on the other endpoints of " + targets[0]
		if len(targets) > 1 {
			others = "on the other endpoints of the same URLs"
		}
	}
	if byFamily && len(j.g.targets) > 1 {
		others += " of the same URL" + words.Plural(len(targets))
	}
	c.subject = words.JoinAnd(labels)
	together := ""
	if len(eps) > 1 {
		c.how, c.plural, together = pluralVerbs(c.how), true, "together "
	}
	c.evidence = together + against(failed, n, " requests failed", restF, restN, " "+others, minP) + j.addressEvidence(eps)
	return c
}

// groupClause says an instance that fails more than the other instances on
// the same addresses.
func (j *judgement) groupClause(gf *groupFinding) clause {
	g := gf.g
	s := j.suspect(report.SuspectGroup, &g.Stats, gf.test.P)
	s.Group, s.Header, s.Value, s.Addresses = gf.name, g.Header, g.Value, gf.addrs
	where, onSame := "", " on the same addresses"
	switch {
	case gf.behind != "":
		s.Address = gf.behind
		if is := j.byAddr[gf.behind]; len(is) > 0 {
			s.Family, s.Target = j.r.Endpoints[is[0]].Family, j.r.Endpoints[is[0]].Target
		}
		where, onSame = " behind "+gf.behind, " on "+gf.behind
	case len(gf.addrs) > 1:
		where = " (through " + words.JoinAnd(words.CapItems(gf.addrs, 4)) + ")"
	}
	t := gf.test
	if gf.sameTimes {
		onSame += " at the same times"
	}
	return clause{
		subject: gf.name + where, how: s.How,
		evidence: against(t.Failed, t.Requests, " of its responses failed", t.RestFailed, t.RestTotal, " from the other values of "+g.Header+onSame, t.P),
		suspects: []report.Suspect{s},
	}
}

// connClause says an address whose failures stick to some of its
// connections, while the connections open at the same moment did not fail.
func (j *judgement) connClause(i int) clause {
	e := &j.r.Endpoints[i]
	f := j.connFind[i]
	s := j.endpointSuspect(report.SuspectConnections, e, f.moment.P)
	s.Connections, s.FailingConnections = f.all, f.failing
	m := f.moment
	return clause{
		subject: "some connections of " + j.label(i), how: pluralVerbs(s.How), plural: true,
		extra: " (" + f.words() + ")",
		evidence: fmt.Sprintf("%s failed; at the same moments, a request on a connection that had failed before failed %d of %d times (%s), one on the other connections %d of %d (%s), %s: one or more instances behind %s fail, the others do not",
			f.words(), m.AfterFailureFailed, m.AfterFailure, words.PctRate(m.AfterFailureRate), m.AfterOKFailed, m.AfterOK,
			words.PctRate(m.AfterOKRate), words.PValue(m.P), e.Address),
		suspects: []report.Suspect{s},
	}
}

// pluralVerbs turns a verb phrase of failureKinds to the plural: "answers
// 502 and resets connections" → "answer 502 and reset connections".
func pluralVerbs(how string) string {
	parts := strings.Split(how, " and ")
	for k, p := range parts {
		verb, rest, _ := strings.Cut(p, " ")
		if pl, ok := pluralOf[verb]; ok {
			parts[k] = strings.TrimSpace(pl + " " + rest)
		}
	}
	return strings.Join(parts, " and ")
}

var pluralOf = map[string]string{"answers": "answer", "resets": "reset", "refuses": "refuse", "does": "do", "is": "are",
	"closes": "close", "fails": "fail"}

// classWords say how a request of each error class failed, as a verb phrase.
var classWords = map[string]string{
	"dns":                 "does not resolve",
	"connect_refused":     "refuses connections",
	"connect_timeout":     "does not accept connections in time",
	"network_unreachable": "is unreachable",
	"tls":                 "fails the TLS handshake",
	"reset":               "resets connections",
	"eof":                 "closes connections without an answer",
	"timeout":             "does not answer in time",
	"protocol":            "answers with broken HTTP",
	"other":               "fails with other errors",
}

// failureKinds says how a scope's failed requests failed, the most common
// kinds first: "answers 503", "answers 502 and 504 and resets connections".
func failureKinds(s *report.Stats, fail report.FailStatus) string {
	type kind struct {
		words string
		n     int64
	}
	statuses := failingStatuses(s.Status, fail)
	var statusN int64
	for _, k := range statuses {
		statusN += s.Status[k]
	}
	var kinds []kind
	if len(statuses) > 0 {
		if len(statuses) > 3 {
			statuses = append(statuses[:3], "more")
		}
		kinds = append(kinds, kind{"answers " + words.JoinAnd(statuses), statusN})
	}
	for _, c := range words.ByCount(s.Errors) {
		w, ok := classWords[c]
		if !ok {
			w = "fails with " + c
		}
		kinds = append(kinds, kind{w, s.Errors[c]})
	}
	sort.SliceStable(kinds, func(i, j int) bool { return kinds[i].n > kinds[j].n })
	if len(kinds) > 2 {
		kinds = kinds[:2]
	}
	words := make([]string, len(kinds))
	for i, k := range kinds {
		words[i] = k.words
	}
	return strings.Join(words, " and ")
}

// failingStatuses are the statuses of status that fail, the most common first.
func failingStatuses(status map[string]int64, fail report.FailStatus) []string {
	var out []string
	for _, k := range words.ByCount(status) {
		if code, err := strconv.Atoi(k); err == nil && fail.Fails(code) {
			out = append(out, k)
		}
	}
	return out
}

// okSummary says a run without failures, with the exact upper bound of the
// failure rate.
func okSummary(n, abandoned int64) string {
	if abandoned > 0 {
		// They may all have failed: the rate is shown below the bound of
		// as many failures.
		return fmt.Sprintf("0 failures in %d finished requests, and %d more abandoned in flight, whose outcome is unknown: counting them as failed, the failure rate is below %s with 95%% confidence.",
			n, abandoned, words.PctCeil(stat.UpperBound(abandoned, n+abandoned, 0.05)))
	}
	return fmt.Sprintf("0 failures in %d requests: below %s with 95%% confidence.", n, words.PctCeil(stat.UpperBoundZero(n)))
}

// urlSummary says which URLs fail more than the others with no address of
// their own to blame: "Failures follow the URL, not an address:
// https://x/bad failed 60 of 60 on every address (100%, 95% CI 94–100%)
// against 0 of 60 for the other URLs (0%, 0–6%), p<1e-9."
func (j *judgement) urlSummary(urls []string, lead string) string {
	r := j.r
	tot := r.Totals
	var clauses []string
	notAddress := true
	for _, tg := range urls {
		c := j.g.counts[tg]
		restF, restN := tot.Failed-c.failed, tot.Requests-c.n
		var probed, failing []string
		for _, i := range j.g.endpoints[tg] {
			e := r.Endpoints[i]
			if e.Requests > 0 {
				probed = append(probed, e.Address)
			}
			if e.Failed > 0 {
				failing = append(failing, e.Address)
			}
		}
		where, note := "on every address", ""
		switch {
		case len(probed) == 1:
			where = "on its only address " + probed[0]
			notAddress = false
		case len(failing) < len(probed):
			where = fmt.Sprintf("on %d of its %d addresses", len(failing), len(probed))
			note = ", none of them significantly more than the others,"
		}
		clauses = append(clauses, fmt.Sprintf("%s failed %d of %d %s (%s)%s against %d of %d for the other URLs (%s), %s",
			tg, c.failed, c.n, where, ci(c.failed, c.n), note, restF, restN, ciShort(restF, restN),
			words.PValue(stat.FisherGreater(c.failed, c.n, restF, restN))))
	}
	if notAddress {
		lead += ", not an address"
	}
	return lead + ": " + strings.Join(clauses, "; ") + "."
}

// spreadSummary explains failures that no test attributes. When they all
// sit in one place (an address, a family, a URL) that is said, with the
// p-value it would have needed: there were too few requests to tell.
func (j *judgement) spreadSummary() string {
	r := j.r
	tot := r.Totals
	fams := words.SortedKeys(r.Families)
	// The smallest p of the tests of a place, and the evidence for the
	// place that holds every failure: the smallest p of a test of it.
	tests, minP, p := 0, 1.0, math.Inf(1)
	for _, t := range j.tests {
		switch t.Kind {
		case report.TestFamily, report.TestTarget, report.TestEndpoint:
			tests++
			minP = math.Min(minP, t.P)
			if t.Failed == tot.Failed {
				p = math.Min(p, t.P)
			}
		}
	}
	if tests == 0 {
		return fmt.Sprintf("%d of %d requests failed (%s) on the only endpoint probed, %s: with no other address to compare it with, the failures cannot be pinned on one.",
			tot.Failed, tot.Requests, ci(tot.Failed, tot.Requests), r.Endpoints[0].Address)
	}
	var eps, addrs, famsFailing, targets []string
	for _, e := range r.Endpoints {
		if e.Failed > 0 {
			eps = append(eps, e.Address+" ("+e.Target+")")
			addrs = append(addrs, e.Address)
			famsFailing = append(famsFailing, e.Family)
			targets = append(targets, e.Target)
		}
	}
	addrs, famsFailing, targets = words.Dedupe(addrs), words.Dedupe(famsFailing), words.Dedupe(targets)
	where := ""
	switch {
	case len(addrs) == 1:
		where = addrs[0]
		if len(eps) == 1 && len(j.g.targets) > 1 {
			where = eps[0]
		}
	case len(fams) == 2 && len(famsFailing) == 1:
		where = words.FamilyName(famsFailing[0]) + " (" + strings.Join(addrs, ", ") + ")"
	case len(j.g.targets) > 1 && len(targets) == 1:
		where = targets[0]
	}
	if math.IsInf(p, 1) {
		p = minP
	}
	if where != "" && p >= j.level.Each {
		if tot.Failed == 1 {
			return fmt.Sprintf("1 of %d requests failed, on %s, but a single failure cannot be attributed (%s, needs p<%s): run longer.",
				tot.Requests, where, words.PValue(p), words.AlphaValue(j.level.Each))
		}
		return fmt.Sprintf("%d of %d requests failed, all on %s, but too few requests to attribute them (%s, needs p<%s): run longer.",
			tot.Failed, tot.Requests, where, words.PValue(p), words.AlphaValue(j.level.Each))
	}
	scopes := "address or family"
	if len(j.g.targets) > 1 {
		scopes = "address, family or URL"
	}
	return fmt.Sprintf("Failures are spread: %d of %d requests failed (%s), and no %s fails significantly more than the rest (smallest %s).",
		tot.Failed, tot.Requests, ci(tot.Failed, tot.Requests), scopes, words.PValue(minP))
}

// RateCI95 is k/n rounded as a report rounds failure rates, and its Wilson
// 95% interval rounded to 4 places.
func RateCI95(k, n int64) (float64, [2]float64) {
	lo, hi := stat.Wilson(k, n)
	return stat.Round(rate(k, n), 6), [2]float64{stat.Round(lo, 4), stat.Round(hi, 4)}
}

// rate is k/n, 0 without n.
func rate(k, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// ci says a rate and its Wilson interval: "100%, 95% CI 89–100%".
func ci(k, n int64) string {
	lo, hi := stat.Wilson(k, n)
	return words.PctRate(rate(k, n)) + ", 95% CI " + words.CIRange(lo, hi)
}

// against says failed of n against restFailed of restN as a test compares
// them, what and rest following the counts: "3 of 10 requests failed (30%,
// 95% CI 11–60%) against 0 of 10 on the others (0%, 0–28%), p=0.1".
func against(failed, n int64, what string, restFailed, restN int64, rest string, p float64) string {
	return fmt.Sprintf("%d of %d%s (%s) against %d of %d%s (%s), %s",
		failed, n, what, ci(failed, n), restFailed, restN, rest, ciShort(restFailed, restN), words.PValue(p))
}

// ciShort says a rate and its interval without the words: "13%, 6.9–24%".
func ciShort(k, n int64) string {
	lo, hi := stat.Wilson(k, n)
	return words.PctRate(rate(k, n)) + ", " + words.CIRange(lo, hi)
}
