package render

import (
	"io"
	"strings"
	"testing"
)

// TestPageTextTables writes titled tables on a terminal: one with rows,
// one without (its heading and notes still said), one whose hidden
// columns differ (laid out apart, never with another's cells), and one
// cut short by TextCap with the rest counted.
func TestPageTextTables(t *testing.T) {
	cols := []Col{{Head: "Name", Label: true}, {Head: "Count", Right: true}, {Head: "Note", Only: documents}}
	other := []Col{{Head: "Name", Label: true}, {Head: "Hidden", Only: documents}, {Head: "Count", Right: true}}
	p := &Page{Lead: Para{Lead: "LEAD", Text: "text"}, Sections: []Section{{Heading: "Things", Aside: "what they are", Blocks: []Block{
		Table{Title: "first", Marks: true, Cols: cols, Rows: []Row{{Failing: true, Cells: []string{"a", "1", "doc only"}}}},
		Table{Title: "empty", Marks: true, Cols: cols, Notes: []string{"12 more counted together."}},
		Table{Title: "other", Marks: true, Cols: other, Rows: []Row{{Cells: []string{"b", "secret", "2"}}}},
		Table{Title: "capped", Marks: true, Cols: cols, TextCap: 2, More: "in the documents", Rows: []Row{
			{Cells: []string{"c1", "1", ""}}, {Cells: []string{"c2", "2", ""}}, {Cells: []string{"c3", "3", ""}}, {Cells: []string{"c4", "4", ""}}}},
	}}}}
	out := Written(t, func(w io.Writer, p *Page) error { return writePageText(w, p, Options{Width: 80}) }, p)
	flat := norm(out)
	for _, want := range []string{
		"THINGS first what they are NAME COUNT ✗ a 1",
		"THINGS empty 12 more counted together.",
		"THINGS other NAME COUNT b 2",
		"THINGS capped NAME COUNT c1 1 c2 2 … 2 more in the documents",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, not := range []string{"doc only", "secret", "c3"} {
		if strings.Contains(out, not) {
			t.Errorf("%q shown on a terminal:\n%s", not, out)
		}
	}
}
