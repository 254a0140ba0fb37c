package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
)

// Alpha is the significance level of a verdict judged once: the chance
// that it names any scope wrongly. It is strict on purpose: a verdict names
// a backend in a support ticket, so 5 of 5 against 0 of 5 is not enough,
// while 10 of 10 against 0 of 10 is.
const Alpha = 0.001

// Once is the level of a run judged once.
func Once() report.Level { return report.Level{Alpha: Alpha} }

// AtLook is the level of one look at a run judged at up to maxLooks looks
// (--until-verdict): an interim look's, or with last the one made when the
// run ended without having stopped (see LookAlpha).
func AtLook(maxLooks int, last bool) report.Level {
	return report.Level{Alpha: LookAlpha(Alpha, maxLooks, last), Looks: maxLooks, Last: last}
}

// LevelOf is the level r's own verdict was judged at, to judge r again
// alike: Once for a report without one, and never more lenient than Once.
func LevelOf(r *report.Report) report.Level {
	l := r.Verdict.Level
	if !(l.Alpha > 0 && l.Alpha <= Alpha) {
		return Once()
	}
	return report.Level{Alpha: l.Alpha, Looks: l.Looks, Last: l.Last}
}

// Judge makes the verdict of r at level l, reading r's counts only: the one
// verdict of a run, a look, a merge and each side of a comparison. Families,
// URLs and addresses are tested against their peers (Fisher); an instance (a
// header's value, across addresses) against its header's others on the same
// addresses, and one that is exactly an address names it; failures repeating on
// connections blame an instance only when connections open at one moment differ
// (MomentTest), else they are windows; a merge's vantages are tested against
// each other over shared time. Every test is at l.Alpha split over the tests
// (Bonferroni); latency apart, at its own l.Alpha.
func Judge(r *report.Report, l report.Level) report.Verdict {
	if r.NotProbed != "" && r.Totals.Requests == 0 {
		return notProbed(r, l)
	}
	j := newJudgement(r, l)
	j.addresses()
	j.vantages()
	if r.Totals.Failed > 0 {
		j.instances()
		j.connections()
		j.resolve()
	}
	j.slow()
	v := j.verdict()
	if l.Last && l.Looks > 1 {
		// The last look of --until-verdict: the run ended unsettled.
		if n := unsettledNote(r, v); n != "" {
			v.Notes = append(v.Notes, n)
		}
	}
	return v
}

// judgement is one verdict in the making.
type judgement struct {
	r     *report.Report
	fail  report.FailStatus
	level report.Level
	g     targetGroups
	short map[string]string // target -> as short as tells it apart
	tests []report.Test
	notes []string
	slows []report.SlowFinding

	// byAddr holds the endpoints of each address, in order.
	byAddr map[string][]int
	// headers are the instance headers with two values or more that
	// carried requests, in order, and their groups' indexes.
	headers      []string
	groupsByHead map[string][]int

	// What the tests found, before they are weighed against each other.
	endpoint map[int]float64 // endpoint index -> p of an address suspect
	// againstFamily holds the endpoints named only by their test against
	// the other family's addresses, with that test.
	againstFamily map[int]report.Test
	badFamily     string // the family whose test is significant
	badTarget     map[string]bool
	groupFind     []*groupFinding
	agrees        map[string][]string // address -> instance header values that coincide with it
	connFind      map[int]*connFinding
	windowFind    map[int]*windowFinding
	demoted       map[int]bool
	failingURLs   []string
	vantageFind   []vantageFinding
	vplan         *vantagePlan // nil without two vantages
}

func newJudgement(r *report.Report, l report.Level) *judgement {
	j := &judgement{r: r, fail: report.FailStatusOf(r), level: l, tests: []report.Test{}, slows: []report.SlowFinding{},
		g: groupTargets(r), short: report.ShortURLs(r), byAddr: map[string][]int{}, groupsByHead: map[string][]int{},
		endpoint: map[int]float64{}, againstFamily: map[int]report.Test{}, badTarget: map[string]bool{}, agrees: map[string][]string{},
		connFind: map[int]*connFinding{}, windowFind: map[int]*windowFinding{}, demoted: map[int]bool{}}
	for i, e := range r.Endpoints {
		j.byAddr[e.Address] = append(j.byAddr[e.Address], i)
	}
	for i, g := range r.Groups {
		if g.Requests == 0 {
			continue
		}
		j.headers = appendTo(j.headers, j.groupsByHead, g.Header, i)
	}
	j.headers = slices.DeleteFunc(j.headers, func(h string) bool { return len(j.groupsByHead[h]) < 2 })
	j.vplan = planVantages(r)
	j.level.Tests = max(j.testCount(), 1)
	j.level.Each = l.Alpha / float64(j.level.Tests) // one failure test's level
	return j
}

// testCount is how many findings the verdict could make, for the
// Bonferroni split: each family, each URL, each address within its URL
// (and against the other family's addresses, when both were probed), each
// instance within its header, and for each address that failed on its
// connections two (its connections, and time: judgesConns). Tests made
// only to weigh one finding against another (an instance within its
// addresses, an address beyond its instances) share the slot of the
// finding they confirm or discard: each claim needs its own slot's test to
// hold.
func (j *judgement) testCount() int {
	r := j.r
	m := 0
	if len(r.Families) == 2 {
		// The families, and each address against the other family's
		// addresses of its URL (when its family stands out).
		m += 2 + len(r.Endpoints)
	}
	if len(j.g.targets) > 1 {
		m += len(j.g.targets)
	}
	for _, tg := range j.g.targets {
		if n := len(j.g.endpoints[tg]); n > 1 {
			m += n
		}
	}
	for _, h := range j.headers {
		m += len(j.groupsByHead[h])
	}
	for i := range r.Endpoints {
		if judgesConns(&r.Endpoints[i]) {
			m += 2 // its connections, and time
		}
	}
	if j.vplan != nil {
		m += len(j.vplan.cases) // each endpoint from each vantage, over the time they share, in a merge of several
	}
	return m
}

// judgesConns reports whether the verdict tests what happened on e's
// connections: it failed, and some request followed a failure on its
// connection, or every connection open failed at once for a while.
func judgesConns(e *report.Endpoint) bool {
	c := e.Conns
	if c == nil || e.Failed == 0 {
		return false
	}
	return c.WindowsCount > 0 || slices.ContainsFunc(c.Repeat, func(s report.RepeatCounts) bool { return s.AfterFailure > 0 })
}

// label names endpoint i: its address, and its URL too when the run has
// several.
func (j *judgement) label(i int) string {
	e := &j.r.Endpoints[i]
	if len(j.g.targets) > 1 {
		return e.Address + " (" + j.short[e.Target] + ")"
	}
	return e.Address
}

// test records a test at the verdict's level and returns it.
func (j *judgement) test(t report.Test) report.Test {
	t.Significant = t.P < j.level.Each
	j.tests = append(j.tests, t)
	return t
}

// verdict puts the findings together: the suspects in order, the status,
// the headline and summary that name every suspect, and the notes.
func (j *judgement) verdict() report.Verdict {
	r := j.r
	v := report.Verdict{Suspects: []report.Suspect{}, Tests: j.tests, Notes: []string{}, Slow: j.slows, Level: j.level}
	for _, f := range j.vantageFind {
		v.Vantages = append(v.Vantages, f.test)
	}
	tot := r.Totals
	switch {
	case tot.Requests == 0:
		v.Status, v.Summary = report.VerdictNoData, "No request was sent, so there is nothing to judge."
		if n := tot.Abandoned; n > 0 {
			v.Summary = fmt.Sprintf("No request finished: the %d sent were abandoned in flight, so there is nothing to judge.", n)
		}
	case tot.Failed == 0:
		v.Status = report.VerdictOK
		v.Summary = okSummary(tot.Requests, tot.Abandoned)
	default:
		clauses := j.clauses()
		for _, c := range clauses {
			v.Suspects = append(v.Suspects, c.suspects...)
		}
		down := j.outage()
		v.Outage, v.Status = down != nil, report.VerdictSpread
		switch {
		case len(clauses) > 0:
			v.Status = report.VerdictConcentrated
			v.Headline, v.Summary = j.headline(clauses)
			if down != nil {
				// Every address fails nearly every request, and some fail
				// more still: the outage first, or fixing the suspects
				// would seem to be enough.
				v.Headline, v.Summary = down.headline+"; "+v.Headline, down.summary+" On top of that, "+lowerFirst(v.Summary)
			}
		case down != nil:
			v.Headline, v.Summary = down.headline, down.summary
		case len(j.failingURLs) > 0:
			v.Summary = j.urlSummary(j.failingURLs, "Failures follow the URL")
		default:
			v.Summary = j.spreadSummary()
		}
		if len(clauses) > 0 && len(j.failingURLs) > 0 {
			v.Summary += " " + j.urlSummary(j.failingURLs, "Failures also follow the URL")
		}
		h, sentences := j.vantageWords()
		for _, s := range sentences {
			v.Summary += " " + s
		}
		switch {
		case h == "":
		case v.Headline != "":
			v.Headline += "; " + h
		default: // spread over the addresses, but not over the vantages
			v.Headline = spreadWords + "; " + h
		}
	}
	for _, ns := range [][]string{untested(r), groupByNotes(r), j.notes, j.slowNotes(), explainAfterFailure(r, j.fail)} {
		v.Notes = append(v.Notes, ns...)
	}
	for _, n := range []string{ClientNote(r), droppedNote(r), abandonedNote(r), j.unjudged(), j.fewConns()} {
		if n != "" {
			v.Notes = append(v.Notes, n)
		}
	}
	return v
}

// spreadWords say a spread verdict that names nothing else: the headline
// of one without a headline of its own.
const spreadWords = "failures not attributable to one address"

// lowerFirst puts the first letter of a sentence in lower case, to follow
// another's words: "Failures concentrate" → "failures concentrate".
func lowerFirst(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// notProbed is the verdict of a run that sent nothing, and says why.
func notProbed(r *report.Report, l report.Level) report.Verdict {
	why := strings.TrimSuffix(r.NotProbed, ".")
	return report.Verdict{Status: report.VerdictNoData, Summary: "Nothing was probed: " + why + ".",
		Suspects: []report.Suspect{}, Tests: []report.Test{}, Notes: []string{}, Slow: []report.SlowFinding{},
		Level: report.Level{Alpha: l.Alpha, Each: l.Alpha, Tests: 1, SlowEach: l.Alpha, Looks: l.Looks, Last: l.Last}}
}
