package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/words"
)

// JoinRenderer writes a join of a run with access logs in one format.
type JoinRenderer func(io.Writer, *join.Join) error

// JoinForFormat returns the renderer of a join for a --format value
// (text, json, markdown or html).
func JoinForFormat(name string, o Options) (JoinRenderer, error) {
	return forFormat(name, o, joinPage, join.JSON)
}

// joinView is a join prepared for reading, once: the text, Markdown and
// HTML renderers show its rows and sentences.
type joinView struct {
	j          *join.Join
	run        string // one line: the run and its window
	logs       []string
	offset     string
	clients    string
	placed     string
	notPlaced  []string
	sections   []joinSection
	endpoints  joinSection
	missing    []string
	findings   []string
	conclusion string
}

// joinSection is a table of scopes: backends, instances or listeners.
type joinSection struct {
	title   string
	head    []string
	rows    [][]string
	failing []bool
}

var scopeHead = []string{"Name", "Family", "Failed/requests", "Rate", "Statuses", "Backend said", "Reasons", "Via endpoints", "p"}

func newJoinView(j *join.Join) *joinView {
	v := &joinView{j: j}
	v.run = fmt.Sprintf("%d request%s, %d failed, %s → %s UTC", j.Run.Requests, words.Plural(int(j.Run.Requests)), j.Run.Failed,
		j.Run.StartedAt.UTC().Format("2006-01-02 15:04:05.000"), words.Clock(j.Run.EndedAt.Time))
	if j.Run.File != "" {
		v.run = j.Run.File + ": " + v.run
	}
	for _, l := range j.Logs {
		s := fmt.Sprintf("%s: %s%s, %d line%s, %d request%s", l.Name, l.Format, map[bool]string{true: " (gzip)"}[l.Gzip], l.Lines, words.Plural(int(l.Lines)), l.Records, words.Plural(int(l.Records)))
		if len(l.Logs) > 0 {
			s += "; logs " + strings.Join(l.Logs, ", ")
		}
		if l.Skipped > 0 {
			s += fmt.Sprintf("; %d line%s did not parse (line%s %s)", l.Skipped, words.Plural(int(l.Skipped)), words.Plural(len(l.SkippedAt)), joinInts(l.SkippedAt, ", "))
		}
		if l.TooLong > 0 {
			s += fmt.Sprintf("; %d line%s too long, skipped", l.TooLong, words.Plural(int(l.TooLong)))
		}
		if l.Other > 0 {
			s += fmt.Sprintf("; %d records of the gateway's other logs", l.Other)
		}
		if l.Error != "" {
			s += "; " + l.Error
		}
		v.logs = append(v.logs, s)
	}
	v.offset = j.Offset.Describe()
	v.clients = strings.Join(j.Clients, ", ")
	if v.clients == "" {
		v.clients = "none found"
	}
	l := j.Lines
	v.placed = fmt.Sprintf("%d of the logs' %d requests are of the run: %d by request ID, %d by client port and time, %d by client address and time",
		l.Run, l.Records, l.ByRequestID, l.ByPort, l.ByWindow)
	for _, c := range []struct {
		n    int64
		what string
	}{{l.OtherClients, "of other clients"}, {l.OtherRuns, "of other pinprobe runs"}, {l.Outside, "outside the run's window"},
		{l.Preflight, "without a request just before the run: pinprobe's preflight connection check"},
		{l.NotHeld, "past the bound held (counted, not placed)"}} {
		if c.n > 0 {
			v.notPlaced = append(v.notPlaced, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if l.NoKnownEndpoint > 0 {
		v.notPlaced = append(v.notPlaced, fmt.Sprintf("%d lines of the run's clients to no known endpoint: a path, host or listener none of its endpoints has (%s)", l.NoKnownEndpoint, strings.Join(l.NoKnownEndpointAt, ", ")))
	}
	if l.Duplicates > 0 {
		v.notPlaced = append(v.notPlaced, fmt.Sprintf("%d line%s logged twice, counted once (%s)", l.Duplicates, words.Plural(int(l.Duplicates)), strings.Join(l.DuplicatesAt, ", ")))
	}
	if l.NoEndpoint > 0 {
		v.notPlaced = append(v.notPlaced, fmt.Sprintf("%d lines of the run not placed on an endpoint (%s)", l.NoEndpoint, strings.Join(l.NoEndpointAt, ", ")))
	}
	for _, sec := range []struct {
		title string
		list  []join.Scope
	}{{"By backend", j.Backends}, {"By gateway instance", j.Instances}, {"By listener", j.Listeners}} {
		if len(sec.list) == 0 {
			continue
		}
		s := joinSection{title: sec.title, head: scopeHead}
		for _, sc := range sec.list {
			p := "-"
			if sc.Failed > 0 && len(sec.list) > 1 {
				p = words.PValue(sc.P)
			}
			fam := words.FamilyName(sc.Family)
			if fam == "" {
				fam = "-"
			}
			s.rows = append(s.rows, []string{sc.Name, fam, fmt.Sprintf("%d/%d", sc.Failed, sc.Requests), words.PctRate(sc.FailureRate),
				countList(sc.Status), orDash(countList(sc.BackendStatus)), orDash(countList(sc.Reasons)), countList(sc.Endpoints), p})
			// Marked only where the test found it failing more than the
			// rest: a scope with failures and p = 1 is no suspect.
			s.failing = append(s.failing, sc.Significant)
		}
		v.sections = append(v.sections, s)
	}
	v.endpoints = joinSection{title: "By pinprobe endpoint", head: []string{"Address", "Target", "Sent", "Failed", "Logged", "Missing", "Failed matched", "Backends"}}
	for _, e := range j.Endpoints {
		v.endpoints.rows = append(v.endpoints.rows, []string{e.Address, e.Target, strconv.FormatInt(e.Requests, 10), strconv.FormatInt(e.Failed, 10),
			strconv.FormatInt(e.Logged, 10), strconv.FormatInt(e.Missing, 10), fmt.Sprintf("%d/%d", e.FailedMatched, e.TrailFailed), orDash(countList(e.Backends))})
		v.endpoints.failing = append(v.endpoints.failing, e.Failed > 0 || e.Missing > 0)
	}
	m := j.Missing
	if m.Requests > 0 {
		v.missing = append(v.missing, fmt.Sprintf("%d of the run's requests are not in the logs", m.Requests))
	}
	if m.Trail > 0 {
		v.missing = append(v.missing, fmt.Sprintf("%d single requests of the report matched no line: %s", m.Trail, strings.Join(m.IDs, ", ")))
	}
	for _, g := range m.Gaps {
		v.missing = append(v.missing, fmt.Sprintf("nothing logged %s → %s UTC, while the run sent %d request%s", words.Clock(g.From.Time), words.Clock(g.To.Time), g.Requests, words.Plural(int(g.Requests))))
	}
	for _, f := range j.Findings {
		v.findings = append(v.findings, f.Text)
	}
	v.clean()
	return v
}

// joinStatusWord is the join's status as the headline says it.
func joinStatusWord(j *join.Join) string {
	switch j.Status {
	case join.StatusTraced:
		return "FAILURES TRACED"
	case join.StatusUntraced:
		return "UNTRACED"
	case join.StatusNoFailure:
		return "NO FAILURE"
	}
	return "NOTHING JOINED"
}

// clean makes every string of the view printable (what came from a log
// was cleaned where it entered the join; a join built otherwise is made
// safe here), so that widths are measured on what is printed.
func (v *joinView) clean() {
	safe := func(ss []string) {
		for i := range ss {
			ss[i] = words.SafeText(ss[i], false)
		}
	}
	for _, list := range [][]string{v.logs, v.notPlaced, v.missing, v.findings} {
		safe(list)
	}
	v.run, v.offset, v.clients, v.placed = words.SafeText(v.run, false), words.SafeText(v.offset, false), words.SafeText(v.clients, false), words.SafeText(v.placed, false)
	v.conclusion = words.SafeText(v.j.Conclusion, false)
	for _, sec := range append(v.sections, v.endpoints) {
		for _, r := range sec.rows {
			safe(r)
		}
	}
}

// countList is "502×40 200×3": most first.
func countList(m map[string]int64) string {
	var parts []string
	for _, k := range words.ByCount(m) {
		parts = append(parts, k+"×"+strconv.FormatInt(m[k], 10))
	}
	return strings.Join(words.CapItems(parts, 6), " ")
}

// joinCols is how each column of the join's tables is laid out: numbers
// to the right, lists that a narrow terminal may cut, and the order in
// which it drops columns (lowest first; 0 never goes).
var joinCols = map[string]Col{
	"Failed/requests": {Right: true}, "Rate": {Right: true}, "p": {Right: true, Prio: 7},
	"Sent": {Right: true}, "Failed": {Right: true}, "Logged": {Right: true}, "Missing": {Right: true},
	"Statuses": {List: true}, "Backend said": {List: true, Prio: 2}, "Reasons": {List: true, Prio: 4},
	"Via endpoints": {List: true, Prio: 6}, "Backends": {List: true},
	"Target": {Prio: 3}, "Failed matched": {Prio: 5}, "Family": {Prio: 8},
}

// joinPage is a join as a page: the conclusion, the run and the logs, the
// backends, instances and listeners, pinprobe's endpoints, what the logs
// miss and the findings.
func joinPage(j *join.Join) *Page {
	v := newJoinView(j)
	p := &Page{Title: "pinprobe logs", Lead: Para{Lead: joinStatusWord(j), Text: v.conclusion},
		Bad: j.Status == join.StatusTraced || j.Status == join.StatusUntraced}
	run := List{Items: []Item{{Lead: "Run", Text: v.run}}}
	for _, l := range v.logs {
		run.Items = append(run.Items, Item{Lead: "Log", Text: l})
	}
	run.Items = append(run.Items, Item{Lead: "Clock offset", Text: v.offset}, Item{Lead: "Clients", Text: v.clients}, Item{Lead: "Placed", Text: v.placed})
	for _, n := range v.notPlaced {
		run.Items = append(run.Items, Item{Lead: "Not placed", Text: n})
	}
	p.Sections = append(p.Sections, Section{Heading: "The run and the logs", Blocks: []Block{run}})
	for _, s := range append(append([]joinSection{}, v.sections...), v.endpoints) {
		tb := Table{Marks: true}
		// Columns with nothing to say ("-" in every row) are left out; a
		// table without rows keeps its heads.
		var keep []int
		for i, h := range s.head {
			if len(s.rows) > 0 && !slices.ContainsFunc(s.rows, func(r []string) bool { return r[i] != "-" }) {
				continue
			}
			keep = append(keep, i)
			c := joinCols[h]
			c.Head = h
			tb.Cols = append(tb.Cols, c)
		}
		for i, r := range s.rows {
			row := Row{Failing: s.failing[i]}
			for _, k := range keep {
				row.Cells = append(row.Cells, r[k])
			}
			tb.Rows = append(tb.Rows, row)
		}
		p.Sections = append(p.Sections, Section{Heading: s.title, Blocks: []Block{tb}})
	}
	if len(v.missing) > 0 {
		p.Sections = append(p.Sections, Section{Heading: "Not in the logs", Blocks: []Block{bullets(v.missing, 0)}})
	}
	p.Sections = append(p.Sections, Section{Heading: "Findings", Blocks: []Block{bullets(v.findings, 0)}},
		Section{Blocks: []Block{Para{Text: fmt.Sprintf("Each backend, instance and listener tested against the rest of its kind with Fisher's exact test, at α = %s split over the tests.", words.AlphaValue(j.Alpha))}}})
	return p
}
