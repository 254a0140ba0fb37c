package render

import (
	"io"
	"slices"
	"strings"
)

// writePageMarkdown writes p as GitHub-flavoured Markdown: the title, the
// lead quoted (its status in bold), each section under "## ", a table's title under
// "### ". Every string is escaped here (mdText, codeSpan), none before.
func writePageMarkdown(w io.Writer, p *Page) error {
	m := &mdWriter{errWriter: errWriter{w: w}}
	m.printf("# %s\n\n", mdText(p.Title))
	quoted := false
	if p.Lead.Lead != "" || p.Lead.Text != "" {
		m.printf("> %s\n", mdPara(p.Lead))
		quoted = true
	}
	for _, b := range p.Top {
		if b, ok := b.(Para); ok && shows(b.Only, FormatMarkdown) {
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
	if !slices.ContainsFunc(s.Blocks, func(b Block) bool { return shows(b.only(), FormatMarkdown) }) && s.Aside == "" {
		return // nothing to say here
	}
	if s.Heading != "" {
		m.printf("\n## %s\n", mdText(s.Heading))
	}
	for _, b := range s.Blocks {
		if !shows(b.only(), FormatMarkdown) {
			continue
		}
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
	lead := 0
	if tb.Marks {
		lead = 1
	}
	cols, out := tb.view(FormatMarkdown, lead)
	var head []string
	var align strings.Builder
	if tb.Marks {
		head = append(head, "")
		align.WriteByte('l')
	}
	for _, c := range cols {
		head = append(head, mdText(c.Head))
		if c.Right {
			align.WriteByte('r')
		} else {
			align.WriteByte('l')
		}
	}
	for r, row := range out {
		src := &tb.Rows[r]
		for j, cell := range row[lead:] {
			switch {
			case src.Code && j > 0:
				cell = codeSpan(cell)
			case cols[j].Label && src.Failing && cell != "":
				cell = "**" + mdCell(cell) + "**"
			default:
				cell = mdCell(cell)
			}
			row[lead+j] = cell
		}
		if tb.Marks {
			row[0] = markOf(src.Failing)
		}
	}
	m.printf("\n")
	m.table(head, align.String(), out)
	if len(tb.Notes) > 0 {
		notes := make([]string, len(tb.Notes))
		for i, n := range tb.Notes {
			notes[i] = mdText(n)
		}
		m.printf("\n%s\n", strings.Join(notes, " "))
	}
}
