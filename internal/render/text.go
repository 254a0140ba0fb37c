package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

const (
	AnsiRed   = "\x1b[31m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
	failMark  = "✗"
)

// DefaultWidth is the text report's width when the output is not a terminal.
const DefaultWidth = 80

// minWidth is the narrowest layout the text report attempts.
const minWidth = 60

// writeText renders the report for a terminal of width columns: what ran,
// how each family and each endpoint fared, failing rows marked with ✗ (and
// red when color is set). Narrow layouts drop the least useful columns and
// wrap prose at word boundaries. With Options.Brief it writes one screen of
// it (see BriefView).
func writeText(w io.Writer, r *report.Report, o Options) error {
	tw := &textWriter{errWriter: errWriter{w: w}, color: o.Color, width: max(o.Width, minWidth)}
	if o.Width <= 0 {
		tw.width = DefaultWidth
	}
	v := NewView(r)
	if o.Brief {
		tw.brief(v)
		return tw.err
	}
	tw.header(v)
	tw.dns(v)
	tw.preflight(v)
	if v.NotProbed != "" { // nothing else was measured
		tw.gate(v)
		tw.verdict(v)
		return tw.err
	}
	tw.families(v)
	tw.endpoints(v)
	tw.section(vantagesSection(v), false)
	tw.who(v)
	tw.instances(v)
	tw.connections(v)
	tw.phases(v)
	tw.timeline(v)
	tw.samples(v)
	tw.gate(v)
	tw.verdict(v)
	return tw.err
}

// errWriter keeps the first write error; every later write is skipped, and
// the renderer returns the error at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// textWriter writes the terminal report.
type textWriter struct {
	errWriter
	color bool
	width int
}

// printf writes to the terminal: every control character but newlines
// and tabs, and every escape sequence but the colours this package writes
// (and those only when color is set), is written out as \xNN, so nothing
// printed can move the cursor, set the title, ring the bell or reach the
// clipboard — whatever a saved report or a server put in a string.
func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = io.WriteString(t.w, terminalSafe(fmt.Sprintf(format, args...), t.color))
	}
}

// sgrCodes are the escape sequences the text renderers write.
var sgrCodes = []string{AnsiRed, ansiBold, ansiReset}

// terminalSafe makes s safe to write to a terminal: words.SafeText over
// all of it but the colour codes of sgrCodes, kept when color is set.
func terminalSafe(s string, color bool) string {
	if !color || !strings.Contains(s, "\x1b") {
		return words.SafeText(s, true)
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			b.WriteString(words.SafeText(s, true))
			break
		}
		b.WriteString(words.SafeText(s[:i], true))
		s = s[i:]
		n := 1
		for _, code := range sgrCodes {
			if strings.HasPrefix(s, code) {
				n = len(code)
				break
			}
		}
		if n == 1 {
			b.WriteString(`\x1b`)
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

func (t *textWriter) style(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// heading prints a section title, cut to the width.
func (t *textWriter) heading(s string) {
	t.printf("\n%s\n", t.style(ansiBold, words.CutMiddle(s, t.width)))
}

// para prints prose wrapped to the width, the first line after lead (which
// is styled with code) and the rest indented by indent spaces.
func (t *textWriter) para(code, lead, text string, indent int) {
	t.wrapped(code, lead, text, indent, false)
}

// failing prints a failing item as para does, every line of it red.
func (t *textWriter) failing(lead, text string, indent int) {
	t.wrapped(AnsiRed, lead, text, indent, true)
}

func (t *textWriter) wrapped(code, lead, text string, indent int, whole bool) {
	first := t.width - runes(lead)
	if lead != "" {
		first--
	}
	lines := wrapWords(text, first, t.width-indent)
	for i, l := range lines {
		switch {
		case whole && i == 0 && lead == "":
			t.printf("%s\n", t.style(code, l))
		case whole && i == 0:
			t.printf("%s\n", t.style(code, lead+" "+l))
		case whole:
			t.printf("%s\n", t.style(code, strings.Repeat(" ", indent)+l))
		case i == 0 && lead != "":
			t.printf("%s %s\n", t.style(code, lead), l)
		case i == 0:
			t.printf("%s\n", l)
		default:
			t.printf("%s%s\n", strings.Repeat(" ", indent), l)
		}
	}
	if len(lines) == 0 && lead != "" {
		t.printf("%s\n", t.style(code, lead))
	}
}

// header says first what the run found, the verdict in one line (every
// suspect, and how many requests failed) and the release gate's outcome,
// as k6 puts its thresholds first; then what ran. The whole verdict, with
// its evidence, comes last.
func (t *textWriter) header(v *View) {
	if st := v.Verdict; st.Line != "" {
		t.para(verdictCode(st), "VERDICT "+strings.ToUpper(st.Status), st.Line, 2)
	}
	if g := v.Gate; g.Summary != "" {
		t.para(t.gateCode(g), "RELEASE GATE", g.Summary, 2)
	}
	run := v.Run
	parts := []string{
		t.style(ansiBold, "pinprobe") + " " + run.Version,
		run.Started + " – " + run.EndClock + " UTC (" + run.Took + ")",
		run.Planned + ", " + strings.TrimSuffix(run.Achieved, " req/s") + " achieved",
		// One part, so that a line never begins with "0 dropped".
		fmt.Sprintf("%d requests, %d dropped", run.Requests, run.Dropped),
	}
	if run.Abandoned > 0 {
		parts[len(parts)-1] += fmt.Sprintf(", %d abandoned", run.Abandoned)
	}
	if v.Vantage != "" {
		parts = append(parts, "from "+v.Vantage)
	}
	// Join the parts with " · ", breaking lines between parts only.
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case runes(stripANSI(line))+3+runes(p) > t.width:
			t.printf("%s\n", line)
			line = p
		default:
			line += " · " + p
		}
	}
	t.printf("%s\n", line)
	if run.Interrupted {
		t.para(AnsiRed+ansiBold, "INTERRUPTED", fmt.Sprintf("after %s: this report covers every request sent until then.", run.Seconds), 2)
	}
	for _, p := range run.Pauses {
		t.para(AnsiRed+ansiBold, "PAUSED", p+".", 2)
	}
	if run.Settled != "" {
		t.para(ansiBold, "STOPPED EARLY", run.Settled+".", 2)
	}
	if n := len(v.Inputs); n > 0 {
		files := make([]string, n)
		for i, in := range v.Inputs {
			files[i] = in.File
			if v.InputVantages && in.Vantage != "-" {
				files[i] += " from " + in.Vantage
			}
		}
		t.para(ansiBold, "MERGED", fmt.Sprintf("from %d report%s: %s", n, words.Plural(n), strings.Join(files, ", ")), 2)
	}
	for _, n := range v.Notes {
		t.para("", " ·", n, 3)
	}
}

func (t *textWriter) dns(v *View) { t.section(dnsSection(v), false) }

func (t *textWriter) preflight(v *View) { t.section(preflightSection(v), false) }

func markOf(failing bool) string {
	if failing {
		return failMark
	}
	return ""
}

func (t *textWriter) families(v *View) { t.section(familiesSection(v), false) }

func (t *textWriter) endpoints(v *View) { t.section(endpointsSection(v), false) }

// who says who answered the failures: "✗ 20 × 502 from Azure Application
// Gateway on ::1 ×20 (new connection 1, reused 19); Server: …".
func (t *textWriter) who(v *View) { t.section(whoSection(v), false) }

// instances shows the responses by instance header.
func (t *textWriter) instances(v *View) {
	if len(v.Groups) > 0 {
		t.section(instancesSection(v), false)
	}
}

func (t *textWriter) connections(v *View) {
	if len(v.Conns) > 0 {
		t.section(connectionsSection(v), false)
	}
}

func (t *textWriter) phases(v *View) { t.section(phasesSection(v), false) }

// compactPhase turns "0.23ms / 0.97ms" into "0.23/0.97ms" when the units agree.
func compactPhase(s string) string {
	a, b, ok := strings.Cut(s, " / ")
	if !ok {
		if strings.HasPrefix(s, "—") {
			return "-"
		}
		return s
	}
	for _, unit := range []string{"ms", "s"} {
		if strings.HasSuffix(a, unit) && strings.HasSuffix(b, unit) && !(unit == "s" && strings.HasSuffix(a, "ms") != strings.HasSuffix(b, "ms")) {
			return strings.TrimSuffix(a, unit) + "/" + b
		}
	}
	return a + "/" + b
}

// timeline draws one sparkline per endpoint: ▁ no failure … █ all failed.
func (t *textWriter) timeline(v *View) {
	tl := v.Timeline
	if len(tl.Series) == 0 {
		return
	}
	label := 0
	for _, s := range tl.Series {
		label = max(label, runes(s.Label))
	}
	width := max(t.width-label-7, 10)
	per := 1
	var rows [][]string
	var failing []bool
	for i, s := range tl.Series {
		if v.MultiURL && (i == 0 || tl.Series[i-1].Target != s.Target) {
			rows = append(rows, []string{"", s.Target, ""})
			failing = append(failing, false)
		}
		line, p := Sparkline(s.Requests, s.Failed, min(width, 60))
		per = p
		rows = append(rows, []string{markOf(s.Failing), s.Label, "|" + line + "|"})
		failing = append(failing, s.Failing)
	}
	t.heading(fmt.Sprintf("TIMELINE  failure ratio per %s from %s UTC", secs(tl.Step*float64(per)), tl.From.UTC().Format("15:04:05")))
	t.printf("  ▁ none … █ all failed, blank: no request\n")
	t.table(textTable{cols: []textCol{{}, {}, {}}, rows: rows, failing: failing, spans: v.MultiURL})
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + "s" }

func (t *textWriter) samples(v *View) { t.section(samplesSection(v), false) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// gate shows the release gate: its summary, then every check, those that
// did not pass first (marked ✗); a passing gate lists what it passed.
func (t *textWriter) gate(v *View) {
	g := v.Gate
	if g.Summary == "" {
		return
	}
	t.printf("\n")
	t.para(t.gateCode(g), "RELEASE GATE", g.Summary, 2)
	cols := []textCol{{}, {head: "CHECK"}, {head: "SCOPE"}, {head: "MEASURED", right: true}, {head: "SHOWN", right: true}, {head: "LIMIT", right: true}, {head: "RESULT"}}
	var rows [][]string
	var failing []bool
	scope := 0 // the widest scope that fits beside the other columns
	for _, c := range g.Checks {
		rows = append(rows, []string{markOf(!c.OK), c.Name, c.Where, c.Value, c.Bound, c.Limit, c.Result})
		failing = append(failing, !c.OK)
	}
	other := 1 + 2*(len(cols)-1)
	for i := range cols {
		if i == 2 {
			continue
		}
		w := runes(cols[i].head)
		for _, row := range rows {
			w = max(w, runes(row[i]))
		}
		other += w
	}
	scope = max(t.width-other, 12)
	for i, c := range g.Checks {
		if c.WhereURL != "" { // the address whole, the URL as short as fits
			rows[i][2] += " " + words.CutMiddle(c.WhereURL, max(scope-runes(c.Where)-1, 5))
		}
	}
	t.table(textTable{cols: cols, rows: rows, failing: failing})
	for _, p := range []string{g.Prove, g.Seen} {
		if p != "" {
			t.para("", " ·", p, 3)
		}
	}
}

// gateCode is the style of the gate's summary: red when it did not pass.
func (t *textWriter) gateCode(g GateView) string {
	if !g.Passed {
		return AnsiRed + ansiBold
	}
	return ansiBold
}

// verdictCode is the style of the verdict's label: red when it found
// failures.
func verdictCode(st VerdictView) string {
	if st.Tone == "bad" || st.Tone == "warn" {
		return AnsiRed + ansiBold
	}
	return ansiBold
}

func (t *textWriter) verdict(v *View) {
	st := v.Verdict
	t.printf("\n")
	t.para(verdictCode(st), "VERDICT "+strings.ToUpper(st.Status), st.Summary, 2)
	for _, n := range st.Notes {
		t.para("", " ·", n, 3)
	}
	if st.Level != "" {
		t.para("", " ·", st.Level+".", 3)
	}
}

// textCol is one column of a text table.
type textCol struct {
	head  string
	right bool
	// prio orders the columns a narrow layout drops: lowest first; 0 is
	// never dropped.
	prio int
	// dropZero drops the column when every cell is "0".
	dropZero bool
	// list marks a column of space-separated items that may be cut short
	// ("200×40 502×20 +2") when nothing else can go.
	list bool
}

// textTable is rows in columns; failing rows are red.
type textTable struct {
	cols    []textCol
	rows    [][]string
	failing []bool
	// spans marks rows whose only cell is the second one (a sub-heading,
	// such as the URL of the rows below): it takes the whole line.
	spans bool
	// sections split the rows into tables of one layout, each under its
	// heading and the column heads; none: one table without a heading.
	sections []tableSection
	// notes are lines of prose after the sections' rows, each after the
	// row it follows and before the next section.
	notes []tableNote
}

// tableSection starts a table, at row at, with a heading and the line
// under it (intro).
type tableSection struct {
	at    int
	title string
	intro string
}

// tableNote is a line of prose under a table, after its first after rows.
type tableNote struct {
	after int
	text  string
}

// listFloor is how narrow a list column gets before a narrow layout drops
// columns of priority 5 and more (the latencies).
const listFloor = 24

// spanning says whether row is a line that spans the table: its only cell
// the second one (a sub-heading, the latencies under a row).
func (tb *textTable) spanning(row []string) bool {
	if !tb.spans || row[1] == "" {
		return false
	}
	for i, c := range row {
		if i != 1 && c != "" {
			return false
		}
	}
	return true
}

// layout decides which columns a table keeps and how wide each is, to fit
// the width: empty (and all-zero DropZero) columns of a priority go, then
// columns by priority below 5, then list columns are cut (their cells cut
// in place) to listFloor, then any column by priority, then lists to 8.
func (t *textWriter) layout(tb *textTable) (keep []bool, w []int) {
	keep = make([]bool, len(tb.cols))
	for i, c := range tb.cols {
		keep[i] = true
		empty, zero := true, true
		for _, row := range tb.rows {
			empty = empty && (row[i] == "" || row[i] == "-")
			zero = zero && row[i] == "0"
		}
		if c.prio > 0 && (empty || c.dropZero && zero) {
			keep[i] = false
		}
	}
	widths := func() []int {
		w := make([]int, len(tb.cols))
		for i, c := range tb.cols {
			w[i] = runes(c.head)
			for _, row := range tb.rows {
				if !tb.spanning(row) {
					w[i] = max(w[i], runes(row[i]))
				}
			}
		}
		return w
	}
	total := func(w []int) int {
		n, cols := 1, 0
		for i := range w {
			if keep[i] && w[i] > 0 {
				n += w[i]
				cols++
			}
		}
		return n + 2*max(cols-1, 0)
	}
	// cut shortens the list columns by over runes, to no less than floor.
	cut := func(w []int, over, floor int) []int {
		for i, c := range tb.cols {
			if !keep[i] || !c.list || over <= 0 {
				continue
			}
			limit := max(w[i]-over, runes(c.head), floor)
			for _, row := range tb.rows {
				if !tb.spanning(row) {
					row[i] = cutList(row[i], limit)
				}
			}
			w = widths()
			over = total(w) - t.width
		}
		return w
	}
	dropBelow := func(w []int, prio int) {
		for total(w) > t.width {
			drop := -1
			for i, c := range tb.cols {
				if keep[i] && c.prio > 0 && c.prio < prio && (drop < 0 || c.prio < tb.cols[drop].prio) {
					drop = i
				}
			}
			if drop < 0 {
				return
			}
			keep[drop] = false
		}
	}
	w = widths()
	dropBelow(w, 5)
	w = cut(w, total(w)-t.width, listFloor)
	dropBelow(w, 1<<30)
	w = cut(w, total(w)-t.width, 8)
	return keep, w
}

// table prints rows in aligned columns, two spaces apart, indented by one,
// dropping columns by priority until the table fits the width (layout).
func (t *textWriter) table(tb textTable) {
	keep, w := t.layout(&tb)
	line := func(row []string) string {
		var b strings.Builder
		b.WriteString(" ")
		first := true
		for i, c := range row {
			if !keep[i] || w[i] == 0 {
				continue
			}
			if !first {
				b.WriteString("  ")
			}
			first = false
			pad := strings.Repeat(" ", w[i]-runes(c))
			if tb.cols[i].right {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	head := make([]string, len(tb.cols))
	hasHead := false
	for i, c := range tb.cols {
		head[i] = c.head
		hasHead = hasHead || c.head != ""
	}
	next := 0 // the next section
	notes := tb.notes
	flush := func(upTo int) { // the notes of the rows before upTo
		for len(notes) > 0 && notes[0].after <= upTo {
			t.para("", "   ", notes[0].text, 6)
			notes = notes[1:]
		}
	}
	if hasHead && len(tb.sections) == 0 {
		t.printf("%s\n", t.style(ansiBold, line(head)))
	}
	for i, row := range tb.rows {
		for next < len(tb.sections) && tb.sections[next].at == i {
			flush(i)
			t.heading(tb.sections[next].title)
			if intro := tb.sections[next].intro; intro != "" {
				t.para("", "  ", intro, 4)
			}
			if hasHead {
				t.printf("%s\n", t.style(ansiBold, line(head)))
			}
			next++
		}
		var s string
		if tb.spanning(row) {
			s = " " + words.CutMiddle(row[1], t.width-1)
		} else {
			s = line(row)
		}
		if i < len(tb.failing) && tb.failing[i] {
			s = t.style(AnsiRed, s)
		}
		t.printf("%s\n", s)
	}
	flush(len(tb.rows))
}

// cutList shortens a space-separated list to at most n runes by dropping
// items from the end and saying how many: "200×40 502×20 +2".
func cutList(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	items := strings.Fields(s)
	// The most items that fit with their " +N", in one pass (a list of
	// thousands was joined anew for each count).
	best, w := 0, -1
	for k := 1; k < len(items) && w <= n; k++ {
		w += 1 + runes(items[k-1])
		if w+2+len(strconv.Itoa(len(items)-k)) <= n {
			best = k
		}
	}
	if best == 0 {
		return items[0]
	}
	return strings.Join(items[:best], " ") + " +" + strconv.Itoa(len(items)-best)
}

// wrapWords breaks s at spaces into lines of at most first runes (the
// first line) and rest runes (the others). A word longer than a line stands
// alone on its line, whole: numbers and addresses are never split.
func wrapWords(s string, first, rest int) []string {
	var lines []string
	var cur strings.Builder
	limit := first
	for _, word := range strings.Fields(s) {
		switch {
		case cur.Len() == 0:
			cur.WriteString(word)
		case runes(cur.String())+1+runes(word) > limit:
			lines = append(lines, cur.String())
			cur.Reset()
			cur.WriteString(word)
			limit = rest
		default:
			cur.WriteString(" " + word)
		}
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// stripANSI removes the colour codes this package writes.
func stripANSI(s string) string {
	return strings.NewReplacer(AnsiRed, "", ansiBold, "", ansiReset, "").Replace(s)
}
