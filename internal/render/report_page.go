package render

// The report's sections as pages' sections, each built once for every
// format; the writers of the report call them in their order while the
// rest of the report moves here.

// statsCols are the columns of a StatsRow after the leading ones: a
// terminal shows the rate and the answers in one list and drops the
// latencies, the maximum and an all-zero Dropped first; the documents
// show the rate's interval, and statuses and errors apart.
var statsCols = []Col{
	{Head: "Requests", Right: true},
	{Head: "Failed", Right: true},
	{Right: true, Only: FormatText},
	{Head: "Failure rate (95% CI)", Only: documents},
	{Head: "Status/error", List: true, Only: FormatText},
	{Head: "Statuses", Only: documents},
	{Head: "Errors", Only: documents},
	{Head: "p50", Right: true, Prio: 6},
	{Head: "p99", Right: true, Prio: 7},
	{Head: "Max", Right: true, Prio: 3, Only: FormatText},
	{Head: "Dropped", Right: true, Prio: 4, DropZero: true},
}

// rowCells is lead, then s's cells of statsCols, then tail, in one
// allocation (a report may hold thousands of rows).
func rowCells(s *StatsRow, lead []string, tail ...string) []string {
	out := make([]string, 0, len(lead)+len(statsCols)+len(tail))
	out = append(out, lead...)
	out = append(out, s.Requests, s.Failed, s.Rate, s.RateCI, s.Answers, s.Status, s.Errors, s.P50, s.P99, s.Max, s.Dropped)
	return append(out, tail...)
}

// familiesSection is the families and the total.
func familiesSection(v *View) Section {
	tb := Table{Marks: true, Cols: append([]Col{{Head: "Family", Label: true}, {Head: "Endpoints", Right: true, Prio: 2}}, statsCols...)}
	for i := range v.Families {
		f := &v.Families[i]
		tb.Rows = append(tb.Rows, Row{Failing: f.Failing, Cells: rowCells(f, []string{f.Label, f.Count})})
	}
	return Section{Heading: "By address family", Blocks: []Block{tb, Para{Only: documents,
		Text: "✗ marks a row with failed requests. The interval is the Wilson 95% confidence interval of the failure rate; p50 and p99 are request latencies."}}}
}

// endpointsSection is a table per URL, of its addresses; a row's DNS
// history is a line under it on a terminal, a column in the documents.
func endpointsSection(v *View) Section {
	s := Section{Heading: "By endpoint"}
	if len(v.Targets) == 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "No endpoint was probed."})
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "An endpoint is one URL pinned to one of its host's addresses."})
	for _, tv := range v.Targets {
		notes := false
		for _, e := range tv.Rows {
			notes = notes || e.Note != ""
		}
		tb := Table{Title: tv.Target, Marks: true, Cols: append([]Col{{Head: "Address", Label: true}, {Head: "Family", Prio: 1}}, statsCols...)}
		if notes {
			tb.Cols = append(tb.Cols, Col{Head: "Note", Only: documents})
		}
		for i := range tv.Rows {
			e := &tv.Rows[i]
			row := Row{Failing: e.Failing, Cells: rowCells(e, []string{e.Label, e.Family})}
			if notes {
				row.Cells = append(row.Cells, e.Note)
			}
			if e.DNSNote != "" {
				row.Note = e.Label + " " + e.DNSNote
			}
			tb.Rows = append(tb.Rows, row)
		}
		s.Blocks = append(s.Blocks, tb)
	}
	return s
}

// instancesSection is a table per instance header: which instance (or
// backend) answered, how often it failed, and from which addresses.
func instancesSection(v *View) Section {
	s := Section{Heading: "By instance"}
	if len(v.Groups) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents,
		Text: "The responses grouped by the value of their instance header: which instance (or backend) answered, and how often it failed."})
	cols := append(append([]Col{{Head: "Value", Label: true}}, statsCols...),
		Col{Head: "From", List: true, Prio: 2, Only: FormatText}, Col{Head: "Note", Only: documents})
	for _, g := range v.Groups {
		tb := Table{Title: g.Header + " of the responses", Marks: true, Cols: cols} // shared: writers never change them
		for i := range g.Rows {
			row := &g.Rows[i]
			note := row.Note
			if row.Suspect {
				note = "named by the verdict; " + note
			}
			tb.Rows = append(tb.Rows, Row{Failing: row.Failing, Cells: rowCells(row, []string{row.Label}, row.Where, note)})
		}
		s.Blocks = append(s.Blocks, tb)
	}
	return s
}

// tablesOnly is s without its prose: a brief report's selection.
func tablesOnly(s Section) Section {
	var blocks []Block
	for _, b := range s.Blocks {
		if _, ok := b.(Table); ok {
			blocks = append(blocks, b)
		}
	}
	s.Blocks = blocks
	return s
}
