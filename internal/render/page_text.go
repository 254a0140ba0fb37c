package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// newTextWriter is a terminal writer for o: its width (DefaultWidth when
// unset, never below minWidth) and colour.
func newTextWriter(w io.Writer, o Options) *textWriter {
	t := &textWriter{errWriter: errWriter{w: w}, color: o.Color, width: max(o.Width, minWidth)}
	if o.Width <= 0 {
		t.width = DefaultWidth
	}
	return t
}

// writePageText writes p for a terminal: the lead first, each section
// under its heading in capitals (a table's title beside it), prose wrapped
// to the width, tables narrowed by their columns' Prio and Under.
func writePageText(w io.Writer, p *Page, o Options) error {
	t := newTextWriter(w, o)
	p = p.in(FormatText)
	code := ansiBold
	if p.Bad {
		code = AnsiRed + ansiBold
	}
	if p.Lead.Lead != "" || p.Lead.Text != "" {
		t.para(code, p.Lead.Lead, p.Lead.Text, 2)
	}
	for _, b := range p.Top {
		t.block(b, false)
	}
	under := t.underAll(p)
	for _, s := range p.Sections {
		t.section(s, under)
	}
	return t.err
}

// section writes a section under its heading. Titled tables that follow
// one another with the same columns share one layout (the same columns,
// as wide), each under the heading with its title beside it.
func (t *textWriter) section(s Section, under bool) {
	heading := strings.ToUpper(s.Heading)
	if s.Aside != "" {
		heading += "  " + s.Aside
	}
	blocks := s.Blocks
	headed := false
	aside := s.Aside // said once, under the first titled table's heading
	for i := 0; i < len(blocks); i++ {
		if tb, ok := blocks[i].(Table); ok && tb.Title != "" {
			title := strings.ToUpper(s.Heading) + "  " + tb.Title
			if len(tb.Rows) == 0 { // its heading and what it says, no layout
				t.heading(title, false)
				for _, line := range append([]string{cmp.Or(tb.Intro, aside)}, tb.Notes...) {
					if line != "" {
						t.para("", "   ", line, 6)
					}
				}
				headed, aside = true, ""
				continue
			}
			group := []Table{tb}
			for i+1 < len(blocks) {
				next, ok := blocks[i+1].(Table)
				if !ok || next.Title == "" || len(next.Rows) == 0 || !slices.Equal(tb.Cols, next.Cols) {
					break
				}
				group = append(group, next)
				i++
			}
			if aside != "" && group[0].Intro == "" {
				group[0].Intro = aside
			}
			t.pageTables(group, strings.ToUpper(s.Heading), under)
			headed, aside = true, ""
			continue
		}
		if c, ok := blocks[i].(Chart); ok && !headed { // its heading says its scale
			t.chart(strings.ToUpper(s.Heading), c)
			headed = true
			continue
		}
		if !headed {
			t.heading(heading, s.Bad)
			headed = true
		}
		t.block(blocks[i], under)
	}
	if !headed && heading != "" { // a heading that says it all: "CHANGED  none of 4 …"
		t.heading(heading, s.Bad)
	}
}

// block writes one block of a section (or of the page's top).
func (t *textWriter) block(b Block, under bool) {
	switch b := b.(type) {
	case Para:
		t.pagePara(b)
	case List:
		t.pageList(b)
	case Table:
		t.pageTables([]Table{b}, "", under)
	case Code:
		if b.Title != "" {
			t.para("", "", b.Title, 1)
		}
		for _, l := range codeLines(b.Text, b.Info, t.width-2) {
			t.printf("  %s\n", l)
		}
	case Parts:
		t.parts(b)
	case Chart:
		t.chart("", b)
	}
}

// toneCode is the terminal style of a lead of tone.
func toneCode(tone Tone) string {
	switch tone {
	case ToneStrong:
		return ansiBold
	case ToneBad:
		return AnsiRed + ansiBold
	}
	return ""
}

// parts joins the parts with " · ", breaking lines between parts only.
func (t *textWriter) parts(p Parts) {
	items := slices.Clone(p.Items)
	if len(items) > 0 && p.Lead != "" {
		items[0] = t.style(ansiBold, p.Lead) + " " + items[0]
	}
	line := ""
	flush := func() {
		if runes(stripANSI(line)) <= t.width {
			t.printf("%s\n", line)
		} else { // a part wider than the line itself is wrapped at its words
			t.para("", "", line, 2)
		}
		line = ""
	}
	for _, it := range items {
		switch {
		case line == "":
			line = it
		case runes(stripANSI(line))+3+runes(it) > t.width:
			flush()
			line = it
		default:
			line += " · " + it
		}
	}
	if line != "" {
		flush()
	}
}

// chart draws one sparkline per endpoint, under heading (none: no
// heading) with the chart's scale beside it: ▁ no failure … █ all failed.
func (t *textWriter) chart(heading string, c Chart) {
	tl := c.Timeline
	label := 0
	for _, s := range tl.Series {
		label = max(label, runes(s.Label))
	}
	width := max(t.width-label-7, 10)
	per := 1
	var rows []textRow
	for i, s := range tl.Series {
		if c.Multi && (i == 0 || tl.Series[i-1].Target != s.Target) {
			rows = append(rows, textRow{cells: []string{"", s.Target, ""}})
		}
		line, p := Sparkline(s.Requests, s.Failed, min(width, 60))
		per = p
		rows = append(rows, textRow{cells: []string{markOf(s.Failing), s.Label, "|" + line + "|"}, failing: s.Failing})
	}
	scale := fmt.Sprintf("failure ratio per %s from %s UTC", words.Num(tl.Step*float64(per))+"s", clock(tl.From.Time))
	if heading != "" {
		t.heading(heading+"  "+scale, false)
	} else {
		t.printf("  %s\n", scale)
	}
	t.printf("  ▁ none … █ all failed, blank: no request\n")
	t.table(make([]Col, 3), rows)
}

func (t *textWriter) pagePara(p Para) {
	if p.Title != "" {
		t.para(ansiBold, p.Title, "", 0)
	}
	if p.Code != "" {
		p.Text += " · " + p.Code
	}
	if p.Note {
		t.para("", " ·", p.Text, 3)
		return
	}
	if p.Lead != "" {
		t.para(toneCode(p.Tone), p.Lead, p.Text, p.Indent)
		return
	}
	pad := strings.Repeat(" ", p.Indent)
	for _, l := range wrapWords(p.Text, t.width-p.Indent, t.width-p.Indent) {
		t.printf("%s%s\n", pad, l)
	}
}

// pageList writes a list: leads in a column of their own, items marked ✗
// (and red) when one of them fails, else bulleted.
func (t *textWriter) pageList(l List) {
	lead, marks := 0, l.Marked
	for _, it := range l.Items {
		lead = max(lead, runes(it.Lead))
		marks = marks || it.Failing
	}
	for _, it := range l.Items {
		for _, sp := range it.Spans {
			it.Text += sp.Text
		}
		if it.Tail != "" {
			if runes(" "+failMark+" "+it.Text+" · "+it.Tail) <= t.width {
				it.Text += " · " + it.Tail
			} else {
				it.Subs = append([]string{it.Tail}, it.Subs...)
			}
		}
		switch {
		case lead > 0:
			t.para("", " "+it.Lead+strings.Repeat(" ", lead-runes(it.Lead)), it.Text, lead+2)
		case it.Failing:
			t.wrapped(AnsiRed, " "+failMark, it.Text, 4, true)
		case marks:
			t.para("", "  ", it.Text, 4)
		default:
			t.para("", " -", it.Text, 3)
		}
		for _, sub := range it.Subs {
			t.para("", "   ", sub, 6)
		}
	}
}

// textHeads are the terminal's columns of cols, heads in capitals, after
// a mark column (empty, so left out, when the table has no marks).
func textHeads(cols []Col) []Col {
	tc := make([]Col, 1, 1+len(cols))
	for _, c := range cols {
		c.Head = strings.ToUpper(cmp.Or(c.Short, c.Head))
		tc = append(tc, c)
	}
	return tc
}

// underAll says whether the page's tables put their Under columns under
// their rows: decided once for all of them, so that every table of a page
// shows its latencies alike.
func (t *textWriter) underAll(p *Page) bool {
	for _, s := range p.Sections {
		for _, b := range s.Blocks {
			tb, ok := b.(Table)
			if ok && slices.ContainsFunc(tb.Cols, func(c Col) bool { return c.Under }) && lineWidth(colWidths(textHeads(tb.Cols), tb.cells(1), nil), nil) > t.width {
				return true
			}
		}
	}
	return false
}

// spanRow stands for a line that spans a table ("… 12 more …").
var spanRow Row

// pageTables writes tables of the same columns in one layout, each titled
// one under heading and its title. With under, their Under columns go on
// a line of their own under each row ("p50 2.20→2.35ms  p99
// 2.45→3.45ms"), aligned with the label: they are never dropped for the
// width. A layout still too wide puts each label too long on a line of its
// own above its row, whole (cut in its middle, two pod names read alike).
// The notes of a table's rows, then its Notes, follow its rows.
func (t *textWriter) pageTables(group []Table, heading string, under bool) {
	// The tables of a group have the same columns: laid out once.
	cols := group[0].Cols
	tc := textHeads(cols)
	var rows [][]string
	var src []*Row
	marks := false
	count := make([]int, len(group)) // each table's rows
	for g := range group {
		tb := &group[g]
		rs := tb.cells(1)
		for i := range rs {
			src = append(src, &tb.Rows[i])
		}
		if n := len(rs) - tb.TextCap; tb.TextCap > 0 && n > 0 && len(tc) > 1 {
			more := make([]string, len(tc))
			more[1] = fmt.Sprintf("… %d more %s", n, tb.More)
			rs, src = append(rs[:tb.TextCap], more), append(src[:len(src)-n], &spanRow)
		}
		rows, count[g] = append(rows, rs...), len(rs)
		marks = marks || tb.Marks
	}
	labelFirst := len(cols) > 0 && cols[0].Label
	var subs []string // each row's line of Under cells
	if under && labelFirst {
		subs = underLines(cols, tc, rows)
	}
	own := t.ownLines(tc, rows, src, labelFirst)
	var out []textRow
	span := func(s string, fail bool) { // a line of s alone, where the labels are
		cells := make([]string, len(tc))
		cells[1] = s
		out = append(out, textRow{cells: cells, failing: fail})
	}
	r := 0
	for g, tb := range group {
		if count[g] == 0 {
			continue
		}
		if tb.Title != "" {
			out = append(out, textRow{title: heading + "  " + tb.Title, intro: tb.Intro})
		} else if tb.Intro != "" {
			t.para("", "  ", tb.Intro, 4)
		}
		notes := []textRow{}
		for end := r + count[g]; r < end; r++ {
			row, fail := rows[r], src[r].Failing
			if own[r] { // the label's line starts the row: its mark, then the label
				above := row[1]
				if marks {
					above = cmp.Or(row[0], " ") + "  " + above
					row[0] = " " // the mark's column stays, for the other rows
				}
				row[1] = ""
				span(above, fail)
			}
			out = append(out, textRow{cells: row, failing: fail})
			if subs != nil && subs[r] != "" {
				span("   "+subs[r], fail)
			}
			if src[r].Note != "" {
				notes = append(notes, textRow{note: src[r].Note})
			}
		}
		for _, n := range tb.Notes {
			notes = append(notes, textRow{note: n})
		}
		out = append(out, notes...)
	}
	t.table(tc, out)
}
