package render

import (
	"fmt"
	"io"
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
	switch name {
	case "text":
		return func(w io.Writer, j *join.Join) error { return writeJoinText(w, j, o) }, nil
	case "json":
		return join.JSON, nil
	case "markdown":
		return JoinMarkdown, nil
	case "html":
		return JoinHTML, nil
	}
	return nil, fmt.Errorf("unknown format %q (want text, json, markdown, html)", name)
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

var scopeHead = []string{"NAME", "FAMILY", "FAILED/REQUESTS", "RATE", "STATUSES", "BACKEND SAID", "REASONS", "VIA ENDPOINTS", "P"}

func newJoinView(j *join.Join) *joinView {
	v := &joinView{j: j}
	v.run = fmt.Sprintf("%d requests, %d failed, %s → %s UTC", j.Run.Requests, j.Run.Failed,
		j.Run.StartedAt.UTC().Format("2006-01-02 15:04:05.000"), words.Clock(j.Run.EndedAt.Time))
	if j.Run.File != "" {
		v.run = j.Run.File + ": " + v.run
	}
	for _, l := range j.Logs {
		s := fmt.Sprintf("%s: %s%s, %d lines, %d requests", l.Name, l.Format, map[bool]string{true: " (gzip)"}[l.Gzip], l.Lines, l.Records)
		if len(l.Logs) > 0 {
			s += "; logs " + strings.Join(l.Logs, ", ")
		}
		if l.Skipped > 0 {
			s += fmt.Sprintf("; %d line%s did not parse (line%s %s)", l.Skipped, words.Plural(int(l.Skipped)), words.Plural(len(l.SkippedAt)), lineNumbers(l.SkippedAt))
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
	}{{"BY BACKEND", j.Backends}, {"BY GATEWAY INSTANCE", j.Instances}, {"BY LISTENER", j.Listeners}} {
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
	v.endpoints = joinSection{title: "BY PINPROBE ENDPOINT", head: []string{"ADDRESS", "TARGET", "SENT", "FAILED", "LOGGED", "MISSING", "FAILED MATCHED", "BACKENDS"}}
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
		v.missing = append(v.missing, fmt.Sprintf("nothing logged %s → %s UTC, while the run sent %d requests", words.Clock(g.From.Time), words.Clock(g.To.Time), g.Requests))
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

func lineNumbers(ns []int64) string {
	var s []string
	for _, n := range ns {
		s = append(s, strconv.FormatInt(n, 10))
	}
	return strings.Join(s, ", ")
}

// textPrio orders the columns a narrow terminal drops, lowest first; 0
// never goes.
var textPrio = map[string]int{"BACKEND SAID": 2, "TARGET": 3, "REASONS": 4, "FAILED MATCHED": 5, "VIA ENDPOINTS": 6, "P": 7, "FAMILY": 8}

func writeJoinText(w io.Writer, j *join.Join, o Options) error {
	t := &textWriter{errWriter: errWriter{w: w}, color: o.Color, width: max(o.Width, minWidth)}
	if o.Width <= 0 {
		t.width = DefaultWidth
	}
	v := newJoinView(j)
	code, status := ansiBold, joinStatusWord(j)
	if j.Status == join.StatusTraced || j.Status == join.StatusUntraced {
		code = AnsiRed + ansiBold
	}
	t.para(code, status, v.conclusion, 2)
	t.heading("RUN AND LOGS")
	t.para("", " run", v.run, 6)
	for _, l := range v.logs {
		t.para("", " log", l, 6)
	}
	t.para("", " clock offset", v.offset, 6)
	t.para("", " clients", v.clients, 6)
	t.para("", " placed", v.placed, 6)
	for _, n := range v.notPlaced {
		t.para("", " not placed", n, 6)
	}
	for _, s := range append(append([]joinSection{}, v.sections...), v.endpoints) {
		t.heading(s.title)
		// Columns with nothing to say ("-" in every row) are left out.
		keep := make([]bool, len(s.head))
		for i := range s.head {
			for _, r := range s.rows {
				keep[i] = keep[i] || r[i] != "-"
			}
		}
		cols := []textCol{{}}
		for i, h := range s.head {
			if !keep[i] {
				continue
			}
			c := textCol{head: h, prio: textPrio[h]}
			if strings.Contains(h, "/") || h == "RATE" || h == "P" || h == "SENT" || h == "LOGGED" || h == "MISSING" || h == "FAILED" {
				c.right = true
			}
			if h == "STATUSES" || h == "BACKEND SAID" || h == "REASONS" || h == "VIA ENDPOINTS" || h == "BACKENDS" {
				c.list = true
			}
			cols = append(cols, c)
		}
		var rows [][]string
		for i, r := range s.rows {
			row := []string{markOf(s.failing[i])}
			for k, c := range r {
				if keep[k] {
					row = append(row, c)
				}
			}
			rows = append(rows, row)
		}
		t.table(textTable{cols: cols, rows: rows, failing: s.failing})
	}
	if len(v.missing) > 0 {
		t.heading("NOT IN THE LOGS")
		for _, m := range v.missing {
			t.para("", " -", m, 3)
		}
	}
	t.heading("FINDINGS")
	for _, f := range v.findings {
		t.para("", " -", f, 3)
	}
	t.para("", "", fmt.Sprintf("Each backend, instance and listener tested against the rest of its kind with Fisher's exact test, at α = %s split over the tests.", words.AlphaValue(j.Alpha)), 0)
	t.printf("\n")
	return t.err
}

// JoinMarkdown writes a join as Markdown, for a ticket.
func JoinMarkdown(w io.Writer, j *join.Join) error {
	m := &mdWriter{errWriter: errWriter{w: w}}
	v := newJoinView(j)
	m.printf("# pinprobe logs\n\n> **%s** %s\n", joinStatusWord(j), mdText(v.conclusion))
	m.printf("\n## The run and the logs\n\n")
	rows := [][]string{{"Run", mdText(v.run)}}
	for _, l := range v.logs {
		rows = append(rows, []string{"Log", mdText(l)})
	}
	rows = append(rows, []string{"Clock offset", mdText(v.offset)}, []string{"Clients", mdText(v.clients)}, []string{"Placed", mdText(v.placed)})
	for _, n := range v.notPlaced {
		rows = append(rows, []string{"Not placed", mdText(n)})
	}
	m.table([]string{"", ""}, "ll", rows)
	for _, s := range append(append([]joinSection{}, v.sections...), v.endpoints) {
		m.printf("\n## %s\n\n", words.Capitalize(strings.ToLower(s.title)))
		var rs [][]string
		for _, r := range s.rows {
			var cells []string
			for _, c := range r {
				cells = append(cells, mdText(c))
			}
			rs = append(rs, cells)
		}
		align := strings.Repeat("l", len(s.head))
		m.table(s.head, align, rs)
	}
	if len(v.missing) > 0 {
		m.printf("\n## Not in the logs\n\n")
		for _, x := range v.missing {
			m.printf("- %s\n", mdText(x))
		}
	}
	m.printf("\n## Findings\n\n")
	for _, f := range v.findings {
		m.printf("- %s\n", mdText(f))
	}
	m.printf("\nEach backend, instance and listener tested against the rest of its kind with Fisher's exact test, at α = %s split over the tests.\n", words.AlphaValue(j.Alpha))
	return m.err
}
