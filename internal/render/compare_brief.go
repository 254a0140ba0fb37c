package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/words"
)

// A brief comparison (compare --brief) fits one screen: the conclusion,
// the two runs, the families and total, the endpoints and instances that
// changed, and the failures that appeared or grew; at most these many rows
// of each list, the rest counted and left to the full comparison.
const (
	briefChanged = 8 // endpoints and instances that changed
	briefAnswers = 4 // statuses and errors that appeared or grew
	briefNotes   = 2
)

// briefCmp is the part of a comparison a brief one shows.
type briefCmp struct {
	moreChanged int // rows left out
	rows        []cmpRow
	answers     []cmpAnswer
	moreAnswers int
	notes       []string
	moreNotes   int
}

// newBriefCmp picks from v what a brief comparison shows: the endpoints
// and instances whose failure rate or latency changed, or that were added
// or removed (regressions first), and the failures that appeared or grew.
func newBriefCmp(v *cmpView) *briefCmp {
	b := &briefCmp{}
	var worse, other []cmpRow
	c := v.c
	for _, list := range [][]compare.ScopeChange{c.Endpoints, c.Groups} {
		for i := range list {
			sc := &list[i]
			r := cmpRowOf(sc, c.Label(sc))
			switch {
			case r.change == compare.ChangeSame:
			case r.worse:
				worse = append(worse, r)
			default:
				other = append(other, r)
			}
		}
	}
	all := append(worse, other...)
	b.rows = all[:min(len(all), briefChanged)]
	b.moreChanged = len(all) - len(b.rows)
	for _, a := range v.answers {
		if !a.failure {
			continue
		}
		if len(b.answers) == briefAnswers {
			b.moreAnswers++
			continue
		}
		b.answers = append(b.answers, a)
	}
	b.notes = c.Notes[:min(len(c.Notes), briefNotes)]
	b.moreNotes = len(c.Notes) - len(b.notes)
	return b
}

// changedHeading is the heading of the changed scopes: "CHANGED 3 of 9
// endpoints and instances".
func (b *briefCmp) changedHeading(c *compare.Comparison) string {
	n := len(c.Endpoints) + len(c.Groups)
	if len(b.rows) == 0 {
		return fmt.Sprintf("none of %d endpoint%s and instance%s changed", n, words.Plural(n), words.Plural(n))
	}
	return fmt.Sprintf("%d of %d endpoint%s and instance%s changed", len(b.rows)+b.moreChanged, n, words.Plural(n), words.Plural(n))
}

// CompareBriefText returns the renderer of compare --brief in text: the
// comparison on one screen.
func CompareBriefText(o Options) CompareRenderer {
	return func(w io.Writer, c *compare.Comparison) error { return writeCompareBriefText(w, c, o) }
}

func writeCompareBriefText(w io.Writer, c *compare.Comparison, o Options) error {
	t := &textWriter{errWriter: errWriter{w: w}, color: o.Color, width: max(o.Width, minWidth)}
	if o.Width <= 0 {
		t.width = DefaultWidth
	}
	v := newCmpView(c)
	b := newBriefCmp(v)
	code := ansiBold
	if c.Regressed() {
		code = AnsiRed + ansiBold
	}
	t.para(code, strings.ToUpper(c.Status), c.Headline(), 2)
	t.para("", "before", runWords(&c.Before), 7)
	t.para("", "after ", runWords(&c.After), 7)
	// On a narrow screen the failure rates in percent go before the
	// latencies: the counts stay, and a scope that got slower keeps its
	// figures.
	cols := []textCol{{}, {head: "FAMILY"},
		{head: "BEFORE", right: true}, {head: "", right: true, prio: 4}, {head: "AFTER", right: true}, {head: "", right: true, prio: 5},
		{head: "CHANGE"}, {head: "P", right: true}, {head: "P50", prio: 6}, {head: "P99", prio: 7}}
	cells := func(r *cmpRow) []string {
		return []string{markOf(r.worse), r.label, r.before, r.beforeRate, r.after, r.afterRate, r.change, r.p, r.p50, r.p99}
	}
	t.heading("BY FAMILY  failed/requests before → after")
	var rows [][]string
	var failing []bool
	for i := range v.families {
		rows = append(rows, cells(&v.families[i]))
		failing = append(failing, v.families[i].worse)
	}
	t.table(textTable{cols: cols, rows: rows, failing: failing})
	t.heading("CHANGED  " + b.changedHeading(c))
	if len(b.rows) > 0 {
		cols[1].head = "SCOPE"
		rows, failing = nil, nil
		for i := range b.rows {
			rows = append(rows, cells(&b.rows[i]))
			failing = append(failing, b.rows[i].worse)
		}
		t.table(textTable{cols: cols, rows: rows, failing: failing})
		if b.moreChanged > 0 {
			t.para("", "   ", fmt.Sprintf("… %d more in the full comparison", b.moreChanged), 4)
		}
	}
	if len(b.answers) > 0 {
		t.heading("FAILURES THAT APPEARED OR GREW")
		for _, a := range b.answers {
			line := fmt.Sprintf("%s: %s %s: %s → %s", a.scope, a.answer, a.change, a.before, a.after)
			if a.p != "" {
				line += ", " + a.p
			}
			if a.worse {
				t.failing(" "+failMark, line, 4)
			} else {
				t.para("", "  ", line, 4)
			}
		}
		if b.moreAnswers > 0 {
			t.para("", "   ", fmt.Sprintf("… %d more in the full comparison", b.moreAnswers), 4)
		}
	}
	if len(b.notes) > 0 {
		t.heading("NOTES")
		for _, n := range b.notes {
			t.para("", " -", n, 3)
		}
		if b.moreNotes > 0 {
			t.para("", "   ", fmt.Sprintf("… %d more in the full comparison", b.moreNotes), 4)
		}
	}
	t.printf("\n")
	t.para("", "", briefFooter(c, "--brief"), 0)
	return t.err
}

// CompareBriefMarkdown writes compare --brief in Markdown: the comparison
// on one screen, for a pull request's comment.
func CompareBriefMarkdown(w io.Writer, c *compare.Comparison) error {
	m := &mdWriter{errWriter: errWriter{w: w}}
	v := newCmpView(c)
	b := newBriefCmp(v)
	m.printf("# pinprobe compare: %s\n\n", mdText(c.Status))
	m.printf("> **%s**\n\n", mdText(c.Conclusion))
	m.printf("- **Before:** %s\n- **After:** %s\n", mdText(runWords(&c.Before)), mdText(runWords(&c.After)))
	head := []string{"", "Family", "Before", "After", "Change", "p", "p50", "p99"}
	cells := func(r *cmpRow, label string) []string {
		mark := ""
		if r.worse {
			mark, label = "✗", "**"+label+"**"
		}
		side := func(count, ci string) string {
			if count == "-" {
				return "-"
			}
			return count + " " + ci
		}
		return []string{mark, label, side(r.before, r.beforeCI), side(r.after, r.afterCI), mdText(r.change), r.p, r.p50, r.p99}
	}
	m.printf("\n## By address family\n\n")
	var rows [][]string
	for i := range v.families {
		rows = append(rows, cells(&v.families[i], words.FamilyName(v.families[i].label)))
	}
	m.table(head, "llrrlrrr", rows)
	m.printf("\n## Changed: %s\n", mdText(b.changedHeading(c)))
	if len(b.rows) > 0 {
		m.printf("\n")
		head[1] = "Scope"
		rows = nil
		for i := range b.rows {
			rows = append(rows, cells(&b.rows[i], mdText(b.rows[i].label)))
		}
		m.table(head, "llrrlrrr", rows)
		if b.moreChanged > 0 {
			m.printf("\n… %d more in the full comparison.\n", b.moreChanged)
		}
	}
	if len(b.answers) > 0 {
		m.printf("\n## Failures that appeared or grew\n\n")
		for _, a := range b.answers {
			line := fmt.Sprintf("%s: %s %s: %s → %s", a.scope, a.answer, a.change, a.before, a.after)
			if a.p != "" {
				line += ", " + a.p
			}
			mark := ""
			if a.worse {
				mark = "✗ "
			}
			m.printf("- %s%s\n", mark, mdText(line))
		}
		if b.moreAnswers > 0 {
			m.printf("- … %d more in the full comparison\n", b.moreAnswers)
		}
	}
	if len(b.notes) > 0 {
		m.printf("\n## Notes\n\n")
		for _, n := range b.notes {
			m.printf("- %s\n", mdText(n))
		}
		if b.moreNotes > 0 {
			m.printf("- … %d more in the full comparison\n", b.moreNotes)
		}
	}
	m.printf("\n%s\n", mdText(briefFooter(c, "--brief")))
	return m.err
}

// briefFooter says what the full comparison adds, and at what level the
// brief one's changes were found (when anything was compared).
func briefFooter(c *compare.Comparison, flag string) string {
	how := "how this was decided"
	if c.Comparisons > 0 {
		how += fmt.Sprintf(" (α = %s over %d comparison%s)", words.Num(c.Alpha), c.Comparisons, words.Plural(c.Comparisons))
	}
	return "Brief: every status that changed, the latency with its intervals, and " + how + " are in the full comparison, without " + flag + "."
}
