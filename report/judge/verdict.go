package judge

import (
	"fmt"
	"math"
	"pinprobe/report"
	"pinprobe/report/phrase"
	"pinprobe/report/stat"
	"sort"
	"strconv"
	"strings"
)

// testAlpha is the significance level of the whole family of tests, split
// over the tests made (Bonferroni): families, targets and endpoints. They are strict
// on purpose: a verdict names a backend in a support ticket, so 5 of 5
// against 0 of 5 is not enough, while 10 of 10 against 0 of 10 is.
const Alpha = 0.001

// TestAlpha is the significance level of a verdict's whole family of tests.
const TestAlpha = Alpha

// Judge computes the verdict of a report whose totals, families and
// endpoints are filled.
//
// Families are tested against each other across every target. With more
// than one target, each target is tested against the other targets, and
// each endpoint only against the other endpoints of its own target: two
// URLs on the same addresses, one failing everywhere and one nowhere, say
// nothing about the addresses. A target that fails significantly more than
// the others, with none of its endpoints standing out, is a failing URL.
//
// alpha is the significance level of the whole family of tests (TestAlpha
// for a run judged once; a look of --until-verdict, less: see LookAlpha).
// Beyond addresses, families and URLs it tests what happens inside an
// address: instances named by a response header, failures that stick to
// connections, latency; and it says what it could not judge. It is the one
// way a verdict is made: for a finished run, each look of a running one, a
// merge of saved reports, and each side of a comparison.
func Judge(r *report.Report, alpha float64) report.Verdict {
	f := newFindings(r)
	each := alpha / float64(max(testCount(r, f), 1))
	// Instances first: an address that failed more than the others only
	// because more of its requests landed on a failing instance is not
	// the culprit; the instance is.
	var inst report.Verdict
	if r.Totals.Failed > 0 {
		f.groups(&inst, each)
	}
	explained := f.explained(inst.Suspects)
	v := judge(r, each, explained)
	if r.Totals.Failed > 0 {
		n := len(v.Suspects)
		v.Tests = append(v.Tests, inst.Tests...)
		v.Suspects = append(v.Suspects, inst.Suspects...)
		f.connections(&v, each, inst.Suspects)
		inside := v.Suspects[n:]
		var sentences []string
		for i := range inside {
			s := &inside[i]
			switch s.Kind {
			case report.SuspectGroup:
				sentences = append(sentences, groupWords(r, s))
			case report.SuspectConnections:
				sentences = append(sentences, connectionWords(r, s))
			}
		}
		if len(sentences) > 0 && v.Status != report.VerdictConcentrated {
			// Nothing stands out between addresses, but something does
			// inside one: that is the verdict.
			v.Status = report.VerdictConcentrated
			v.Summary = "Failures concentrate on " + sentences[0] + "."
			sentences = sentences[1:]
		}
		for _, s := range sentences {
			v.Notes = append(v.Notes, phrase.Capitalize(s)+".")
		}
	}
	// Latency is another question: its tests get an alpha of their own.
	// A client that could not send many of its requests (out of
	// descriptors or ports) is itself slow, and would blame backends.
	if c := r.Totals.ClientErrors; c > 0 && c*10 >= r.Totals.Requests {
		v.Notes = append(v.Notes, "Latency is not compared between addresses: this machine could not send many of its requests, so it was slowed by its own trouble.")
	} else {
		f.slow(&v, alpha/float64(max(f.slowTests(), 1)))
	}
	v.Notes = append(v.Notes, explainAfterFailure(r)...)
	v.Notes = append(v.Notes, clientNote(r)...)
	v.Notes = append(v.Notes, droppedNote(r)...)
	v.Notes = append(v.Notes, unjudged(r)...)
	v.Notes = append(v.Notes, fewConns(r)...)
	v.Notes = append(untested(r), v.Notes...)
	return v
}

// fewConnsMax is the most connections an endpoint may have had and still
// be called "few": with 4 instances behind an address and one of them
// broken, 3 connections miss it 42% of the time.
const fewConnsMax = 3

// fewConns names the endpoints whose requests ran on so few connections
// that a gateway instance behind the address may never have been reached:
// what the verdict says of them holds for the instances their connections
// landed on, not for the address.
func fewConns(r *report.Report) []string {
	type load struct{ requests, conns int64 }
	var order []load
	labels := map[load][]string{} // addresses by their requests and connections
	for _, e := range r.Endpoints {
		c := e.Conns
		if c == nil || c.Connections == 0 || c.Connections > fewConnsMax || e.Requests < 4*c.Connections {
			continue
		}
		label := e.Address
		if len(report.TargetsOf(r)) > 1 {
			label += " (" + report.ShortURL(r, e.Target) + ")"
		}
		k := load{e.Requests, c.Connections}
		if labels[k] == nil {
			order = append(order, k)
		}
		labels[k] = append(labels[k], label)
	}
	if len(order) == 0 {
		return nil
	}
	var parts []string
	if len(order) > 3 {
		// Many different loads: name the addresses, not each one's load.
		var all []string
		for _, k := range order {
			all = append(all, labels[k]...)
		}
		parts = append(parts, fmt.Sprintf("%s sent their requests over %d connections or fewer each", phrase.JoinAnd(phrase.CapItems(all, 8)), fewConnsMax))
	} else {
		for _, k := range order {
			each := ""
			if len(labels[k]) > 1 {
				each = " each"
			}
			parts = append(parts, fmt.Sprintf("%s sent %d requests over %d connection%s%s",
				phrase.JoinAnd(phrase.CapItems(labels[k], 6)), k.requests, k.conns, phrase.Plural(int(k.conns)), each))
		}
	}
	fix := "a longer run or a lower --conn-requests samples more of them."
	if r.Plan.ConnRequests == 0 && !r.Plan.NewConn {
		fix = "--conn-requests 0 kept each connection for the whole run; without it pinprobe spreads the requests over many connections."
	}
	return []string{fmt.Sprintf("Few connections: %s. Each TCP connection stays on one gateway instance, so an instance behind these addresses that no connection reached was not tested; %s",
		strings.Join(parts, "; "), fix)}
}

// untested says which family was not probed for which host, and why.
func untested(r *report.Report) []string {
	notes := []string{}
	if r.Plan.Only != "" {
		other := "IPv6"
		flag := "-4"
		if r.Plan.Only == "ipv6" {
			other, flag = "IPv4", "-6"
		}
		return append(notes, other+" not tested ("+flag+").")
	}
	families := map[string]map[string]bool{} // host -> families of its endpoints
	var order []string
	for _, e := range r.Endpoints {
		if families[e.Host] == nil {
			families[e.Host] = map[string]bool{}
			order = append(order, e.Host)
		}
		families[e.Host][e.Family] = true
	}
	for _, fam := range []struct{ name, record, key string }{{"IPv6", "AAAA", "ipv6"}, {"IPv4", "A", "ipv4"}} {
		var hosts []string
		for _, h := range order {
			if !families[h][fam.key] {
				hosts = append(hosts, h)
			}
		}
		if hosts = phrase.Dedupe(hosts); len(hosts) > 0 {
			notes = append(notes, fmt.Sprintf("No %s address (%s record) for %s: %s not tested.", fam.name, fam.record, phrase.JoinAnd(hosts), fam.name))
		}
	}
	return notes
}

// testCount is how many failure tests a verdict of r makes, for the
// Bonferroni split: families, URLs, endpoints within their URL, and f's.
func testCount(r *report.Report, f *findings) int {
	g := groupTargets(r)
	m := f.failureTests()
	if len(r.Families) == 2 {
		m += 2
	}
	if len(g.targets) > 1 {
		m += len(g.targets)
	}
	for _, tg := range g.targets {
		if n := len(g.endpoints[tg]); n > 1 {
			m += n
		}
	}
	return m
}

// judge makes the tests between families, URLs and addresses at level
// alpha each, and returns the verdict they give. The endpoints in
// explained fail more only because of an instance behind them: they are
// tested, but not named.
func judge(r *report.Report, alpha float64, explained map[int]string) report.Verdict {
	tot := r.Totals
	v := report.Verdict{Suspects: []report.Suspect{}, Tests: []report.Test{}, Notes: []string{}, Slow: []report.SlowFinding{}}
	fams := phrase.SortedKeys(r.Families)
	g := groupTargets(r)
	switch {
	case tot.Requests == 0:
		v.Status, v.Summary = report.VerdictNoData, "No request was sent, so there is nothing to judge."
		return v
	case tot.Failed == 0:
		v.Status = report.VerdictOK
		v.Summary = fmt.Sprintf("0 failures in %d requests: below %s with 95%% confidence.",
			tot.Requests, phrase.PctCeil(stat.UpperBoundZero(tot.Requests)))
		return v
	}

	var badFamily string
	if len(fams) == 2 {
		for i, f := range fams {
			s, o := r.Families[f], r.Families[fams[1-i]]
			t := newTest("family "+f, s.Failed, s.Requests, o.Failed, o.Requests, alpha)
			v.Tests = append(v.Tests, t)
			if t.Significant {
				badFamily = f
			}
		}
	}
	badTarget := map[string]bool{}
	if len(g.targets) > 1 {
		for _, tg := range g.targets {
			c := g.counts[tg]
			t := newTest("target "+tg, c.failed, c.n, tot.Failed-c.failed, tot.Requests-c.n, alpha)
			v.Tests = append(v.Tests, t)
			if t.Significant {
				badTarget[tg] = true
			}
		}
	}
	suspect := map[int]float64{} // endpoint index -> p
	for _, tg := range g.targets {
		idx := g.endpoints[tg]
		if len(idx) < 2 {
			continue // alone in its target: nothing to compare it with
		}
		c := g.counts[tg]
		for _, i := range idx {
			e := r.Endpoints[i]
			t := newTest("endpoint "+e.Address+" ("+e.Target+")", e.Failed, e.Requests,
				c.failed-e.Failed, c.n-e.Requests, alpha)
			v.Tests = append(v.Tests, t)
			why, ok := explained[i]
			switch {
			case t.Significant && ok:
				v.Notes = append(v.Notes, why)
			case t.Significant:
				suspect[i] = t.P
			}
		}
	}
	// When a family stands out, its failing endpoints are judged against the
	// other family's endpoints of the same target alone: four failing IPv6
	// addresses do not hide each other.
	if badFamily != "" {
		for i, e := range r.Endpoints {
			if e.Family != badFamily || e.Failed == 0 {
				continue
			}
			var of, on int64
			for _, j := range g.endpoints[e.Target] {
				if o := r.Endpoints[j]; o.Family != badFamily {
					of, on = of+o.Failed, on+o.Requests
				}
			}
			p := stat.FisherGreater(e.Failed, e.Requests, of, on)
			if _, ok := explained[i]; p < alpha && !ok {
				if old, ok := suspect[i]; !ok || p < old {
					suspect[i] = p
				}
			}
		}
	}
	for i, p := range suspect {
		e := r.Endpoints[i]
		lo, hi := stat.Wilson(e.Failed, e.Requests)
		v.Suspects = append(v.Suspects, report.Suspect{
			Kind: report.SuspectEndpoint, Address: e.Address, Family: e.Family, Target: e.Target,
			Requests: e.Requests, Failed: e.Failed, FailureRate: e.FailureRate,
			CI95: [2]float64{stat.Round(lo, 4), stat.Round(hi, 4)}, P: p,
		})
	}
	sort.Slice(v.Suspects, func(i, j int) bool {
		a, b := v.Suspects[i], v.Suspects[j]
		if a.FailureRate != b.FailureRate {
			return a.FailureRate > b.FailureRate
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Target < b.Target
	})
	// The family is the cause only when every one of its endpoints fails
	// significantly; one bad IPv4 address among good ones is that address.
	if badFamily != "" {
		for i, e := range r.Endpoints {
			if _, ok := suspect[i]; e.Family == badFamily && e.Requests > 0 && !ok {
				badFamily = ""
				break
			}
		}
	}
	// A target that fails more than the others, with no endpoint of its own
	// to blame, fails on every address: the URL is the cause.
	var failingURLs []string
	for _, tg := range g.targets {
		if !badTarget[tg] {
			continue
		}
		blamed := false
		for _, i := range g.endpoints[tg] {
			if _, ok := suspect[i]; ok {
				blamed = true
			}
		}
		if !blamed {
			failingURLs = append(failingURLs, tg)
		}
	}
	also := ""
	if len(failingURLs) > 0 {
		also = " " + urlSummary(r, g, failingURLs, "Failures also follow the URL")
	}

	// The family frames the summary only when every suspect is in it: a
	// refusing IPv4 address beside a failing IPv6 family is named too.
	for _, sp := range v.Suspects {
		if sp.Family != badFamily {
			badFamily = ""
		}
	}
	switch {
	case badFamily != "":
		v.Status = report.VerdictConcentrated
		v.Summary = familySummary(r, g, fams, badFamily, v.Suspects) + also
	case len(v.Suspects) > 0:
		v.Status = report.VerdictConcentrated
		v.Summary = endpointSummary(r, g, v.Suspects) + also
	case len(failingURLs) > 0:
		v.Status = report.VerdictSpread
		v.Summary = urlSummary(r, g, failingURLs, "Failures follow the URL")
	default:
		v.Status = report.VerdictSpread
		v.Summary = spreadSummary(r, g, fams, v.Tests, alpha)
	}
	return v
}

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
		if _, ok := g.endpoints[e.Target]; !ok {
			g.targets = append(g.targets, e.Target)
		}
		g.endpoints[e.Target] = append(g.endpoints[e.Target], i)
		c := g.counts[e.Target]
		g.counts[e.Target] = tcount{c.failed + e.Failed, c.n + e.Requests}
	}
	return g
}

func newTest(scope string, failed, n, restFailed, restN int64, alpha float64) report.Test {
	lo, hi := stat.Wilson(failed, n)
	p := stat.FisherGreater(failed, n, restFailed, restN)
	rate := 0.0
	if n > 0 {
		rate = stat.Round(float64(failed)/float64(n), 6)
	}
	return report.Test{
		Scope: scope, Requests: n, Failed: failed, FailureRate: rate,
		CI95: [2]float64{stat.Round(lo, 4), stat.Round(hi, 4)}, RestFailed: restFailed, RestTotal: restN,
		P: p, Significant: p < alpha,
	}
}

func otherFamily(fams []string, f string) string {
	if fams[0] == f {
		return fams[1]
	}
	return fams[0]
}

func familySummary(r *report.Report, g targetGroups, fams []string, bad string, suspects []report.Suspect) string {
	s, o := r.Families[bad], r.Families[otherFamily(fams, bad)]
	lo, hi := stat.Wilson(s.Failed, s.Requests)
	olo, ohi := stat.Wilson(o.Failed, o.Requests)
	p := stat.FisherGreater(s.Failed, s.Requests, o.Failed, o.Requests)
	lead := "Failures concentrate on " + phrase.FamilyNames[bad]
	if o.Failed == 0 {
		lead = "All failures on " + phrase.FamilyNames[bad]
	}
	return fmt.Sprintf("%s (%s): %d of %d %s requests failed (%s, 95%% CI %s) against %d of %d %s (%s, %s), %s.",
		lead, suspectList(r, g, suspects, false), s.Failed, s.Requests, phrase.FamilyNames[bad], phrase.PctRate(s.FailureRate), phrase.CIRange(lo, hi),
		o.Failed, o.Requests, phrase.FamilyNames[otherFamily(fams, bad)], phrase.PctRate(o.FailureRate), phrase.CIRange(olo, ohi), phrase.PValue(p))
}

// suspectList names every suspect and how it fails: "::1, which answers
// 502" for one; "127.0.0.2 refuses connections (40 of 40 failed), ::1
// answers 503 (38 of 40 failed)" for several. When the run has several URLs
// each address is followed by its URL.
func suspectList(r *report.Report, g targetGroups, suspects []report.Suspect, withCounts bool) string {
	fail := report.FailStatusOf(r)
	parts := make([]string, len(suspects))
	for i, sp := range suspects {
		part := suspectLabel(r, g, &sp)
		how := ""
		if e := r.FindEndpoint(sp.Target, sp.Address); e != nil {
			how = FailureKinds(&e.Stats, fail)
		}
		switch {
		case how != "" && len(suspects) == 1:
			part += ", which " + how
		case how != "":
			part += " " + how
		}
		if withCounts {
			part += fmt.Sprintf(" (%d of %d failed)", sp.Failed, sp.Requests)
		}
		parts[i] = part
	}
	return strings.Join(parts, ", ")
}

// suspectLabel names a suspect: its address, and its URL when the run has several.
func suspectLabel(r *report.Report, g targetGroups, sp *report.Suspect) string {
	if len(g.targets) > 1 {
		return sp.Address + " (" + report.ShortURL(r, sp.Target) + ")"
	}
	return sp.Address
}

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
func FailureKinds(s *report.Stats, fail report.FailStatus) string {
	type kind struct {
		words string
		n     int64
	}
	var statuses []string
	var statusN int64
	for _, k := range phrase.ByCount(s.Status) {
		if code, err := strconv.Atoi(k); err == nil && fail.Fails(code) {
			statuses = append(statuses, k)
			statusN += s.Status[k]
		}
	}
	var kinds []kind
	if len(statuses) > 0 {
		if len(statuses) > 3 {
			statuses = append(statuses[:3], "more")
		}
		kinds = append(kinds, kind{"answers " + phrase.JoinAnd(statuses), statusN})
	}
	for _, c := range phrase.ByCount(s.Errors) {
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

// endpointSummary names every suspect and how it fails, and compares them
// with the other endpoints of their targets, as their tests did.
func endpointSummary(r *report.Report, g targetGroups, suspects []report.Suspect) string {
	var failed, n int64
	var targets []string
	minP := 1.0
	for _, s := range suspects {
		failed += s.Failed
		n += s.Requests
		targets = append(targets, s.Target)
		minP = math.Min(minP, s.P)
	}
	targets = phrase.Dedupe(targets)
	restF, restN := r.Totals.Failed-failed, r.Totals.Requests-n
	others := "on the other endpoints"
	if len(g.targets) > 1 {
		restF, restN = -failed, -n
		for _, tg := range targets {
			restF += g.counts[tg].failed
			restN += g.counts[tg].n
		}
		others = "on the other endpoints of " + targets[0]
		if len(targets) > 1 {
			others = "on the other endpoints of the same URLs"
		}
	}
	lo, hi := stat.Wilson(failed, n)
	rlo, rhi := stat.Wilson(restF, restN)
	rate := float64(failed) / float64(n)
	restRate := 0.0
	if restN > 0 {
		restRate = float64(restF) / float64(restN)
	}
	names := make([]string, 0, len(suspects))
	for _, s := range suspects {
		names = append(names, suspectLabel(r, g, &s))
	}
	if len(suspects) == 1 {
		return fmt.Sprintf("Failures concentrate on %s: %d of %d requests failed (%s, 95%% CI %s) against %d of %d %s (%s, %s), %s.",
			suspectList(r, g, suspects, false), failed, n, phrase.PctRate(rate), phrase.CIRange(lo, hi),
			restF, restN, others, phrase.PctRate(restRate), phrase.CIRange(rlo, rhi), phrase.PValue(minP))
	}
	return fmt.Sprintf("Failures concentrate on %s: %s; together %d of %d requests failed (%s, 95%% CI %s) against %d of %d %s (%s, %s), %s.",
		phrase.JoinAnd(phrase.Dedupe(names)), suspectList(r, g, suspects, true), failed, n, phrase.PctRate(rate), phrase.CIRange(lo, hi),
		restF, restN, others, phrase.PctRate(restRate), phrase.CIRange(rlo, rhi), phrase.PValue(minP))
}

// urlSummary says which URLs fail more than the others with no address of
// their own to blame: "Failures follow the URL, not an address:
// https://x/bad failed 60 of 60 on every address (100%, 95% CI 94–100%)
// against 0 of 60 for the other URLs (0%, 0–6%), p<1e-9."
func urlSummary(r *report.Report, g targetGroups, urls []string, lead string) string {
	tot := r.Totals
	var clauses []string
	notAddress := true
	for _, tg := range urls {
		c := g.counts[tg]
		restF, restN := tot.Failed-c.failed, tot.Requests-c.n
		var probed, failing []string
		for _, i := range g.endpoints[tg] {
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
		lo, hi := stat.Wilson(c.failed, c.n)
		rlo, rhi := stat.Wilson(restF, restN)
		restRate := 0.0
		if restN > 0 {
			restRate = float64(restF) / float64(restN)
		}
		clauses = append(clauses, fmt.Sprintf("%s failed %d of %d %s (%s, 95%% CI %s)%s against %d of %d for the other URLs (%s, %s), %s",
			tg, c.failed, c.n, where, phrase.PctRate(float64(c.failed)/float64(c.n)), phrase.CIRange(lo, hi), note,
			restF, restN, phrase.PctRate(restRate), phrase.CIRange(rlo, rhi), phrase.PValue(stat.FisherGreater(c.failed, c.n, restF, restN))))
	}
	if notAddress {
		lead += ", not an address"
	}
	return lead + ": " + strings.Join(clauses, "; ") + "."
}

// spreadSummary explains failures that no test attributes. When they all
// sit in one place (an address, a family, a URL) that is said, with the
// p-value it would have needed: there were too few requests to tell.
func spreadSummary(r *report.Report, g targetGroups, fams []string, tests []report.Test, alpha float64) string {
	tot := r.Totals
	lo, hi := stat.Wilson(tot.Failed, tot.Requests)
	if len(tests) == 0 {
		return fmt.Sprintf("%d of %d requests failed (%s, 95%% CI %s) on the only endpoint probed, %s: with no other address to compare it with, the failures cannot be pinned on one.",
			tot.Failed, tot.Requests, phrase.PctRate(tot.FailureRate), phrase.CIRange(lo, hi), r.Endpoints[0].Address)
	}
	minP := 1.0
	for _, t := range tests {
		minP = math.Min(minP, t.P)
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
	addrs, famsFailing, targets = phrase.Dedupe(addrs), phrase.Dedupe(famsFailing), phrase.Dedupe(targets)
	where := ""
	switch {
	case len(addrs) == 1:
		where = addrs[0]
		if len(eps) == 1 && len(g.targets) > 1 {
			where = eps[0]
		}
	case len(fams) == 2 && len(famsFailing) == 1:
		where = phrase.FamilyNames[famsFailing[0]] + " (" + strings.Join(addrs, ", ") + ")"
	case len(g.targets) > 1 && len(targets) == 1:
		where = targets[0]
	}
	// The evidence for that place: the smallest p of a test whose scope
	// holds every failure.
	p := math.Inf(1)
	for _, t := range tests {
		if t.Failed == tot.Failed {
			p = math.Min(p, t.P)
		}
	}
	if math.IsInf(p, 1) {
		p = minP
	}
	if where != "" && p >= alpha {
		if tot.Failed == 1 {
			return fmt.Sprintf("1 of %d requests failed, on %s, but a single failure cannot be attributed (%s, needs p<%s): run longer.",
				tot.Requests, where, phrase.PValue(p), phrase.AlphaValue(alpha))
		}
		return fmt.Sprintf("%d of %d requests failed, all on %s, but too few requests to attribute them (%s, needs p<%s): run longer.",
			tot.Failed, tot.Requests, where, phrase.PValue(p), phrase.AlphaValue(alpha))
	}
	scopes := "address or family"
	if len(g.targets) > 1 {
		scopes = "address, family or URL"
	}
	return fmt.Sprintf("Failures are spread: %d of %d requests failed (%s, 95%% CI %s), and no %s fails significantly more than the rest (smallest %s).",
		tot.Failed, tot.Requests, phrase.PctRate(tot.FailureRate), phrase.CIRange(lo, hi), scopes, phrase.PValue(minP))
}
