package render

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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

// sgr matches the colour codes this package writes.
var sgr = regexp.MustCompile(regexp.QuoteMeta(AnsiRed) + "|" + regexp.QuoteMeta(ansiBold) + "|" + regexp.QuoteMeta(ansiReset))

// terminalSafe makes s safe to write to a terminal: words.SafeText over
// all of it but the colour codes (sgr), kept when color is set.
func terminalSafe(s string, color bool) string {
	if !color || !strings.Contains(s, "\x1b") {
		return words.SafeText(s, true)
	}
	var b strings.Builder
	last := 0
	for _, m := range sgr.FindAllStringIndex(s, -1) {
		b.WriteString(words.SafeText(s[last:m[0]], true) + s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(words.SafeText(s[last:], true))
	return b.String()
}

func (t *textWriter) style(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// heading prints a heading cut to the width, red when bad; none: a blank
// line.
func (t *textWriter) heading(s string, bad bool) {
	code := ansiBold
	if bad {
		code = AnsiRed + ansiBold
	}
	if s != "" {
		s = t.style(code, words.CutMiddle(s, t.width)) + "\n"
	}
	t.printf("\n%s", s)
}

// para prints prose wrapped to the width, the first line after lead (which
// is styled with code) and the rest indented by indent spaces.
func (t *textWriter) para(code, lead, text string, indent int) {
	t.wrapped(code, lead, text, indent, false)
}

// wrapped is para, every line styled when whole (a failing item, red).
func (t *textWriter) wrapped(code, lead, text string, indent int, whole bool) {
	first := t.width - runes(lead)
	if lead != "" {
		first--
	}
	lines := wrapWords(text, first, t.width-indent)
	for i, l := range lines {
		switch {
		case i > 0:
			l = strings.Repeat(" ", indent) + l
		case lead != "" && whole:
			l = lead + " " + l
		case lead != "":
			l = t.style(code, lead) + " " + l
		}
		if whole {
			l = t.style(code, l)
		}
		t.printf("%s\n", l)
	}
	if len(lines) == 0 && lead != "" {
		t.printf("%s\n", t.style(code, lead))
	}
}

func markOf(failing bool) string {
	if failing {
		return failMark
	}
	return ""
}

// textRow is a row of a terminal's table (cells, red when failing), or
// a line between its rows: a note, or the title of a table laid out as
// the one before it, with the line under it (intro) and the heads again.
type textRow struct {
	cells              []string
	failing            bool
	title, intro, note string
}

// lineWidth is how wide a line of columns w wide is, laid out as table
// does: those kept (all when keep is nil) and not empty, two apart,
// indented by one.
func lineWidth(w []int, keep []bool) int {
	n, cols := 1, 0
	for i := range w {
		if (keep == nil || keep[i]) && w[i] > 0 {
			n += w[i]
			cols++
		}
	}
	return n + 2*max(cols-1, 0)
}

// colWidths is how wide each column of rows in cols is, its head
// included, leaving out the rows skip says (nil: none).
func colWidths(cols []Col, rows [][]string, skip func(r int) bool) []int {
	w := make([]int, len(cols))
	for i, c := range cols {
		w[i] = runes(c.Head)
		for r, row := range rows {
			if skip == nil || !skip(r) {
				w[i] = max(w[i], runes(row[i]))
			}
		}
	}
	return w
}

// listFloor is how narrow a list column gets before a narrow layout drops
// columns of priority 5 and more (the latencies).
const listFloor = 24

// spanning says whether row is a line that spans the table: its only cell
// the second one (a sub-heading, the latencies under a row).
func spanning(row []string) bool {
	if row[1] == "" {
		return false
	}
	for i, c := range row {
		if i != 1 && c != "" {
			return false
		}
	}
	return true
}

// layout decides which columns of a table it keeps and how wide each is,
// to fit the width: empty (and all-zero DropZero) columns of a priority
// go, then columns by priority below 5, then list columns are cut (their
// cells cut in place) to listFloor, then any column by priority, then
// lists to 8. Of a Col it reads Head, Right, Prio, DropZero, List and Fit.
func (t *textWriter) layout(cols []Col, rows [][]string) (keep []bool, w []int) {
	keep = make([]bool, len(cols))
	for i, c := range cols {
		keep[i] = true
		empty, zero := true, true
		for _, row := range rows {
			empty = empty && (row[i] == "" || row[i] == "-")
			zero = zero && row[i] == "0"
		}
		if c.Prio > 0 && (empty || c.DropZero && zero) {
			keep[i] = false
		}
	}
	rows = slices.DeleteFunc(slices.Clone(rows), spanning) // the lines spanning the table take no column
	widths := func() []int { return colWidths(cols, rows, nil) }
	total := func(w []int) int { return lineWidth(w, keep) }
	// cut shortens the list columns by over runes, to no less than floor.
	cut := func(w []int, over, floor int) []int {
		for i, c := range cols {
			if !keep[i] || !c.List || over <= 0 {
				continue
			}
			limit := max(w[i]-over, runes(c.Head), floor)
			for _, row := range rows {
				row[i] = cutList(row[i], limit)
			}
			w = widths()
			over = total(w) - t.width
		}
		return w
	}
	dropBelow := func(w []int, prio int) {
		for total(w) > t.width {
			drop := -1
			for i, c := range cols {
				if keep[i] && c.Prio > 0 && c.Prio < prio && (drop < 0 || c.Prio < cols[drop].Prio) {
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
	for i, c := range cols {
		if !c.Fit || !keep[i] {
			continue
		}
		room := max(t.width-(total(w)-w[i]), 12)
		for _, row := range rows {
			if first, rest, ok := strings.Cut(row[i], " "); ok && runes(row[i]) > room {
				row[i] = first + " " + words.CutMiddle(rest, max(room-runes(first)-1, 5))
			}
		}
		w = widths()
	}
	dropBelow(w, 5)
	w = cut(w, total(w)-t.width, listFloor)
	dropBelow(w, 1<<30)
	w = cut(w, total(w)-t.width, 8)
	return keep, w
}

// underLines blanks the Under columns of tc and of every row (in place:
// a column of no width is not shown), and returns each row's line of
// them: "p50 2.20→2.35ms  p99 2.45→3.45ms", or "" when it has none but "-".
func underLines(cols []Col, tc []Col, rows [][]string) []string {
	subs := make([]string, len(rows))
	for r, row := range rows {
		var parts []string
		shown := false
		for i, c := range cols {
			if cell := row[i+1]; c.Under {
				parts = append(parts, strings.ToLower(c.Head)+" "+cell)
				shown = shown || cell != "" && cell != "-"
				row[i+1] = ""
			}
		}
		if shown {
			subs[r] = strings.Join(parts, "  ")
		}
	}
	for i, c := range cols {
		if c.Under {
			tc[i+1].Head = ""
		}
	}
	return subs
}

// ownLines says which rows put their label on a line of their own: when
// even the columns a terminal never drops do not fit the width, those
// whose label is too long.
func (t *textWriter) ownLines(tc []Col, rows [][]string, src []*Row, labelFirst bool) []bool {
	own := make([]bool, len(rows))
	if !labelFirst {
		return own
	}
	// A spanning line ("… 12 more") takes the whole width: not measured.
	spans := func(r int) bool { return src[r] == &spanRow }
	// The width of the columns never dropped, list columns cut to their
	// floor; the others are 0, so not counted.
	w := colWidths(tc, rows, spans)
	label := w[1]
	for i, c := range tc {
		switch {
		case c.Prio != 0:
			w[i] = 0
		case c.List:
			w[i] = min(w[i], max(runes(c.Head), 8))
		}
	}
	if over := lineWidth(w, nil) - t.width; over > 0 {
		for i, row := range rows {
			own[i] = !spans(i) && runes(row[1]) > label-over
		}
	}
	return own
}

// table prints rows in aligned columns, two spaces apart, indented by one,
// dropping columns by priority until the table fits the width (layout);
// a title or a note between them is a line of its own.
func (t *textWriter) table(cols []Col, rows []textRow) {
	var cells [][]string
	for _, r := range rows {
		if r.cells != nil {
			cells = append(cells, r.cells)
		}
	}
	keep, w := t.layout(cols, cells)
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
			if cols[i].Right {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Head
	}
	heads := func() { // none when no column has a head
		if strings.Join(head, "") != "" {
			t.printf("%s\n", t.style(ansiBold, line(head)))
		}
	}
	if len(rows) == 0 || rows[0].title == "" {
		heads()
	}
	for _, r := range rows {
		switch {
		case r.title != "":
			t.heading(r.title, false)
			if r.intro != "" {
				t.para("", "  ", r.intro, 4)
			}
			heads()
		case r.cells == nil:
			t.para("", "   ", r.note, 6)
		default:
			s := " " + words.CutMiddle(r.cells[1], t.width-1)
			if !spanning(r.cells) {
				s = line(r.cells)
			}
			if r.failing {
				s = t.style(AnsiRed, s)
			}
			t.printf("%s\n", s)
		}
	}
}

// cutList shortens a space-separated list to at most n runes by dropping
// items from the end and saying how many: "200×40 502×20 +2".
func cutList(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	items := strings.Fields(s)
	// The most items that fit with their " +N", in one pass: a list may
	// hold thousands.
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
func stripANSI(s string) string { return sgr.ReplaceAllString(s, "") }

// codeLines breaks each line of a query longer than width at a space
// outside quotes: a KQL or SQL line goes on indented, a shell line after
// a backslash. A trailing comment ("// …" in KQL, "-- …" in SQL) moves
// to lines of its own above its code, each with the comment's mark (its
// "this line" becoming "the line below"), as does a shell comment ("# …").
// A line that cannot be broken stays whole. A list of numbers (client
// ports) that goes on over several lines is filled to the width again, a
// line of it broken as the rest are, so its lines are full.
func codeLines(text, lang string, width int) []string {
	mark := map[string]string{"kusto": "//", "sql": "--", "sh": "#"}[lang]
	var out []string
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if n := len(lines); n > 0 && lang != "sh" && strings.HasSuffix(lines[n-1], ",") && numberList(line) {
			lines[n-1] += " " + strings.TrimSpace(line)
			continue
		}
		lines = append(lines, line)
	}
	comment := func(indent, c string) {
		for _, l := range wrapWords(strings.TrimSpace(strings.TrimPrefix(c, mark)), width-runes(indent+mark)-1, width-runes(indent+mark)-1) {
			out = append(out, indent+mark+" "+l)
		}
	}
	for _, line := range lines {
		if runes(line) <= width {
			out = append(out, line)
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		if mark != "" && strings.HasPrefix(strings.TrimSpace(line), mark) {
			comment(indent, strings.TrimSpace(line))
			continue
		}
		if i := strings.Index(line, "  "+mark+" "); mark != "" && lang != "sh" && i > 0 && !inQuotes(line[:i]) {
			// Above its code, "this line" would be the comment's own.
			comment(indent, strings.Replace(line[i+2:], "this line", "the line below", 1))
			line = strings.TrimRight(line[:i], " ")
		}
		cont := indent + "    "
		suffix := ""
		if lang == "sh" {
			suffix = " \\"
		}
		for runes(line) > width {
			cut := breakAt(line, width-runes(suffix), runes(cont))
			if cut < 0 {
				break
			}
			out = append(out, line[:cut]+suffix)
			line = cont + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return out
}

// numberList reports whether line holds only numbers, commas and spaces,
// and perhaps the parenthesis that closes them: the rest of a list.
func numberList(line string) bool {
	s := strings.TrimSpace(line)
	return s != "" && strings.Trim(s, "0123456789, )") == "" && strings.ContainsAny(s, "0123456789")
}

// breakAt is the byte index of the last space outside quotes in line at
// or before rune n, past rune min; -1 when there is none.
func breakAt(line string, n, min int) int {
	best := -1
	var quote rune
	i := 0
	for at, r := range line {
		if i > n {
			break
		}
		if quote == 0 && r == ' ' && i > min {
			best = at
		}
		quote = quoted(quote, r)
		i++
	}
	return best
}

// inQuotes says whether s ends inside a quoted string.
func inQuotes(s string) bool {
	var quote rune
	for _, r := range s {
		quote = quoted(quote, r)
	}
	return quote != 0
}

// quoted is the quote open after r, when quote was open before it (0:
// none): a quote mark opens one, its own mark closes it.
func quoted(quote, r rune) rune {
	switch {
	case quote != 0 && r == quote:
		return 0
	case quote == 0 && (r == '"' || r == '\''):
		return r
	}
	return quote
}
