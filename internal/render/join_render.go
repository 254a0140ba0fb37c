package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/words"
)

// JoinForFormat returns the writer of a join of a run with access logs
// in a --format value (text, json, markdown or html).
func JoinForFormat(name string, o Options) (func(io.Writer, *join.Join) error, error) {
	return forFormat(name, o, joinPage, join.JSON)
}

// joinPage is a join as a page: the conclusion, the run and the logs, the
// backends, instances and listeners, pinprobe's endpoints, what the logs
// miss and the findings. Every string is made printable here (what came
// from a log was cleaned where it entered the join; a join built otherwise
// is made safe here), so widths are measured on what is printed.
func joinPage(j *join.Join) *Page {
	status := map[string]string{join.StatusTraced: "FAILURES TRACED", join.StatusUntraced: "UNTRACED", join.StatusNoFailure: "NO FAILURE"}
	p := &Page{Title: "pinprobe logs", Lead: Para{Lead: cmp.Or(status[j.Status], "NOTHING JOINED"), Text: words.SafeText(j.Conclusion, false)},
		Bad: j.Status == join.StatusTraced || j.Status == join.StatusUntraced}
	p.Sections = append(p.Sections, Section{Heading: "The run and the logs", Blocks: []Block{joinRunList(j)}})
	saidReasons := false // under the first table with reasons only
	for _, sec := range []struct {
		title string
		list  []join.Scope
	}{{"By backend", j.Backends}, {"By gateway instance", j.Instances}, {"By listener", j.Listeners}} {
		if len(sec.list) == 0 {
			continue
		}
		var rows []Row
		for _, sc := range sec.list {
			pv := "-"
			if sc.Failed > 0 && len(sec.list) > 1 {
				pv = words.PValue(sc.P)
			}
			// Marked only where the test found it failing more than the
			// rest: a scope with failures and p = 1 is no suspect.
			rows = append(rows, Row{Failing: sc.Significant, Cells: []string{sc.Name, cmp.Or(words.FamilyName(sc.Family), "-"), fmt.Sprintf("%d/%d", sc.Failed, sc.Requests),
				words.PctRate(sc.FailureRate), reasonList(sc.Status, nil), cmp.Or(reasonList(sc.BackendStatus, nil), "-"),
				cmp.Or(reasonList(sc.Reasons, j.ReasonWords), "-"), reasonList(sc.Endpoints, nil), pv}})
		}
		s := joinTable(sec.title, []string{"Name", "Family", "Failed/requests", "Rate", "Statuses", "Backend said", "Reasons", "Via endpoints", "p"}, rows)
		if said := reasonWords(j, sec.list); said != "" && !saidReasons {
			s.Blocks, saidReasons = append(s.Blocks, Para{Text: words.SafeText(said, false)}), true
		}
		p.Sections = append(p.Sections, s)
	}
	var rows []Row
	for _, e := range j.Endpoints {
		// A sample lacks requests by its nature: no mark for them.
		rows = append(rows, Row{Failing: e.Failed > 0 || e.Missing > 0 && !j.Missing.Sampled, Cells: []string{e.Address, e.Target,
			strconv.FormatInt(e.Requests, 10), strconv.FormatInt(e.Failed, 10), strconv.FormatInt(e.Logged, 10), strconv.FormatInt(e.Missing, 10),
			fmt.Sprintf("%d/%d", e.FailedMatched, e.TrailFailed), cmp.Or(reasonList(e.Backends, nil), "-")}})
	}
	p.Sections = append(p.Sections, joinTable("By pinprobe endpoint",
		[]string{"Address", "Target", "Sent", "Failed", "Logged", "Missing", "Failed matched", "Backends"}, rows))
	var missing []string
	m := j.Missing
	if m.Requests > 0 {
		missing = append(missing, fmt.Sprintf("%d of the run's requests are not in the logs", m.Requests)+
			map[bool]string{true: ", which are a sample: not missing from the gateway"}[m.Sampled])
	}
	if m.Trail > 0 {
		missing = append(missing, fmt.Sprintf("%d single requests of the report matched no line: %s", m.Trail, strings.Join(m.IDs, ", ")))
	}
	for _, g := range m.Gaps {
		missing = append(missing, fmt.Sprintf("nothing logged %s → %s UTC, while the run sent %d request%s", words.Clock(g.From.Time), words.Clock(g.To.Time), g.Requests, words.Plural(int(g.Requests))))
	}
	if len(missing) > 0 {
		p.Sections = append(p.Sections, Section{Heading: "Not in the logs", Blocks: []Block{safeBullets(missing)}})
	}
	var findings []string
	for _, f := range j.Findings {
		findings = append(findings, f.Text)
	}
	p.Sections = append(p.Sections, Section{Heading: "Findings", Blocks: []Block{safeBullets(findings)}},
		Section{Blocks: []Block{Para{Text: fmt.Sprintf("Each backend, instance and listener tested against the rest of its kind with Fisher's exact test, at α = %s split over the tests.", words.AlphaValue(j.Alpha))}}})
	return p
}

// joinRunList is the run and the logs: what was read, how the clocks
// differ, and which lines were placed on the run and which not.
func joinRunList(j *join.Join) List {
	var run List
	item := func(lead, text string) {
		run.Items = append(run.Items, Item{Lead: lead, Text: words.SafeText(text, false)})
	}
	line := fmt.Sprintf("%d request%s, %d failed, %s → %s UTC", j.Run.Requests, words.Plural(int(j.Run.Requests)), j.Run.Failed,
		j.Run.StartedAt.UTC().Format("2006-01-02 15:04:05.000"), words.Clock(j.Run.EndedAt.Time))
	if j.Run.File != "" {
		line = j.Run.File + ": " + line
	}
	item("Run", line)
	for _, l := range j.Logs {
		parts := []string{fmt.Sprintf("%s: %s%s, %d line%s, %d request%s", l.Name, l.Format, map[bool]string{true: " (gzip)"}[l.Gzip], l.Lines, words.Plural(int(l.Lines)), l.Records, words.Plural(int(l.Records)))}
		add := func(ok bool, format string, a ...any) {
			if ok {
				parts = append(parts, fmt.Sprintf(format, a...))
			}
		}
		add(len(l.Logs) > 0, "logs %s", strings.Join(l.Logs, ", "))
		add(l.Skipped > 0, "%d line%s did not parse (line%s %s)", l.Skipped, words.Plural(int(l.Skipped)), words.Plural(len(l.SkippedAt)), joinInts(l.SkippedAt, ", "))
		add(l.TooLong > 0, "%d line%s too long, skipped", l.TooLong, words.Plural(int(l.TooLong)))
		add(l.Other > 0, "%d records of the gateway's other logs", l.Other)
		add(l.Error != "", "%s", l.Error)
		add(l.Partial != "", "a sample: %s", l.Partial)
		add(len(l.CannotTell) > 0, "cannot tell: %s", strings.Join(l.CannotTell, "; "))
		p := l.Placed // one log's are the Placed line's
		add(len(j.Logs) > 1, "of the run: %d by request ID, %d by client port and time, %d by client address and time", p.ByRequestID, p.ByClientPort, p.ByClientAddress)
		item("Log", strings.Join(parts, "; "))
	}
	item("Clock offset", j.Offset.Describe())
	item("Clients", cmp.Or(strings.Join(j.Clients, ", "), "none found"))
	l := j.Lines
	item("Placed", fmt.Sprintf("%d of the logs' %d requests are of the run: %d by request ID, %d by client port and time, %d by client address and time",
		l.Run, l.Records, l.ByRequestID, l.ByPort, l.ByWindow))
	for _, c := range []struct {
		n    int64
		what string
	}{{l.OtherClients, "of other clients"}, {l.OtherRuns, "of other pinprobe runs"}, {l.Outside, "outside the run's window"},
		{l.Preflight, "without a request just before the run: pinprobe's preflight connection check"},
		{l.NotHeld, "past the bound held (counted, not placed)"},
		{l.NoKnownEndpoint, "lines of the run's clients to no known endpoint: a path, host or listener none of its endpoints has (" + strings.Join(l.NoKnownEndpointAt, ", ") + ")"},
		{l.Duplicates, "line" + words.Plural(int(l.Duplicates)) + " logged twice, counted once (" + strings.Join(l.DuplicatesAt, ", ") + ")"},
		{l.NoEndpoint, "lines of the run not placed on an endpoint (" + strings.Join(l.NoEndpointAt, ", ") + ")"}} {
		if c.n > 0 {
			item("Not placed", fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return run
}

// joinTable is a section of one table of scopes under title: columns with
// nothing to say ("-" in every row) are left out; a table without rows
// keeps its heads.
func joinTable(title string, head []string, rows []Row) Section {
	tb := Table{Marks: true}
	var keep []int
	for i, h := range head {
		if len(rows) > 0 && !slices.ContainsFunc(rows, func(r Row) bool { return r.Cells[i] != "-" }) {
			continue
		}
		keep = append(keep, i)
		c := joinCols[h]
		c.Head = h
		tb.Cols = append(tb.Cols, c)
	}
	for _, r := range rows {
		cells := r.Cells
		r.Cells = nil
		for _, k := range keep {
			r.Cells = append(r.Cells, words.SafeText(cells[k], false))
		}
		tb.Rows = append(tb.Rows, r)
	}
	return Section{Heading: title, Blocks: []Block{tb}}
}

// safeBullets is a list of lines made printable.
func safeBullets(lines []string) List {
	for i := range lines {
		lines[i] = words.SafeText(lines[i], false)
	}
	return bullets(lines, 0)
}

// reasonList is "502×40 200×3", most first, at most six, each with its
// words where said has them: "failed_to_connect_to_backend×27 (the load
// balancer could not connect to the backend)".
func reasonList(m map[string]int64, said map[string]string) string {
	var parts []string
	for _, k := range words.ByCount(m) {
		p := k + "×" + strconv.FormatInt(m[k], 10)
		if w := said[k]; w != "" {
			p += " (" + w + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(words.CapItems(parts, 6), " ")
}

// reasonWords says the reasons of scopes in words, most first, each code
// kept: "The gateway's reasons: it could not connect to the backend
// (UF)."; "" when none has words.
func reasonWords(j *join.Join, scopes []join.Scope) string {
	all := map[string]int64{}
	for _, sc := range scopes {
		for r, n := range sc.Reasons {
			all[r] += n
		}
	}
	var said []string
	for _, r := range words.CapItems(words.ByCount(all), 6) {
		if w := j.ReasonWords[r]; w != "" {
			said = append(said, w+" ("+r+")")
		}
	}
	if len(said) == 0 {
		return ""
	}
	return "The gateway's reasons: " + strings.Join(said, "; ") + "."
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
