package render

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// briefPage is the report of --brief, one screen: the full report's top,
// the families, the suspects, who answered, one failed request of each
// suspect and the log query that finds them.
func briefPage(v *View) *Page {
	p := newReportPage(v)
	p.Footer = "Everything else (DNS, every table, the timeline, every query): the same command without --brief. Written by pinprobe " + v.r.Version + "; times are UTC."
	p.Top = keepBlocks(reportTop(v), func(b Block) bool { return b.only() == FormatText })
	top := func(blk ...Block) { p.Top = append(p.Top, blk...) }
	var notes []string // what there is to say when no suspect is named
	if len(v.Verdict.Suspects) == 0 {
		notes = v.Verdict.Notes
	}
	top(Para{Only: documents, Lead: "Verdict: " + v.Verdict.Status + ".", Text: v.Verdict.Summary})
	for _, n := range notes {
		top(Para{Only: FormatText, Text: n, Note: true}, Para{Only: documents, Text: n})
	}
	if len(v.Who) > 0 {
		top(Para{Only: documents, Lead: "Who answered:", Text: whoWords(v.Who) + "."})
	}
	if g := v.Gate; g.Summary != "" {
		top(gateLine(g, documents))
	}
	run := Section{Blocks: []Block{Para{Only: documents, Lead: "Run:", Text: fmt.Sprintf("%s → %s (%s, %s) · %s", v.Run.From, v.Run.To, v.Run.Length, v.Run.Ended, v.Run.Sent), Code: v.Run.Command}}}
	if v.r.Interrupted {
		run.Blocks = append(run.Blocks, Para{Only: documents, Lead: "Interrupted after " + mdSecs(v.r.DurationS) + ":", Text: "this report covers every request sent until then."})
	}
	whoS := whoSection(v.Who[:min(len(v.Who), topWho)]) // the first kinds of answer, on a terminal
	whoS.Blocks = keepBlocks(whoS.Blocks, func(b Block) bool { return shows(b.only(), FormatText) })
	if n := len(v.Who) - topWho; n > 0 {
		whoS.Blocks = append(whoS.Blocks, Para{Only: FormatText, Indent: 2, Text: fmt.Sprintf("… and %d more kind%s of failure in the full report", n, words.Plural(n))})
	}
	tables := familiesSection(v)
	tables.Blocks = keepBlocks(tables.Blocks, func(b Block) bool { _, ok := b.(Table); return ok })
	p.Sections = append([]Section{run, tables, suspectsSection(v), whoS, briefSamplesSection(v.briefSampleRows())}, briefLogsSections(v.briefLogs())...)
	return p
}

// keepBlocks is the blocks of bs that keep says to keep.
func keepBlocks(bs []Block, keep func(Block) bool) []Block {
	var out []Block
	for _, b := range bs {
		if keep(b) {
			out = append(out, b)
		}
	}
	return out
}

// suspectsSection is a row per suspect with its own figures: its failed
// requests of all it got, and the latencies of its address or instance
// ("-" for connections).
func suspectsSection(v *View) Section {
	if len(v.Verdict.Suspects) == 0 {
		return Section{}
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Suspect", Label: true}, {Head: "Kind", Prio: 2, Only: FormatText}, {Head: "Kind", Only: documents},
		{Head: "How it fails", Only: documents}, {Head: "Failed", Right: true}, {Head: "Failure rate (95% CI)", Short: "Rate (95% CI)", Prio: 4},
		{Head: "p", Prio: 3}, {Head: "p50", Right: true, Prio: 5}, {Head: "p99", Right: true, Prio: 6}}}
	for i, s := range v.Verdict.Suspects {
		rs := &v.r.Verdict.Suspects[i]
		var st *report.Stats
		switch s.Kind {
		case report.SuspectGroup:
			if g := v.r.FindGroup(rs.Group); g != nil {
				st = &g.Stats
			}
		case report.SuspectEndpoint:
			if e := v.r.FindEndpoint(rs.Target, rs.Address); e != nil {
				st = &e.Stats
			}
		}
		p50, p99 := "-", "-"
		if st != nil {
			p50, p99 = words.Latency(st.LatencyMS.P50, st.Requests), words.Latency(st.LatencyMS.P99, st.Requests)
		}
		label, what := s.Label, s.What
		if s.Kind == report.SuspectEndpoint && s.URL != "" {
			label += " " + s.URL
		}
		if s.Family != "" && s.Kind == report.SuspectEndpoint {
			what += ", " + s.Family
		}
		tb.Rows = append(tb.Rows, Row{Failing: true, Cells: []string{label, what, s.What, s.How, fmt.Sprintf("%d of %d", rs.Failed, rs.Requests), s.RateCI, s.P, p50, p99}})
	}
	return Section{Heading: "Suspects", Blocks: []Block{tb}}
}

// briefSamplesSection is one failed request of each suspect: a line each
// on a terminal, a table in the documents.
func briefSamplesSection(samples []briefSample) Section {
	if len(samples) == 0 {
		return Section{}
	}
	s := Section{Heading: "One failed request of each suspect"}
	if samples[0].For == "" {
		s.Heading = "Failed requests, the first of each failing address"
	}
	tb := Table{Only: documents, Marks: true, Scroll: true, Cols: append([]Col{{Head: "Of"}}, sampleCols...)}
	l := List{Only: FormatText}
	for _, it := range samples {
		r := it.Row
		tb.Rows = append(tb.Rows, Row{Failing: r.Failed, Cells: sampleCells([]string{cmp.Or(it.For, it.Label)}, r)})
		lead := it.Label
		if it.For != "" {
			lead = it.For
			if !strings.Contains(it.For, it.Label) {
				lead += " (" + it.Label + ")"
			}
		}
		item := sampleItem(lead, r)
		item.Subs = nil
		if r.RequestID != "" {
			item.Tail = "sent X-Request-Id: " + r.RequestID
		}
		l.Items = append(l.Items, item)
	}
	s.Blocks = []Block{l, tb}
	return s
}

// briefLogsSections are each gateway's query, or what to filter any
// access log on.
func briefLogsSections(l BriefLogs) []Section {
	var out []Section
	for _, q := range l.Queries {
		s := Section{Heading: "Find them in the logs: " + q.Gateway}
		port := ""
		if l.PortFilter {
			port = " (nothing found? delete the port line: a NAT or proxy in between changes the client port)"
		}
		if q.Query.Failing { // what the query finds, said beside the heading on a terminal
			s.Aside = "the requests of the failing connections"
		}
		s.Blocks = []Block{Para{Only: documents, Text: q.Query.Title + port + ":"}, Code{Info: q.Query.Lang, Text: q.Query.Text}}
		out = append(out, s)
	}
	if len(l.Queries) == 0 && len(l.Filters) > 0 {
		list := List{}
		for _, f := range l.Filters {
			var text strings.Builder
			for _, s := range f.Value {
				text.WriteString(s.Text)
			}
			list.Items = append(list.Items, Item{Lead: f.Name, Text: text.String()})
		}
		out = append(out, Section{Heading: "Find them in the logs", Blocks: []Block{list}})
	}
	return out
}
