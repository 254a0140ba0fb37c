package render

import (
	"cmp"
	"io"
	"slices"
	"strings"
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
	code := ansiBold
	if p.Bad {
		code = AnsiRed + ansiBold
	}
	t.para(code, p.Lead.Lead, p.Lead.Text, 2)
	under := t.underAll(p)
	for _, s := range p.Sections {
		heading := strings.ToUpper(s.Heading)
		if s.Aside != "" {
			heading += "  " + s.Aside
		}
		headed := false
		for _, b := range s.Blocks {
			if !shows(b.only(), FormatText) {
				continue
			}
			if tb, ok := b.(Table); ok && tb.Title != "" {
				t.heading(strings.ToUpper(s.Heading) + "  " + tb.Title)
				headed = true
			}
			if !headed {
				if heading == "" {
					t.printf("\n")
				} else {
					t.heading(heading)
				}
				headed = true
			}
			switch b := b.(type) {
			case Para:
				t.pagePara(b)
			case List:
				t.pageList(b)
			case Table:
				t.pageTable(&b, under)
			}
		}
		if !headed && heading != "" { // a heading that says it all: "CHANGED  none of 4 …"
			t.heading(heading)
		}
	}
	return t.err
}

func (t *textWriter) pagePara(p Para) {
	if p.Lead != "" {
		t.para("", p.Lead, p.Text, p.Indent)
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
	lead, marks := 0, false
	for _, it := range l.Items {
		lead = max(lead, runes(it.Lead))
		marks = marks || it.Failing
	}
	for _, it := range l.Items {
		switch {
		case lead > 0:
			t.para("", " "+it.Lead+strings.Repeat(" ", lead-runes(it.Lead)), it.Text, lead+2)
		case it.Failing:
			t.failing(" "+failMark, it.Text, 4)
		case marks:
			t.para("", "  ", it.Text, 4)
		default:
			t.para("", " -", it.Text, 3)
		}
	}
}

// textCols is a table's columns as the terminal shows them: a mark
// column first (empty, so left out, when the table has no marks), heads in
// capitals; and each row's cells.
func (t *textWriter) textCols(tb *Table) ([]textCol, []Col, [][]string) {
	cols, rows := tb.view(FormatText)
	tc := []textCol{{}}
	for _, c := range cols {
		tc = append(tc, textCol{head: strings.ToUpper(c.Head), right: c.Right, prio: c.Prio, list: c.List})
	}
	for i := range rows {
		mark := ""
		if tb.Marks {
			mark = markOf(tb.Rows[i].Failing)
		}
		rows[i] = append([]string{mark}, rows[i]...)
	}
	return tc, cols, rows
}

// underAll says whether the page's tables put their Under columns under
// their rows: decided once for all of them, so that every table of a page
// shows its latencies alike.
func (t *textWriter) underAll(p *Page) bool {
	for _, s := range p.Sections {
		for _, b := range s.Blocks {
			tb, ok := b.(Table)
			if !ok || !shows(tb.Only, FormatText) {
				continue
			}
			tc, cols, rows := t.textCols(&tb)
			if slices.ContainsFunc(cols, func(c Col) bool { return c.Under }) && tableWidth(tc, rows) > t.width {
				return true
			}
		}
	}
	return false
}

// pageTable writes a table. With under, its Under columns go on a line of
// their own under each row ("p50 2.20→2.35ms  p99 2.45→3.45ms"), aligned
// with the label: they are never dropped for the width. A table still too
// wide puts each label too long on a line of its own above its row, whole
// (cut in its middle, two pod names read alike).
func (t *textWriter) pageTable(tb *Table, under bool) {
	if tb.Intro != "" {
		t.para("", "  ", tb.Intro, 4)
	}
	tc, cols, rows := t.textCols(tb)
	labelFirst := len(cols) > 0 && cols[0].Label
	var subs []string // each row's line of Under cells
	if under && labelFirst {
		subs = make([]string, len(rows))
		for r, row := range rows {
			var parts []string
			shown := false
			for i, c := range cols {
				if cell := row[i+1]; c.Under {
					parts = append(parts, strings.ToLower(c.Head)+" "+cell)
					shown = shown || cell != "" && cell != "-"
				}
			}
			if shown {
				subs[r] = strings.Join(parts, "  ")
			}
		}
		for i := len(cols) - 1; i >= 0; i-- {
			if cols[i].Under {
				tc = slices.Delete(tc, i+1, i+2)
				for r := range rows {
					rows[r] = slices.Delete(rows[r], i+1, i+2)
				}
			}
		}
	}
	// Only what a narrow terminal keeps counts: the columns it may drop
	// (Prio) go first.
	fixed := make([]textCol, len(tc))
	for i, c := range tc {
		if c.prio == 0 {
			fixed[i] = c
		}
	}
	kept := make([][]string, len(rows))
	for r, row := range rows {
		kept[r] = make([]string, len(row))
		for i, c := range tc {
			if c.prio == 0 {
				kept[r][i] = row[i]
			}
		}
	}
	own := make([]bool, len(rows))
	if over := tableWidth(fixed, kept) - t.width; over > 0 && labelFirst {
		label := runes(tc[1].head)
		for _, row := range rows {
			label = max(label, runes(row[1]))
		}
		for i, row := range rows {
			own[i] = runes(row[1]) > label-over
		}
	}
	var out [][]string
	var failing []bool
	for i, row := range rows {
		fail := tb.Rows[i].Failing
		if own[i] {
			// The label's line starts the row: its mark, then the label
			// where the others have theirs.
			above := make([]string, len(tc))
			above[1] = row[1]
			if tb.Marks {
				above[1] = cmp.Or(row[0], " ") + "  " + above[1]
				row[0] = " " // the mark's column stays, for the other rows
			}
			row[1] = ""
			out, failing = append(out, above), append(failing, fail)
		}
		out, failing = append(out, row), append(failing, fail)
		if subs != nil && subs[i] != "" {
			sub := make([]string, len(tc))
			sub[1] = "   " + subs[i]
			out, failing = append(out, sub), append(failing, fail)
		}
	}
	t.table(textTable{cols: tc, rows: out, failing: failing, spans: true})
	for _, n := range tb.Notes {
		t.para("", "   ", n, 6)
	}
}
