package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Schema identifies the JSON document of a comparison.
const Schema = "pinprobe.compare/v1"

// Revision is the revision of pinprobe.compare/v1 written, by the
// rule of report.Revision: 2 added "revision" and each percentile's min_p
// and requests_to_tell.
const Revision = 2

// Comparison statuses.
const (
	Regressed = "regressed" // something got significantly worse or slower (whatever else got better)
	Improved  = "improved"  // something got better or faster and nothing worse
	Unchanged = "unchanged" // no significant change
	// Disjoint says nothing was compared: no endpoint was probed in
	// both reports (with --match host, no URL), or one has no request at
	// all. Other endpoints, families and totals are other things, so their
	// rates and latencies are not tested, and what vanished is no
	// improvement; only a new endpoint is still tested against its URL's
	// endpoints before, and a regression there is "regressed".
	Disjoint = "disjoint"
)

// Changes of one scope's failure rate.
const (
	ChangeWorse   = "worse"   // fails significantly more after (one-sided Fisher)
	ChangeBetter  = "better"  // fails significantly less after
	ChangeSame    = "same"    // no significant change, or nothing to test
	ChangeAdded   = "added"   // probed after only
	ChangeRemoved = "removed" // probed before only
)

// Comparison is the pinprobe.compare/v1 document: how failures and latency
// changed from one saved report (before) to another (after), in total, per
// family, endpoint and instance. Failure rates are compared by Fisher's exact
// test (worse and better one-sided, p two-sided), answers' shares two-sided,
// latency by LatencyChange. A change is significant below AlphaEach: Alpha
// (0.001, as for a run) split over every test made (Comparisons, Bonferroni).
type Comparison struct {
	// Schema is "pinprobe.compare/v1", Revision Revision.
	Schema   string `json:"schema"`
	Revision int    `json:"revision,omitempty"`
	// Status is "regressed", "improved", "unchanged" or "disjoint";
	// Regressed() reports the first, FailsGate() the first or the last.
	Status string `json:"status"`
	// Conclusion says the outcome in one line, the most important first:
	// "regression: 127.0.0.2 0% → 12%, p<1e-9", "IPv6 failures gone: ::1
	// removed; 127.0.0.1, 127.0.0.2 0% → 0%", "no significant change".
	Conclusion string `json:"conclusion"`
	// Before and After describe the two reports.
	Before RunSide `json:"before"`
	After  RunSide `json:"after"`
	// Match is how endpoints were matched: MatchEndpoint or MatchHost (see
	// Options.Match).
	Match string `json:"match"`
	// MaxLatencyIncrease is the practical minimum of a latency change.
	MaxLatencyIncrease Tolerance `json:"max_latency_increase"`
	// Common counts the endpoints probed in both reports. Partial is set
	// when, though something was compared, the reports did not probe the
	// same URLs (or one left out a family with -4/-6): their totals,
	// families and instances then hold other things on each side, and are
	// shown, not tested.
	Common  int  `json:"common"`
	Partial bool `json:"partial"`
	// Alpha is the significance level of all the tests together;
	// Comparisons is how many tests were made, AlphaEach = Alpha /
	// Comparisons the level each one must beat (Bonferroni).
	Alpha       float64 `json:"alpha"`
	Comparisons int     `json:"comparisons"`
	AlphaEach   float64 `json:"alpha_each"`
	// Totals compares all requests; Families each address family ("ipv4",
	// "ipv6") probed in either report, in that order; Endpoints each
	// endpoint probed in either report, grouped by target in the order they
	// first appear (before's, then those new in after); Groups each
	// instance (header and value) that answered in either report, in
	// before's order, then after's.
	Totals    ScopeChange   `json:"totals"`
	Families  []ScopeChange `json:"families"`
	Endpoints []ScopeChange `json:"endpoints"`
	Groups    []ScopeChange `json:"groups"`
	// Added and Removed list the endpoints probed in only one of the reports
	// (each is in Endpoints too, as "added" or "removed").
	Added   []EndpointID `json:"added"`
	Removed []EndpointID `json:"removed"`
	// Notes warn of what makes the two reports less comparable: different
	// --fail-status, an interrupted run, URLs probed on one side only.
	Notes []string `json:"notes"`

	opts Options
	// disjoint is set when nothing was compared; mostGone when more than
	// half of before's endpoints were not probed again (their removal is
	// then no improvement).
	disjoint, mostGone bool
	// notProbed says, for a partial comparison, what one side probed and
	// the other did not ("BEFORE's https://a.example/api").
	notProbed []string
	// hint says how the URLs of a disjoint comparison differ, and whether
	// --match host would match them: "only the port differs: --match host
	// compares them", "the hosts differ" (see disjointHint).
	hint string
	// hb, ha and hbase hold the histograms of the scope being compared;
	// baseKey says whose hbase holds.
	hb, ha, hbase *hist
	baseKey       string
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

// ScopeChange is how one scope (the total, a family, an endpoint or an
// instance) changed.
type ScopeChange struct {
	// Scope is "total", "family ipv6", "endpoint ::1 (https://…/)" or
	// "group X-Served-By: gw-3".
	Scope string `json:"scope"`
	// Family is set for families and endpoints; Target and Address for
	// endpoints; Header and Value for instances.
	Family  string `json:"family,omitempty"`
	Target  string `json:"target,omitempty"`
	Address string `json:"address,omitempty"`
	Header  string `json:"header,omitempty"`
	Value   string `json:"value,omitempty"`
	// AfterTarget is the endpoint's URL after, when --match host matched
	// it with a URL that differs in its port (Target is before's).
	AfterTarget string `json:"after_target,omitempty"`
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
	// Latency is how the scope's latency changed.
	Latency LatencyChange `json:"latency"`
	// Answers compares each status and error class's share of the answers,
	// for endpoints, families and the total probed on both sides whose
	// failure rates were tested (Tested), largest share first.
	Answers []AnswerChange `json:"answers"`

	// gone is set on a removed scope whose failures count as fixed.
	gone bool
}

// Side is one scope's figures in one report.
type Side struct {
	Requests    int64   `json:"requests"`
	Failed      int64   `json:"failed"`
	FailureRate float64 `json:"failure_rate"`
	// CI95 is the Wilson 95% interval of the failure rate.
	CI95 [2]float64 `json:"ci95"`
	// P50MS and P99MS are latency percentiles in milliseconds, from the
	// report's (possibly merged) histogram; P50CI95MS and P99CI95MS their
	// 95% intervals (binomial order statistics of the histogram), absent
	// when there are too few requests for one (the p99's needs 368).
	P50MS     float64     `json:"p50_ms"`
	P99MS     float64     `json:"p99_ms"`
	P50CI95MS *[2]float64 `json:"p50_ci95_ms,omitempty"`
	P99CI95MS *[2]float64 `json:"p99_ci95_ms,omitempty"`
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

// NewFailures counts the requests that failed after with a kind of
// failure (a status that counts as one, an error class) the scope did not
// fail with before, and names those kinds, most first: "502". An instance,
// whose answers are not compared, counts its failures after when it had
// none before, and names no kind. A scope whose failure rates were not
// tested against its own before (not probed on both sides, or other things
// on each side) has none.
func (sc *ScopeChange) NewFailures() (n int64, kinds []string) {
	if !sc.Tested || sc.Baseline != nil || sc.Before == nil || sc.After == nil {
		return 0, nil
	}
	if sc.Header != "" {
		if sc.Before.Failed == 0 {
			return sc.After.Failed, nil
		}
		return 0, nil
	}
	for _, a := range sc.Answers { // largest share after first
		if a.Failure && a.Change == "appeared" {
			n += a.After
			kinds = append(kinds, a.Answer)
		}
	}
	return n, kinds
}

// Regressed reports whether any scope got significantly worse or slower.
func (c *Comparison) Regressed() bool { return c.Status == Regressed }

// FailsGate reports whether --fail-on-regression exits 1: on a regression,
// and when nothing could be compared (Disjoint), since a gate that
// judged nothing does not pass.
func (c *Comparison) FailsGate() bool {
	return c.Status == Regressed || c.Status == Disjoint
}

// Reports compares two reports (plain or merged) with DefaultOptions: see
// ReportsWith.
func Reports(before, after *report.Report) *Comparison {
	return ReportsWith(before, after, DefaultOptions())
}

// ReportsWith compares two reports (plain or merged) as o says: see
// Comparison. It reads only what Validate guarantees; set Before.File and
// After.File to name them in the renderers. Each side's verdict is judged
// afresh, at the level its report was judged at: a saved verdict is never
// trusted.
func ReportsWith(before, after *report.Report, o Options) *Comparison {
	c := compareReports(before, after, o)
	c.Before.Verdict = judge.Judge(before, judge.LevelOf(before)).Status
	c.After.Verdict = judge.Judge(after, judge.LevelOf(after)).Status
	return c
}

// compareReports is ReportsWith but for the two verdicts.
func compareReports(before, after *report.Report, o Options) *Comparison {
	if o.Match == "" {
		o.Match = MatchEndpoint
	}
	c := &Comparison{
		Schema: Schema, Revision: Revision, Before: runSide(before), After: runSide(after), Alpha: judge.Alpha,
		Match: o.Match, MaxLatencyIncrease: o.MaxLatencyIncrease,
		Families: []ScopeChange{}, Endpoints: []ScopeChange{}, Groups: []ScopeChange{},
		Added: []EndpointID{}, Removed: []EndpointID{}, Notes: []string{},
		opts: o, hb: newHist(), ha: newHist(), hbase: newHist(),
	}
	if o.alpha > 0 {
		c.Alpha = o.alpha
	}
	fail := report.FailStatusOf(after)
	latency := c.runNotes(before, after, fail)
	c.endpoints(before, after, latency)
	c.labels()
	// With nothing in common, or other URLs on each side, the families,
	// totals and instances hold other endpoints on each side: their figures
	// are shown, not tested.
	whole := !c.disjoint && !c.Partial
	if c.Partial {
		c.Notes = append(c.Notes, "the reports did not probe the same things ("+limitItems(c.notProbed, 3, "; ")+
			"): their totals, families and instances are shown, not tested, and what was not probed again is no improvement")
	}
	c.Totals = c.scope("total", &before.Totals, &after.Totals, whole, latency)
	for _, fam := range []string{"ipv4", "ipv6"} {
		b, a := before.Families[fam], after.Families[fam]
		if (b == nil || b.Requests == 0) && (a == nil || a.Requests == 0) {
			continue
		}
		sc := c.scope("family "+fam, b, a, whole, latency)
		sc.Family = fam
		if sc.Change == ChangeAdded && whole {
			c.addBaseline(&sc, "all requests before", &before.Totals, "", latency)
		}
		sc.gone = whole && !c.mostGone && sc.Change == ChangeRemoved && sc.Before.Failed > 0
		c.Families = append(c.Families, sc)
	}
	c.groups(before, after, whole, latency)
	c.decide(fail)
	c.Conclusion = c.conclude()
	c.hb, c.ha, c.hbase = nil, nil, nil
	return c
}

// runNotes notes what makes the two runs differ in kind: other statuses
// counted as failures, an interrupted run, a machine that could not send
// many of its requests; latency is false after the last, which stops
// latency from being compared.
func (c *Comparison) runNotes(before, after *report.Report, fail report.FailStatus) (latency bool) {
	if !report.FailStatusOf(before).Equal(fail) {
		c.Notes = append(c.Notes, fmt.Sprintf("the reports count different statuses as failures (before --fail-status %s, after %s): their failure rates do not measure the same thing",
			c.Before.FailStatus, c.After.FailStatus))
	}
	sides := []struct {
		name string
		r    *report.Report
	}{{"before", before}, {"after", after}}
	for _, s := range sides {
		if s.r.Interrupted {
			c.Notes = append(c.Notes, "the "+s.name+" run was interrupted: it covers less time than planned")
		}
	}
	latency = true
	for _, s := range sides {
		if e := s.r.Totals.ClientErrors; e > 0 && e*10 >= s.r.Totals.Requests && latency {
			latency = false
			c.Notes = append(c.Notes, "latency is not compared: the machine of the "+s.name+" run could not send many of its requests (client errors), so it was slowed by its own trouble")
		}
	}
	return latency
}

// decide counts the tests, judges each against its share of alpha
// (Bonferroni) and sets the comparison's status.
func (c *Comparison) decide(fail report.FailStatus) {
	for _, sc := range c.Scopes() {
		if sc.Tested {
			c.Comparisons++
		}
		if sc.Latency.Tested {
			c.Comparisons += 2
		}
		// The answers' shares of a scope whose failure rates are not
		// tested (the totals and families of reports that probed other
		// things) are other answers on each side: not compared either.
		if sc.Header == "" && sc.Tested {
			sc.Answers = answerChanges(sc.Before, sc.After, fail)
		}
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
		sc.Latency.decide(c.AlphaEach, c.opts.MaxLatencyIncrease, sc.Baseline != nil)
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
	c.Status = Unchanged
	if c.disjoint {
		c.Status = Disjoint
	}
	for _, sc := range c.Scopes() {
		switch {
		case c.Before.Requests == 0 || c.After.Requests == 0:
			// Nothing to compare.
		case sc.Change == ChangeWorse || sc.Latency.Change == LatencySlower:
			c.Status = Regressed
		case c.Status == Unchanged && (sc.Change == ChangeBetter || sc.Latency.Change == LatencyFaster || sc.gone):
			c.Status = Improved
		}
	}
}

// runSide says one side of a comparison, but for its verdict.
func runSide(r *report.Report) RunSide {
	return RunSide{
		Version: r.Version, Command: r.Command, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Interrupted: r.Interrupted,
		Inputs: len(r.Inputs), FailStatus: cmp.Or(r.Plan.FailStatus, report.DefaultFailStatus),
		Requests: r.Totals.Requests, Failed: r.Totals.Failed, FailureRate: r.Totals.FailureRate,
	}
}

// Scopes returns every ScopeChange of c, to be read or updated in place:
// the total, the families, the endpoints, then the instances.
func (c *Comparison) Scopes() []*ScopeChange {
	out := []*ScopeChange{&c.Totals}
	for i := range c.Families {
		out = append(out, &c.Families[i])
	}
	for i := range c.Endpoints {
		out = append(out, &c.Endpoints[i])
	}
	for i := range c.Groups {
		out = append(out, &c.Groups[i])
	}
	return out
}

// scope compares one scope's stats, b before and a after (nil or without
// requests where it was not probed): their failure rates with Fisher's
// exact test when test is set, and their latencies when latency is set
// too. It leaves their histograms in c.hb and c.ha, for addBaseline.
func (c *Comparison) scope(name string, b, a *report.Stats, test, latency bool) ScopeChange {
	bs, as := c.sideOf(b, c.hb), c.sideOf(a, c.ha)
	sc := ScopeChange{Scope: name, Before: bs, After: as, Change: ChangeSame, P: 1, PWorse: 1, PBetter: 1,
		Answers: []AnswerChange{}, Latency: untestedLatency(bs, as)}
	switch {
	case bs == nil && as == nil:
	case bs == nil:
		sc.Change = ChangeAdded
	case as == nil:
		sc.Change = ChangeRemoved
	case test:
		sc.fisher(bs, as)
		if latency {
			sc.Latency = latencyTest(bs, as, c.hb, c.ha)
		}
	}
	return sc
}

// addBaseline tests an added scope, whose histogram is in c.ha, against
// what stood in its place before: base, whose histogram is in c.hbase
// when key names it (c.baseKey), else decoded from base.HDR.
func (c *Comparison) addBaseline(sc *ScopeChange, scope string, base *report.Stats, key string, latency bool) {
	if base.Requests == 0 || sc.After == nil {
		return
	}
	if key == "" || c.baseKey != key {
		c.baseKey = ""
		c.hbase.reset()
		c.hbase.add(base.HDR)
	}
	bs := c.sideOf(base, nil)
	if c.hbase.n == base.Requests {
		bs = quantileCIs(bs, base, c.hbase)
	}
	a := sc.After
	sc.Baseline, sc.BaselineScope = bs, scope
	sc.fisher(bs, a)
	if latency {
		sc.Latency = latencyTest(bs, a, c.hbase, c.ha)
	} else {
		sc.Latency = untestedLatency(bs, a)
	}
}

// fisher tests the failure rates of b and a: P two-sided, PWorse and
// PBetter one-sided.
func (sc *ScopeChange) fisher(b, a *Side) {
	sc.Tested = true
	sc.P = stat.FisherTwoSided(a.Failed, a.Requests, b.Failed, b.Requests)
	sc.PWorse = stat.FisherGreater(a.Failed, a.Requests, b.Failed, b.Requests)
	sc.PBetter = stat.FisherGreater(b.Failed, b.Requests, a.Failed, a.Requests)
}

// sideOf is one scope's figures, nil when it has no request. Its
// histogram is decoded into h (when h is not nil) for the intervals of its
// percentiles and the latency tests; h is left empty when the histogram
// does not decode or does not hold the scope's requests.
func (c *Comparison) sideOf(s *report.Stats, h *hist) *Side {
	if h != nil {
		h.reset()
	}
	if s == nil || s.Requests == 0 {
		return nil
	}
	rate, ci := judge.RateCI95(s.Failed, s.Requests)
	side := &Side{
		Requests: s.Requests, Failed: s.Failed, FailureRate: rate, CI95: ci,
		P50MS: s.LatencyMS.P50, P99MS: s.LatencyMS.P99, Status: report.NonZero(s.Status), Errors: report.NonZero(s.Errors),
	}
	if h == nil {
		return side
	}
	if !h.add(s.HDR) || h.n != s.Requests {
		h.reset()
		return side
	}
	return quantileCIs(side, s, h)
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
	for _, k := range words.SortedKeys(kinds) {
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

// groups compares the instances: each value of an instance header that
// answered in either report, matched by header and value. The responses
// counted together past a header's first values ("(other values)") are
// other values on each side, and left out.
func (c *Comparison) groups(before, after *report.Report, test, latency bool) {
	type key struct{ header, value string }
	type pair struct{ b, a *report.Group }
	var order []key
	pairs := map[key]*pair{}
	for _, side := range []struct {
		r      *report.Report
		before bool
	}{{before, true}, {after, false}} {
		for i := range side.r.Groups {
			g := &side.r.Groups[i]
			if g.Requests == 0 || g.Value == report.OtherValues {
				continue
			}
			k := key{g.Header, g.Value}
			p := pairs[k]
			if p == nil {
				p = &pair{}
				pairs[k] = p
				order = append(order, k)
			}
			if side.before {
				p.b = g
			} else {
				p.a = g
			}
		}
	}
	for _, k := range order {
		p := pairs[k]
		var b, a *report.Stats
		if p.b != nil {
			b = &p.b.Stats
		}
		if p.a != nil {
			a = &p.a.Stats
		}
		sc := c.scope("group "+k.header+": "+k.value, b, a, test, latency)
		sc.Header, sc.Value = k.header, k.value
		c.Groups = append(c.Groups, sc)
	}
}

// Label names a scope in a sentence: the address (with its URL when the
// reports probed several), the instance ("X-Served-By: gw-3"), the
// family's name, or "total".
func (c *Comparison) Label(sc *ScopeChange) string {
	switch {
	case sc.Address != "":
		if c.multiURL() {
			return sc.Address + " " + c.shortURL(sc.Target)
		}
		return sc.Address
	case sc.Header != "":
		return sc.Header + ": " + sc.Value
	case sc.Family != "":
		return words.FamilyName(sc.Family)
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
