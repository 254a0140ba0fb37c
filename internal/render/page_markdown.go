package render

import (
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// writePageMarkdown writes p as GitHub-flavoured Markdown: the title, the
// lead quoted (its status in bold), each section under "## ", a table's title under
// "### ". Every string is escaped here (mdText, codeSpan), none before, and
// no raw HTML is written: a system that strips HTML shows it as written.
func writePageMarkdown(w io.Writer, p *Page) error {
	m := &mdWriter{errWriter: errWriter{w: w}}
	p = p.in(FormatMarkdown)
	m.printf("# %s\n\n", mdText(p.Title))
	quoted := false
	if p.Lead.Lead != "" || p.Lead.Text != "" {
		m.printf("> %s\n", mdPara(p.Lead))
		quoted = true
	}
	for _, b := range p.Top {
		if b, ok := b.(Para); ok {
			if quoted {
				m.printf(">\n")
			}
			m.printf("> %s\n", mdPara(b))
			quoted = true
		}
	}
	for _, s := range p.Sections {
		m.section(s)
	}
	if p.Footer != "" {
		m.printf("\n*%s*\n", mdText(p.Footer))
	}
	return m.err
}

// mdPara is a paragraph's Markdown: its lead in bold, then its text.
func mdPara(p Para) string {
	s := mdText(p.Text)
	if p.Code != "" {
		s += " · " + codeSpan(p.Code)
	}
	switch {
	case p.Lead == "":
		return s
	case s == "":
		return "**" + mdText(p.Lead) + "**"
	}
	return "**" + mdText(p.Lead) + "** " + s
}

// section writes a section under "## ", each of its tables' titles under
// "### ".
func (m *mdWriter) section(s Section) {
	if s.Heading != "" {
		m.printf("\n## %s\n", mdText(s.Heading))
	}
	for _, b := range s.Blocks {
		switch b := b.(type) {
		case Para:
			if b.Title != "" {
				m.printf("\n### %s\n", mdText(b.Title))
			}
			m.printf("\n%s\n", mdPara(b))
		case List:
			m.pageList(b)
		case Table:
			m.pageTable(&b)
		case Code:
			if b.Title != "" {
				m.printf("\n### %s\n", mdText(b.Title))
			}
			m.printf("\n")
			m.code(b.Info, b.Text)
		case Chart:
			m.chart(b)
		}
	}
}

func (m *mdWriter) pageList(l List) {
	m.printf("\n")
	for _, it := range l.Items {
		line := mdText(it.Text)
		if it.Spans != nil {
			line = mdSpans(it.Spans)
		}
		for _, sub := range append([]string{it.Tail}, it.Subs...) {
			if sub != "" {
				line += " · " + mdText(sub)
			}
		}
		if it.Lead != "" {
			line = "**" + mdText(it.Lead) + ":** " + line
		}
		if it.Failing {
			line = failMark + " " + line
		}
		m.printf("- %s\n", line)
	}
}

// pageTable writes a table: a first column of ✗ when it has marks, a
// failing row's label in bold.
func (m *mdWriter) pageTable(tb *Table) {
	if tb.Title != "" {
		m.printf("\n### %s\n", mdText(tb.Title))
	}
	if tb.Intro != "" {
		m.printf("\n%s\n", mdText(tb.Intro))
	}
	cols := tb.Cols
	if tb.Marks {
		cols = append([]Col{{}}, cols...)
	}
	lead := len(cols) - len(tb.Cols)
	rows := append([][]string{make([]string, len(cols))}, tb.cells(lead)...) // the heads first
	for j, c := range cols {
		rows[0][j] = mdText(c.Head)
	}
	for r, row := range rows[1:] {
		src := &tb.Rows[r]
		for j, cell := range row[lead:] {
			switch {
			case src.Code && j > 0:
				cell = codeSpan(cell)
			case tb.Cols[j].Label && src.Failing && cell != "":
				cell = "**" + mdCell(cell) + "**"
			default:
				cell = mdCell(cell)
			}
			row[lead+j] = cell
		}
	}
	m.printf("\n")
	m.table(cols, rows)
	if len(tb.Notes) > 0 {
		notes := make([]string, len(tb.Notes))
		for i, n := range tb.Notes {
			notes[i] = mdText(n)
		}
		m.printf("\n%s\n", strings.Join(notes, " "))
	}
}

// mdWriter writes the Markdown report.
type mdWriter struct {
	errWriter
}

// chart draws the timeline as sparklines of 60 characters in a code
// block, each line with its endpoint's failures.
func (m *mdWriter) chart(c Chart) {
	tl := c.Timeline
	const width = 60
	per := 1
	lines := make([]string, len(tl.Series))
	for i, s := range tl.Series {
		lines[i], per = Sparkline(s.Requests, s.Failed, width)
	}
	step := tl.Step * float64(per)
	m.printf("\nOne character per %s from %s to %s: its height is the share of that interval's requests that failed, from ▁ (none) through ▄ (about half) to █ (all); a blank means no request was sent then.\n\n",
		words.Num(step)+" s", utc(tl.From), utc(tl.To))
	label := 0
	for _, s := range tl.Series {
		label = max(label, runes(s.Label))
	}
	var b strings.Builder
	for i, s := range tl.Series {
		if c.Multi && (i == 0 || tl.Series[i-1].Target != s.Target) {
			b.WriteString(s.Target + "\n")
		}
		fmt.Fprintf(&b, "  %-*s |%s| %d of %d failed\n", label, s.Label, lines[i], s.TotalFail, s.TotalN)
	}
	m.code("text", b.String())
}

// table writes a Markdown table, its heads the first of rows, whose
// columns line up in the raw text too, so it reads well where Markdown is
// not rendered. Cells are Markdown already; every | in them is escaped
// here.
func (m *mdWriter) table(cols []Col, rows [][]string) {
	widths := make([]int, len(cols))
	for _, row := range rows {
		for i, c := range row {
			row[i] = cellEscape(c)
			widths[i] = max(widths[i], runes(row[i]), 3)
		}
	}
	// A delimiter cell spans its column's padding too; the colon of a
	// right-aligned column must end it.
	sep := make([]string, len(cols))
	for i, w := range widths {
		sep[i] = strings.Repeat("-", w+2)
		if cols[i].Right {
			sep[i] = sep[i][1:] + ":"
		}
	}
	for r, row := range rows {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-runes(c))
			if cols[i].Right {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		m.printf("%s\n", b.String())
		if r == 0 {
			m.printf("|%s|\n", strings.Join(sep, "|"))
		}
	}
}

// cellNewlines puts a cell on one line (made once: a table of thousands of
// cells made one each).
var cellNewlines = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// cellEscape makes s safe inside a table cell: one line, and every | not
// already escaped gets its backslash (GFM splits cells on it even inside code).
func cellEscape(s string) string {
	s = cellNewlines.Replace(s)
	var b strings.Builder
	backslashes := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '|' && backslashes%2 == 0 {
			b.WriteByte('\\')
		}
		if s[i] == '\\' {
			backslashes++
		} else {
			backslashes = 0
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mdText makes text from outside (a header, a host, an error) safe to place
// in running Markdown or a table cell: one line, no control characters, and
// a backslash before every character that could start markup. < and & are
// escaped only where they could start an HTML tag or entity, so "p<1e-9"
// stays readable in the raw text.
func mdText(s string) string { return mdEscape(s, false) }

// mdCell is mdText for a table cell, where a bracketed IPv6 address
// ("[2001:db8::1]:443") stays as it is: no link definition can stand in a
// table row, and every bracket but these is escaped everywhere, so no
// reference can find one; an inline link or image needs "(" or "[" after
// it, and then it is escaped too. Running text escapes all brackets: a
// hostile "- [::1]: https://…" would be a definition inside a list item.
// A cell with nothing to escape (a number) is returned as it is.
func mdCell(s string) string {
	if plainCell(s) {
		return s
	}
	return mdEscape(s, true)
}

// plainCell says whether s is printable ASCII with nothing mdText would
// change: no markup character, no run of spaces, none at either end.
func plainCell(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c >= 0x7f, strings.IndexByte("\\`*[]|~_<&", c) >= 0,
			c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' '):
			return false
		}
	}
	return true
}

// mdEscape is mdText; inCell keeps bracketed IPv6 addresses (see mdCell).
func mdEscape(s string, inCell bool) string {
	s = words.SafeText(strings.Join(strings.Fields(s), " "), false)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '[' && inCell {
			if j := strings.IndexByte(s[i:], ']'); j > 0 {
				next := byte(0)
				if i+j+1 < len(s) {
					next = s[i+j+1]
				}
				if a, err := netip.ParseAddr(s[i+1 : i+j]); err == nil && a.Is6() && a.Zone() == "" && next != '(' && next != '[' {
					b.WriteString(s[i : i+j+1])
					i += j
					continue
				}
			}
		}
		prev, next := byte(0), byte(0)
		if i > 0 {
			prev = s[i-1]
		}
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case strings.IndexByte("\\`*[]|~", c) >= 0,
			// An underscore inside a word never starts emphasis in GFM:
			// connect_refused stays as it is.
			c == '_' && !(words.IsASCIIAlnum(prev) && words.IsASCIIAlnum(next)),
			c == '<' && (words.IsASCIILetter(next) || strings.IndexByte("/!?", next) >= 0),
			c == '&' && (words.IsASCIILetter(next) || next == '#'):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mdAddr is mdText for what should be an address ("::1", "[::1]:443"): as
// it is when it is one, without a zone (which may hold any text), escaped
// otherwise, so the raw text keeps its brackets where it can.
func mdAddr(s string) string {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return s
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return s
	}
	return mdText(s)
}

var backtickRun = regexp.MustCompile("`+")

// fenceFor is a run of backticks, at least least long, longer than any in s.
func fenceFor(s string, least int) string {
	for _, run := range backtickRun.FindAllString(s, -1) {
		least = max(least, len(run)+1)
	}
	return strings.Repeat("`", least)
}

// code writes a fenced code block whose fence is longer than any run of
// backticks in text, so nothing inside can close it.
func (m *mdWriter) code(info, text string) {
	text = words.SafeText(text, true)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	fence := fenceFor(text, 3)
	m.printf("%s%s\n%s%s\n", fence, info, text, fence)
}

// codeSpan writes s as inline code, with a backtick fence longer than any
// run of backticks in it.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(words.SafeText(s, false)), " ")
	fence := fenceFor(s, 1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdSpans writes spans as Markdown: code as code spans, text from outside
// escaped.
func mdSpans(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch {
		case s.Code:
			b.WriteString(codeSpan(s.Text))
		case s.Outside:
			// Lists of addresses keep their brackets (see mdAddr).
			items := strings.Split(s.Text, ", ")
			for i, it := range items {
				items[i] = mdAddr(it)
			}
			b.WriteString(strings.Join(items, ", "))
		default:
			b.WriteString(s.Text)
		}
	}
	return b.String()
}
