package compare

import (
	"cmp"
	"fmt"
	"pinprobe/report"
	"pinprobe/report/judge"
	"pinprobe/report/phrase"
	"pinprobe/report/stat"
	"slices"
	"strconv"
	"strings"
)

// CompareSchema identifies the JSON document of a comparison.
const CompareSchema = "pinprobe.compare/v1"

// Comparison statuses.
const (
	CompareRegressed = "regressed" // something got significantly worse (whatever else got better)
	CompareImproved  = "improved"  // something got better and nothing worse
	CompareUnchanged = "unchanged" // no significant change
	// CompareDisjoint says nothing was compared: no endpoint was probed in
	// both reports (or one has no request at all). Other endpoints,
	// families and totals are other things, so their rates are not tested,
	// and what vanished is no improvement; only a new endpoint is still
	// tested against its URL's endpoints before, and a regression there is
	// "regressed".
	CompareDisjoint = "disjoint"
)

// Changes of one scope.
const (
	ChangeWorse   = "worse"   // fails significantly more after (one-sided Fisher)
	ChangeBetter  = "better"  // fails significantly less after
	ChangeSame    = "same"    // no significant change, or nothing to test
	ChangeAdded   = "added"   // probed after only
	ChangeRemoved = "removed" // probed before only
)

// Comparison is the pinprobe.compare/v1 document: how failures and latency
// changed from one saved report (before) to another (after), in total, per
// address family and per endpoint (target URL pinned to one address).
//
// Failure rates are compared with Fisher's exact test: "worse" and "better"
// are the one-sided tests (does after fail more, or less, than before?), p
// is two-sided. Each status and error class's share of the answers is
// compared two-sided. Every test made counts toward the Bonferroni split:
// a change is significant when its p is below Alpha / Comparisons
// (AlphaEach); Alpha is 0.001, as for the verdict of a run.
type Comparison struct {
	// Schema is "pinprobe.compare/v1".
	Schema string `json:"schema"`
	// Status is "regressed", "improved" or "unchanged"; Regressed() reports
	// the first.
	Status string `json:"status"`
	// Conclusion says the outcome in one line, the most important first:
	// "regression: 127.0.0.2 0% → 12%, p<1e-9", "IPv6 failures gone: ::1
	// removed; 127.0.0.1, 127.0.0.2 0% → 0%", "no significant change".
	Conclusion string `json:"conclusion"`
	// Before and After describe the two reports.
	Before RunSide `json:"before"`
	After  RunSide `json:"after"`
	// Alpha is the significance level of all the tests together;
	// Comparisons is how many tests were made, AlphaEach = Alpha /
	// Comparisons the level each one must beat (Bonferroni).
	Alpha       float64 `json:"alpha"`
	Comparisons int     `json:"comparisons"`
	AlphaEach   float64 `json:"alpha_each"`
	// Totals compares all requests; Families each address family ("ipv4",
	// "ipv6") probed in either report, in that order; Endpoints each
	// endpoint probed in either report, grouped by target in the order they
	// first appear (before's, then those new in after).
	Totals    ScopeChange   `json:"totals"`
	Families  []ScopeChange `json:"families"`
	Endpoints []ScopeChange `json:"endpoints"`
	// Added and Removed list the endpoints probed in only one of the reports
	// (each is in Endpoints too, as "added" or "removed").
	Added   []EndpointID `json:"added"`
	Removed []EndpointID `json:"removed"`
	// Notes warn of what makes the two reports less comparable: different
	// --fail-status, an interrupted run.
	Notes []string `json:"notes"`
	// common counts the endpoints probed in both reports.
	common int
	// short is each endpoint's URL as short as tells it apart, and multi
	// whether there are several (see Label).
	short map[string]string
	multi bool
}

// RunSide describes one of the compared reports.
type RunSide struct {
	// File is the report's file name, set by the caller ("" when unknown).
	File        string      `json:"file"`
	Version     string      `json:"version"`
	Command     []string    `json:"command"`
	StartedAt   report.Time `json:"started_at"`
	EndedAt     report.Time `json:"ended_at"`
	Interrupted bool        `json:"interrupted"`
	// Inputs is how many reports it was merged from; 0 for a single run.
	Inputs      int     `json:"inputs"`
	FailStatus  string  `json:"fail_status"`
	Requests    int64   `json:"requests"`
	Failed      int64   `json:"failed"`
	FailureRate float64 `json:"failure_rate"`
	// Verdict is the report's own verdict status.
	Verdict string `json:"verdict"`
}

// EndpointID names an endpoint: a target URL pinned to an address.
type EndpointID struct {
	Target  string `json:"target"`
	Address string `json:"address"`
	Family  string `json:"family"`
}

// ScopeChange is how one scope (the total, a family or an endpoint) changed.
type ScopeChange struct {
	// Scope is "total", "family ipv6" or "endpoint ::1 (https://…/)".
	Scope string `json:"scope"`
	// Family is set for families and endpoints; Target and Address for
	// endpoints.
	Family  string `json:"family,omitempty"`
	Target  string `json:"target,omitempty"`
	Address string `json:"address,omitempty"`
	// Change is "worse", "better", "same", "added" or "removed"; an added
	// scope that fails significantly more than its baseline is "worse".
	Change string `json:"change"`
	// Before and After are the scope's figures; null on the side where it
	// was not probed.
	Before *Side `json:"before"`
	After  *Side `json:"after"`
	// Baseline is what an added scope was tested against (BaselineScope:
	// the same URL's endpoints before, or all requests before); null
	// otherwise.
	Baseline      *Side  `json:"baseline,omitempty"`
	BaselineScope string `json:"baseline_scope,omitempty"`
	// Tested is set when the failure rates were tested (both sides had
	// requests); the test counts toward Comparisons.
	Tested bool `json:"tested"`
	// P is the two-sided Fisher exact p of a different failure rate; PWorse
	// and PBetter the one-sided p of a higher and of a lower one after.
	// All three are 1 when untested.
	P       float64 `json:"p"`
	PWorse  float64 `json:"p_worse"`
	PBetter float64 `json:"p_better"`
	// Answers compares each status and error class's share of the answers,
	// for scopes probed on both sides, largest share first.
	Answers []AnswerChange `json:"answers"`
}

// Side is one scope's figures in one report.
type Side struct {
	Requests    int64   `json:"requests"`
	Failed      int64   `json:"failed"`
	FailureRate float64 `json:"failure_rate"`
	// CI95 is the Wilson 95% interval of the failure rate.
	CI95 [2]float64 `json:"ci95"`
	// P50MS and P99MS are latency percentiles in milliseconds, from the
	// report's (possibly merged) histogram.
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	// Status and Errors count the answers by HTTP status and by error
	// class, as in the report.
	Status map[string]int64 `json:"status"`
	Errors map[string]int64 `json:"errors"`
}

// AnswerChange is how often one status or error class answered, before
// and after.
type AnswerChange struct {
	// Answer is a status ("502") or an error class ("reset"); Kind says
	// which: "status" or "error".
	Answer string `json:"answer"`
	Kind   string `json:"kind"`
	// Failure is set when the answer counts as a failure (an error class, or
	// a status in after's --fail-status).
	Failure bool  `json:"failure"`
	Before  int64 `json:"before"`
	After   int64 `json:"after"`
	// BeforeShare and AfterShare are the answer's share of the scope's
	// requests.
	BeforeShare float64 `json:"before_share"`
	AfterShare  float64 `json:"after_share"`
	// Change is "appeared" (none before), "vanished" (none after), "more"
	// or "less" (the share changed significantly), or "same".
	Change string `json:"change"`
	// Tested is set when the shares were tested (the scope had more than
	// one kind of answer); P is the two-sided Fisher exact p.
	Tested      bool    `json:"tested"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// Regressed reports whether any endpoint, family or the total got
// significantly worse.
func (c *Comparison) Regressed() bool { return c.Status == CompareRegressed }

// FailsGate reports whether --fail-on-regression exits 1: on a regression,
// and when nothing could be compared (CompareDisjoint), since a gate that
// judged nothing does not pass.
func (c *Comparison) FailsGate() bool {
	return c.Status == CompareRegressed || c.Status == CompareDisjoint
}

// Compare compares two reports (plain or merged): see Comparison. It reads
// only what Validate guarantees; set Before.File and After.File to name
// them in the renderers.
func Compare(before, after *report.Report) *Comparison {
	c := &Comparison{
		Schema: CompareSchema, Before: runSide(before), After: runSide(after), Alpha: judge.Alpha,
		Families: []ScopeChange{}, Endpoints: []ScopeChange{}, Added: []EndpointID{}, Removed: []EndpointID{}, Notes: []string{},
	}
	fail := report.FailStatusOf(after)
	if !report.FailStatusOf(before).Equal(fail) {
		c.Notes = append(c.Notes, fmt.Sprintf("the reports count different statuses as failures (before --fail-status %s, after %s): their failure rates do not measure the same thing",
			OrDefault(before.Plan.FailStatus, report.DefaultFailStatus), OrDefault(after.Plan.FailStatus, report.DefaultFailStatus)))
	}
	for _, s := range []struct {
		name string
		r    *report.Report
	}{{"before", before}, {"after", after}} {
		if s.r.Interrupted {
			c.Notes = append(c.Notes, "the "+s.name+" run was interrupted: it covers less time than planned")
		}
	}

	c.endpoints(before, after)
	c.labels()
	// With no endpoint in common, the families and totals hold other
	// endpoints on each side: their figures are shown, not tested.
	disjoint := c.common == 0
	scope := func(name string, b, a *Side) ScopeChange {
		if disjoint && b != nil && a != nil {
			sc := newScopeChange(name, nil, nil)
			sc.Before, sc.After = b, a
			return sc
		}
		return newScopeChange(name, b, a)
	}
	c.Totals = scope("total", sideOfPtr(&before.Totals), sideOfPtr(&after.Totals))
	for _, fam := range []string{"ipv4", "ipv6"} {
		b, a := before.Families[fam], after.Families[fam]
		if (b == nil || b.Requests == 0) && (a == nil || a.Requests == 0) {
			continue
		}
		sc := scope("family "+fam, sideOfPtr(b), sideOfPtr(a))
		sc.Family = fam
		if sc.Change == ChangeAdded && !disjoint {
			sc.addBaseline("all requests before", sideOf(&before.Totals))
		}
		c.Families = append(c.Families, sc)
	}

	// Count the tests, then judge each against its share of alpha.
	for _, sc := range c.Scopes() {
		if sc.Tested {
			c.Comparisons++
		}
		sc.Answers = answerChanges(sc.Before, sc.After, fail)
		for _, a := range sc.Answers {
			if a.Tested {
				c.Comparisons++
			}
		}
	}
	c.AlphaEach = c.Alpha / float64(max(c.Comparisons, 1))
	for _, sc := range c.Scopes() {
		if sc.Tested && (sc.Change == ChangeSame || sc.Change == ChangeAdded) {
			switch {
			case sc.PWorse < c.AlphaEach:
				sc.Change = ChangeWorse
			case sc.PBetter < c.AlphaEach && sc.Baseline == nil:
				sc.Change = ChangeBetter
			}
		}
		for i := range sc.Answers {
			a := &sc.Answers[i]
			a.Significant = a.Tested && a.P < c.AlphaEach
			if a.Significant && a.Change == "same" {
				a.Change = "more"
				if a.AfterShare < a.BeforeShare {
					a.Change = "less"
				}
			}
		}
	}
	c.Status = CompareUnchanged
	if disjoint {
		c.Status = CompareDisjoint
	}
	for _, sc := range c.Scopes() {
		switch {
		case c.Before.Requests == 0 || c.After.Requests == 0:
			// Nothing to compare.
		case sc.Change == ChangeWorse:
			c.Status = CompareRegressed
		case c.Status == CompareUnchanged && (sc.Change == ChangeBetter || sc.Change == ChangeRemoved && sc.Before.Failed > 0):
			c.Status = CompareImproved
		}
	}
	c.Conclusion = c.conclude()
	return c
}

func OrDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runSide says one side of a comparison. Its verdict is judged afresh, at
// the level the report was judged at: a saved verdict is never trusted.
func runSide(r *report.Report) RunSide {
	return RunSide{
		Version: r.Version, Command: r.Command, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Interrupted: r.Interrupted,
		Inputs: len(r.Inputs), FailStatus: OrDefault(r.Plan.FailStatus, report.DefaultFailStatus),
		Requests: r.Totals.Requests, Failed: r.Totals.Failed, FailureRate: r.Totals.FailureRate,
		Verdict: judge.Judge(r, judge.LevelOf(r)).Status,
	}
}

// Scopes returns every ScopeChange of c, to be read or updated in place.
func (c *Comparison) Scopes() []*ScopeChange {
	out := []*ScopeChange{&c.Totals}
	for i := range c.Families {
		out = append(out, &c.Families[i])
	}
	for i := range c.Endpoints {
		out = append(out, &c.Endpoints[i])
	}
	return out
}

// endpoints matches the endpoints by target and address. An endpoint
// without requests on one side counts as not probed there.
func (c *Comparison) endpoints(before, after *report.Report) {
	type pair struct{ b, a *report.Endpoint }
	var order []report.EpKey
	pairs := map[report.EpKey]*pair{}
	for _, side := range []struct {
		r      *report.Report
		before bool
	}{{before, true}, {after, false}} {
		for i := range side.r.Endpoints {
			e := &side.r.Endpoints[i]
			if e.Requests == 0 {
				continue
			}
			k := report.KeyOf(e)
			p := pairs[k]
			if p == nil {
				p = &pair{}
				pairs[k] = p
				order = append(order, k)
			}
			if side.before {
				p.b = e
			} else {
				p.a = e
			}
		}
	}
	// Group by target, in the order the targets first appear.
	var targets []string
	for _, k := range order {
		targets = append(targets, k.Target)
	}
	targets = phrase.Dedupe(targets)
	baseline := map[string]*report.Stats{} // target -> its endpoints before, summed
	for i := range before.Endpoints {
		e := &before.Endpoints[i]
		s := baseline[e.Target]
		if s == nil {
			s = &report.Stats{Status: map[string]int64{}, Errors: map[string]int64{}}
			baseline[e.Target] = s
		}
		report.AddCounts(s, &e.Stats)
	}
	for _, p := range pairs {
		if p.b != nil && p.a != nil {
			c.common++
		}
	}
	for _, tg := range targets {
		for _, k := range order {
			if k.Target != tg {
				continue
			}
			p := pairs[k]
			var b, a *Side
			id := EndpointID{Target: k.Target, Address: k.Address}
			if p.b != nil {
				b, id.Family = sideOfPtr(&p.b.Stats), p.b.Family
			}
			if p.a != nil {
				a, id.Family = sideOfPtr(&p.a.Stats), p.a.Family
			}
			sc := newScopeChange("endpoint "+k.Address+" ("+k.Target+")", b, a)
			sc.Family, sc.Target, sc.Address = id.Family, k.Target, k.Address
			switch sc.Change {
			case ChangeAdded:
				c.Added = append(c.Added, id)
				if s := baseline[k.Target]; s != nil && s.Requests > 0 {
					sc.addBaseline("the endpoints of "+k.Target+" before", sideOf(s))
				} else if c.common > 0 {
					sc.addBaseline("all requests before", sideOf(&before.Totals))
				}
			case ChangeRemoved:
				c.Removed = append(c.Removed, id)
			}
			c.Endpoints = append(c.Endpoints, sc)
		}
	}
}

func sideOfPtr(s *report.Stats) *Side {
	if s == nil || s.Requests == 0 {
		return nil
	}
	side := sideOf(s)
	return &side
}

func sideOf(s *report.Stats) Side {
	lo, hi := stat.Wilson(s.Failed, s.Requests)
	rate := 0.0
	if s.Requests > 0 {
		rate = stat.Round(float64(s.Failed)/float64(s.Requests), 6)
	}
	return Side{
		Requests: s.Requests, Failed: s.Failed, FailureRate: rate, CI95: [2]float64{stat.Round(lo, 4), stat.Round(hi, 4)},
		P50MS: s.LatencyMS.P50, P99MS: s.LatencyMS.P99, Status: report.NonZero(s.Status), Errors: report.NonZero(s.Errors),
	}
}

// newScopeChange tests before against after when both were probed.
func newScopeChange(scope string, b, a *Side) ScopeChange {
	sc := ScopeChange{Scope: scope, Before: b, After: a, Change: ChangeSame, P: 1, PWorse: 1, PBetter: 1, Answers: []AnswerChange{}}
	switch {
	case b == nil && a == nil:
	case b == nil:
		sc.Change = ChangeAdded
	case a == nil:
		sc.Change = ChangeRemoved
	case b.Requests > 0 && a.Requests > 0:
		sc.Tested = true
		sc.P = stat.FisherTwoSided(a.Failed, a.Requests, b.Failed, b.Requests)
		sc.PWorse = stat.FisherGreater(a.Failed, a.Requests, b.Failed, b.Requests)
		sc.PBetter = stat.FisherGreater(b.Failed, b.Requests, a.Failed, a.Requests)
	}
	return sc
}

// addBaseline tests an added scope against what stood in its place before.
func (sc *ScopeChange) addBaseline(scope string, base Side) {
	if base.Requests == 0 || sc.After == nil {
		return
	}
	a := sc.After
	sc.Baseline, sc.BaselineScope = &base, scope
	sc.Tested = true
	sc.P = stat.FisherTwoSided(a.Failed, a.Requests, base.Failed, base.Requests)
	sc.PWorse = stat.FisherGreater(a.Failed, a.Requests, base.Failed, base.Requests)
	sc.PBetter = stat.FisherGreater(base.Failed, base.Requests, a.Failed, a.Requests)
}

// answerChanges compares each answer's share of the requests, largest
// share (after, then before) first.
func answerChanges(b, a *Side, fail report.FailStatus) []AnswerChange {
	out := []AnswerChange{}
	if b == nil || a == nil {
		return out
	}
	kinds := map[string]string{}
	for _, m := range []struct {
		counts map[string]int64
		kind   string
	}{{b.Status, "status"}, {a.Status, "status"}, {b.Errors, "error"}, {a.Errors, "error"}} {
		for k := range m.counts {
			kinds[k] = m.kind
		}
	}
	tested := len(kinds) > 1
	for _, k := range phrase.SortedKeys(kinds) {
		bc, ac := b.Status[k]+b.Errors[k], a.Status[k]+a.Errors[k]
		ch := AnswerChange{Answer: k, Kind: kinds[k], Before: bc, After: ac, Change: "same", P: 1,
			BeforeShare: stat.Round(float64(bc)/float64(b.Requests), 6), AfterShare: stat.Round(float64(ac)/float64(a.Requests), 6)}
		ch.Failure = ch.Kind == "error"
		if code, err := strconv.Atoi(k); err == nil && ch.Kind == "status" {
			ch.Failure = fail.Fails(code)
		}
		switch {
		case bc == 0:
			ch.Change = "appeared"
		case ac == 0:
			ch.Change = "vanished"
		}
		if tested {
			ch.Tested = true
			ch.P = stat.FisherTwoSided(ac, a.Requests, bc, b.Requests)
		}
		out = append(out, ch)
	}
	sortAnswers(out)
	return out
}

// sortAnswers puts the largest share after first, then the largest
// before, then by name.
func sortAnswers(out []AnswerChange) {
	slices.SortStableFunc(out, func(x, y AnswerChange) int {
		if c := cmp.Compare(y.AfterShare, x.AfterShare); c != 0 {
			return c
		}
		if c := cmp.Compare(y.BeforeShare, x.BeforeShare); c != 0 {
			return c
		}
		return strings.Compare(x.Answer, y.Answer)
	})
}

// label names a scope in a sentence: the address (with its URL when the
// reports probed several), the family's name, or "total".
func (c *Comparison) Label(sc *ScopeChange) string {
	switch {
	case sc.Address != "":
		if c.multiURL() {
			return sc.Address + " " + c.shortURL(sc.Target)
		}
		return sc.Address
	case sc.Family != "":
		return phrase.FamilyName(sc.Family)
	}
	return "total"
}

// labels shortens the endpoints' URLs over the targets of both reports,
// once, for Label.
func (c *Comparison) labels() {
	r := &report.Report{}
	for _, e := range c.Endpoints {
		r.Endpoints = append(r.Endpoints, report.Endpoint{Target: e.Target})
	}
	c.short = report.ShortURLs(r)
	c.multi = len(c.short) > 1
}

func (c *Comparison) multiURL() bool { return c.multi }

// shortURL is ShortURL over the targets of both reports.
func (c *Comparison) shortURL(target string) string {
	if s, ok := c.short[target]; ok {
		return s
	}
	return target
}

// rates is "0% → 12%".
func rates(sc *ScopeChange) string {
	b, a := "-", "-"
	if sc.Before != nil {
		b = phrase.PctRate(sc.Before.FailureRate)
	}
	if sc.After != nil {
		a = phrase.PctRate(sc.After.FailureRate)
	}
	return b + " → " + a
}

// conclude writes the one-line conclusion: regressions first, then what
// got better (failing endpoints gone, lower rates), then what stayed.
func (c *Comparison) conclude() string {
	if c.Before.Requests == 0 || c.After.Requests == 0 {
		which := "before"
		if c.Before.Requests > 0 {
			which = "after"
		} else if c.After.Requests == 0 {
			which = "either report"
		}
		return "nothing to compare: no request in " + which
	}
	if c.common == 0 {
		nothing := "no endpoint in common: " + c.probedWords()
		var worse []string
		for i := range c.Endpoints {
			if sc := &c.Endpoints[i]; sc.Change == ChangeWorse {
				worse = append(worse, c.worseWords(sc))
			}
		}
		if len(worse) > 0 {
			return "regression: " + limitItems(worse, 3, "; ") + "; n" + strings.TrimPrefix(nothing, "n")
		}
		return nothing
	}
	var worse, better, gone, same, added, removed []*ScopeChange
	for _, sc := range c.Endpoints {
		sc := sc
		switch {
		case sc.Change == ChangeWorse:
			worse = append(worse, &sc)
		case sc.Change == ChangeBetter:
			better = append(better, &sc)
		case sc.Change == ChangeRemoved && sc.Before.Failed > 0:
			gone = append(gone, &sc)
		case sc.Change == ChangeRemoved:
			removed = append(removed, &sc)
		case sc.Change == ChangeAdded:
			added = append(added, &sc)
		default:
			same = append(same, &sc)
		}
	}
	// With no endpoint to blame, a family or the total is named.
	if len(worse) == 0 {
		for i := range c.Families {
			if c.Families[i].Change == ChangeWorse {
				worse = append(worse, &c.Families[i])
			}
		}
	}
	if len(worse) == 0 && c.Totals.Change == ChangeWorse {
		worse = append(worse, &c.Totals)
	}
	if len(better) == 0 && len(gone) == 0 {
		for i := range c.Families {
			if f := &c.Families[i]; f.Change == ChangeBetter || f.Change == ChangeRemoved && f.Before.Failed > 0 {
				better = append(better, f)
			}
		}
	}
	if len(better) == 0 && len(gone) == 0 && c.Totals.Change == ChangeBetter {
		better = append(better, &c.Totals)
	}

	var clauses []string
	if len(worse) > 0 {
		var items []string
		for _, sc := range worse {
			items = append(items, c.worseWords(sc))
		}
		clauses = append(clauses, "regression: "+limitItems(items, 3, "; "))
		if len(gone)+len(better) > 0 {
			clauses = append(clauses, "also "+c.betterWords(gone, better))
		}
		return strings.Join(clauses, "; ")
	}
	if len(gone)+len(better) > 0 {
		clauses = append(clauses, c.improvementLead()+": "+c.betterWords(gone, better))
	} else {
		lead := "no significant change"
		if c.Totals.Tested {
			lead += fmt.Sprintf(" (total %s, %s)", rates(&c.Totals), phrase.PValue(c.Totals.P))
		}
		clauses = append(clauses, lead)
	}
	if len(same) > 0 {
		clauses = append(clauses, c.groupWords(same))
	}
	if len(removed) > 0 {
		clauses = append(clauses, c.listWords(removed)+" removed")
	}
	if len(added) > 0 {
		clauses = append(clauses, c.listWords(added)+" added ("+afterRates(added)+")")
	}
	if len(clauses) > 1 && !strings.Contains(clauses[0], ": ") {
		return clauses[0] + ": " + strings.Join(clauses[1:], "; ")
	}
	return strings.Join(clauses, "; ")
}

// probedWords says what each report probed, for reports with no endpoint
// in common: "BEFORE probed 127.0.0.1, 127.0.0.2 at https://a.example/;
// AFTER probed 192.0.2.7 at https://b.example/".
func (c *Comparison) probedWords() string {
	side := func(name string, before bool) string {
		var targets []string
		addrs := map[string][]string{}
		for _, sc := range c.Endpoints {
			if before && sc.Before == nil || !before && sc.After == nil {
				continue
			}
			if _, ok := addrs[sc.Target]; !ok {
				targets = append(targets, sc.Target)
			}
			addrs[sc.Target] = append(addrs[sc.Target], sc.Address)
		}
		var items []string
		for _, tg := range targets {
			items = append(items, limitItems(addrs[tg], 4, ", ")+" at "+tg)
		}
		if len(items) == 0 {
			return name + " probed nothing"
		}
		return name + " probed " + limitItems(items, 3, " and ")
	}
	return side("BEFORE", true) + "; " + side("AFTER", false)
}

// improvementLead says what got better in a few words: "IPv6 failures
// gone" when every failure before was in a family that has none now.
func (c *Comparison) improvementLead() string {
	failing := map[string]bool{}
	for _, f := range c.Families {
		if f.Before != nil && f.Before.Failed > 0 {
			failing[f.Family] = true
		}
	}
	gone := c.After.Failed == 0
	if len(failing) == 1 && len(c.Families) > 1 {
		for fam := range failing {
			for _, f := range c.Families {
				if f.Family == fam && (f.After == nil || f.After.Failed == 0) {
					return phrase.FamilyName(fam) + " failures gone"
				}
			}
		}
	}
	if gone {
		return "failures gone"
	}
	return "improvement"
}

// worseWords is "127.0.0.2 0% → 12%, p<1e-9", or for a new endpoint
// "127.0.0.3 (new) 30% against 0% before, p<1e-9".
func (c *Comparison) worseWords(sc *ScopeChange) string {
	if sc.Baseline != nil {
		return fmt.Sprintf("%s (new) %s against %s before, %s", c.Label(sc), phrase.PctRate(sc.After.FailureRate),
			phrase.PctRate(sc.Baseline.FailureRate), phrase.PValue(sc.PWorse))
	}
	return fmt.Sprintf("%s %s, %s", c.Label(sc), rates(sc), phrase.PValue(sc.PWorse))
}

// betterWords is "::1 removed; 127.0.0.3 100% → 0%, p<1e-9".
func (c *Comparison) betterWords(gone, better []*ScopeChange) string {
	var items []string
	if len(gone) > 0 {
		items = append(items, c.listWords(gone)+" removed")
	}
	for _, sc := range better {
		if sc.Change == ChangeRemoved {
			items = append(items, c.Label(sc)+" removed")
			continue
		}
		items = append(items, fmt.Sprintf("%s %s, %s", c.Label(sc), rates(sc), phrase.PValue(sc.PBetter)))
	}
	return limitItems(items, 3, "; ")
}

// groupWords lists unchanged endpoints grouped by their rates:
// "127.0.0.1, 127.0.0.2 0% → 0%; ::1 4.5% → 5%".
func (c *Comparison) groupWords(scs []*ScopeChange) string {
	var keys []string
	groups := map[string][]*ScopeChange{}
	for _, sc := range scs {
		k := rates(sc)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], sc)
	}
	var items []string
	for _, k := range keys {
		items = append(items, c.listWords(groups[k])+" "+k)
	}
	return limitItems(items, 3, "; ")
}

func (c *Comparison) listWords(scs []*ScopeChange) string {
	var names []string
	for _, sc := range scs {
		names = append(names, c.Label(sc))
	}
	return limitItems(names, 4, ", ")
}

func afterRates(scs []*ScopeChange) string {
	var r []string
	for _, sc := range scs {
		r = append(r, phrase.PctRate(sc.After.FailureRate))
	}
	return strings.Join(phrase.Dedupe(r), ", ")
}

// limitItems joins at most n items and says how many more there are.
func limitItems(items []string, n int, sep string) string {
	if len(items) <= n {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:n], sep) + fmt.Sprintf(" and %d more", len(items)-n)
}
