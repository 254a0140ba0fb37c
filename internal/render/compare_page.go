package render

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/words"
)

// documents are the formats a reader keeps (Markdown and HTML): they show
// the runs and the changes as tables where a terminal has lines.
const documents = FormatMarkdown | FormatHTML

// comparePage is the comparison as a page: the conclusion, the two runs,
// the families, endpoints and instances before → after, the latency and
// the statuses and errors that changed, the notes and how it was decided.
// Brief, it is one screen: the families, the endpoints and instances that
// changed and the failures that appeared or grew, each list capped.
func comparePage(c *compare.Comparison, brief bool) *Page {
	p := &Page{
		Title: "pinprobe compare: " + c.Status,
		Lead:  Para{Lead: strings.ToUpper(c.Status), Text: c.Headline()},
		Bad:   c.Regressed(),
	}
	runs := List{Items: []Item{{Lead: "before", Text: runWords(&c.Before)}, {Lead: "after", Text: runWords(&c.After)}}}
	families := Section{Heading: "By address family", Aside: "failed/requests before → after", Blocks: []Block{
		cmpTable("", "Family", familyRows(c), brief),
	}}
	if brief {
		p.Sections = append(p.Sections, Section{Blocks: []Block{runs}}, families)
		p.Sections = append(p.Sections, briefCmpSections(c)...)
		return p
	}
	runs.Only = FormatText
	families.Blocks = append(families.Blocks, Para{Only: documents,
		Text: "Before and after are failed/requests and the failure rate with its Wilson 95% interval; ✗ marks a significant regression."})
	p.Sections = append(p.Sections, Section{Heading: "The runs", Blocks: []Block{runs, runsTable(c)}}, families)

	endpoints := Section{Heading: "By endpoint", Blocks: scopeTables(c.Endpoints, "Address")}
	if moved := addedRemoved(c); len(moved.Items) > 0 {
		endpoints.Blocks = append(endpoints.Blocks, moved)
	}
	p.Sections = append(p.Sections, endpoints)
	if len(c.Groups) > 0 {
		p.Sections = append(p.Sections, Section{Heading: "By instance", Blocks: scopeTables(c.Groups, "Value")})
	}
	if l := latencyBlocks(c); l != nil {
		p.Sections = append(p.Sections, Section{Heading: "Latency that changed", Blocks: l})
	}
	if a := answerRows(c, false); len(a) > 0 {
		l := answerList(a)
		l.Only = FormatText
		p.Sections = append(p.Sections, Section{Heading: "Statuses and errors that changed", Blocks: []Block{l, Table{Only: documents, Marks: true, Rows: a, Cols: []Col{
			{Head: "Scope", Label: true}, {Head: "Answer"}, {Head: "Change"}, {Head: "Before"}, {Head: "After"}, {Head: "p"},
		}}}})
	}
	if len(c.Notes) > 0 {
		p.Sections = append(p.Sections, Section{Heading: "Notes", Blocks: []Block{bullets(c.Notes, 0)}})
	}
	p.Sections = append(p.Sections, Section{Heading: "How this was decided", Blocks: []Block{Para{Text: cmpMethod(c), Indent: 1}}})
	return p
}

// briefCmpSections are the brief comparison's sections after the
// families: the endpoints and instances whose failure rate or latency
// changed, or that were added or removed (regressions first), the
// failures that appeared or grew, the notes, each capped, and what the
// full comparison adds.
func briefCmpSections(c *compare.Comparison) []Section {
	var worse, other []Row
	for _, list := range [][]compare.ScopeChange{c.Endpoints, c.Groups} {
		for i := range list {
			switch r := cmpRowOf(&list[i], c.Label(&list[i])); {
			case r.Cells[7] == compare.ChangeSame: // the change
			case r.Failing:
				worse = append(worse, r)
			default:
				other = append(other, r)
			}
		}
	}
	all := append(worse, other...)
	rows := all[:min(len(all), briefChanged)]
	more := len(all) - len(rows)
	n, some := len(c.Endpoints)+len(c.Groups), strconv.Itoa(len(all))
	if len(all) == 0 {
		some = "none"
	}
	heading := fmt.Sprintf("%s of %d endpoint%s and instance%s changed", some, n, words.Plural(n), words.Plural(n))
	said := words.Capitalize(heading)
	if more > 0 {
		said += fmt.Sprintf(": the first %d here, the rest in the full comparison", len(rows))
	}
	changed := Section{Heading: "Changed", Aside: heading, Blocks: []Block{Para{Only: documents, Text: said + "."}}}
	if len(rows) > 0 {
		changed.Blocks = append(changed.Blocks, cmpTable("", "Scope", rows, true))
	}
	if more > 0 {
		changed.Blocks = append(changed.Blocks, Para{Only: FormatText, Text: fmt.Sprintf("… %d more in the full comparison.", more), Indent: 4})
	}
	out := []Section{changed}
	if grew := answerRows(c, true); len(grew) > 0 {
		l := answerList(grew[:min(len(grew), briefAnswers)])
		l.Items = append(l.Items, bullets(nil, len(grew)-briefAnswers).Items...) // "… 3 more"
		out = append(out, Section{Heading: "Failures that appeared or grew", Blocks: []Block{l}})
	}
	if len(c.Notes) > 0 {
		out = append(out, Section{Heading: "Notes", Blocks: []Block{bullets(c.Notes[:min(len(c.Notes), briefNotes)], len(c.Notes)-briefNotes)}})
	}
	// What the full comparison adds, and at what level the changes were found.
	how := "how this was decided"
	if c.Comparisons > 0 {
		how += fmt.Sprintf(" (α = %s over %d comparison%s)", words.Num(c.Alpha), c.Comparisons, words.Plural(c.Comparisons))
	}
	return append(out, Section{Blocks: []Block{Para{Text: "Brief: every status that changed, the latency with its intervals, and " + how + " are in the full comparison, without --brief."}}})
}

// cmpTable is a table of scopes before → after (rows of cmpRowOf) under
// title, labelled by label. A terminal shows the counts and the rates
// apart and, when the page is too wide, the latencies under each row
// (brief: it drops the rates, then the latencies); the documents show
// each side's count and interval in one cell.
func cmpTable(title, label string, rows []Row, brief bool) Table {
	prio := func(n int) int { return map[bool]int{true: n}[brief] }
	return Table{Title: title, Marks: true, Rows: rows, Cols: []Col{
		{Head: label, Label: true},
		{Head: "Before", Right: true, Only: FormatText}, {Right: true, Prio: prio(4), Only: FormatText},
		{Head: "After", Right: true, Only: FormatText}, {Right: true, Prio: prio(5), Only: FormatText},
		{Head: "Before", Right: true, Only: documents}, {Head: "After", Right: true, Only: documents},
		{Head: "Change"}, {Head: "p", Right: true},
		{Head: "p50", Prio: prio(6), Under: !brief}, {Head: "p99", Prio: prio(7), Under: !brief},
	}}
}

// scopeTables are a table of endpoints per URL (Target, Address) or of
// instances per header (Header, Value), with any new endpoint's baseline
// and the URL --match host matched after.
func scopeTables(list []compare.ScopeChange, head string) []Block {
	var out []Block
	for i := 0; i < len(list); {
		key := cmp.Or(list[i].Target, list[i].Header)
		tb, after := cmpTable(key, head, nil, false), ""
		for ; i < len(list) && cmp.Or(list[i].Target, list[i].Header) == key; i++ {
			sc := &list[i]
			label := cmp.Or(sc.Address, sc.Value)
			tb.Rows = append(tb.Rows, cmpRowOf(sc, label))
			after = cmp.Or(after, sc.AfterTarget)
			if b := sc.Baseline; b != nil {
				tb.Notes = append(tb.Notes, fmt.Sprintf("%s is new: compared with %s: %d/%d (%s).", label, sc.BaselineScope, b.Failed, b.Requests, pct(b.FailureRate, b.Requests)))
			}
		}
		if after != "" {
			tb.Intro = "after: " + after + " (matched by --match host)"
		}
		if head == "Value" {
			byValue(tb.Rows, func(r Row) string { return r.Cells[0] })
		}
		out = append(out, tb)
	}
	return out
}

// familyRows are each family before and after, then the total.
func familyRows(c *compare.Comparison) []Row {
	var rows []Row
	for i := range c.Families {
		rows = append(rows, cmpRowOf(&c.Families[i], words.FamilyName(c.Families[i].Family)))
	}
	return append(rows, cmpRowOf(&c.Totals, "total"))
}

// runsTable is the two runs side by side, for Markdown (a terminal has
// runWords).
func runsTable(c *compare.Comparison) Table {
	row := func(name string, code bool, f func(s *compare.RunSide) string) Row {
		return Row{Cells: []string{name, f(&c.Before), f(&c.After)}, Code: code}
	}
	return Table{Only: documents, Cols: []Col{{}, {Head: "Before"}, {Head: "After"}}, Rows: []Row{
		row("File", true, func(s *compare.RunSide) string { return cmp.Or(s.File, "-") }),
		row("Window (UTC)", false, func(s *compare.RunSide) string {
			if s.StartedAt.IsZero() {
				return "-"
			}
			return utc(s.StartedAt) + " → " + utc(s.EndedAt)
		}),
		row("Requests", false, func(s *compare.RunSide) string { return strconv.FormatInt(s.Requests, 10) }),
		row("Failed", false, func(s *compare.RunSide) string {
			return fmt.Sprintf("%d, %s", s.Failed, rateCI(s.Failed, s.Requests, s.FailureRate))
		}),
		row("Failures are", false, func(s *compare.RunSide) string { return "errors and " + s.FailStatus }),
		row("Verdict", false, func(s *compare.RunSide) string { return cmp.Or(s.Verdict, "none") }),
		row("Merged from", false, func(s *compare.RunSide) string {
			return map[bool]string{true: "one run", false: fmt.Sprintf("%d reports", s.Inputs)}[s.Inputs == 0]
		}),
		row("Interrupted", false, func(s *compare.RunSide) string { return map[bool]string{true: "yes", false: "no"}[s.Interrupted] }),
		row("Command", true, func(s *compare.RunSide) string { return cmp.Or(shellJoin(s.Command), "-") }),
	}}
}

// addedRemoved lists the endpoints probed on one side only.
func addedRemoved(c *compare.Comparison) List {
	l := List{Only: documents} // a terminal's tables say added and removed
	for _, s := range []struct {
		name string
		ids  []compare.EndpointID
	}{{"Added (probed after only)", c.Added}, {"Removed (probed before only)", c.Removed}} {
		var names []string
		for _, id := range s.ids {
			names = append(names, id.Address+" ("+id.Target+")")
		}
		if len(names) > 0 {
			l.Items = append(l.Items, Item{Lead: s.name, Text: strings.Join(names, ", ")})
		}
	}
	return l
}

// bullets is a list of notes, and how many more the full document has.
func bullets(notes []string, more int) List {
	var l List
	for _, n := range notes {
		l.Items = append(l.Items, Item{Text: n})
	}
	if more > 0 {
		l.Items = append(l.Items, Item{Text: fmt.Sprintf("… %d more in the full comparison", more)})
	}
	return l
}

// A brief comparison (compare --brief) fits one screen: the conclusion,
// the two runs, the families and total, the endpoints and instances that
// changed, and the failures that appeared or grew; at most these many rows
// of each list, the rest counted and left to the full comparison.
const (
	briefChanged = 8 // endpoints and instances that changed
	briefAnswers = 4 // statuses and errors that appeared or grew
	briefNotes   = 2
)
