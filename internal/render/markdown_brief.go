package render

import (
	"cmp"
)

// markdownBrief is the Markdown report of --brief, for a ticket: one
// screen of it (see BriefView), every table led by its heading alone.
func (m *mdWriter) brief(v *View) {
	b := v.Brief()
	m.printf("# pinprobe: %s — %s\n\n", mdText(v.Headline), mdText(v.Hosts))
	m.printf("> **Verdict: %s.** %s\n", mdText(v.Verdict.Status), mdText(v.Verdict.Summary))
	for _, n := range b.Notes {
		m.printf(">\n> %s\n", mdText(n))
	}
	if len(v.Who) > 0 {
		m.printf(">\n> **Who answered:** %s.\n", mdText(whoWords(v.Who, 3)))
	}
	if g := v.Gate; g.Summary != "" {
		m.printf(">\n> **Release gate %s.**", mdText(g.Summary))
		for i, l := range g.Lines {
			if i == 3 {
				m.printf(" …")
				break
			}
			m.printf(" ✗ %s.", mdText(l))
		}
		m.printf("\n")
	}
	m.printf("\n**Run:** %s → %s (%s, %s) · %s", v.Run.From, v.Run.To, mdSecs(v.Run.DurationS), v.Run.Ended, mdText(v.Run.Sent))
	if v.Run.Command != "" {
		m.printf(" · %s", codeSpan(v.Run.Command))
	}
	m.printf("\n")
	if v.Run.Interrupted {
		m.printf("\n**Interrupted after %s:** this report covers every request sent until then.\n", mdSecs(v.Run.DurationS))
	}

	m.section(tablesOnly(familiesSection(v))) // one screen: no footnote
	var rows [][]string

	if len(b.Suspects) > 0 {
		m.printf("\n## Suspects\n")
		rows = nil
		for _, s := range b.Suspects {
			label := mdText(s.Label)
			if s.URL != "" && s.Kind == "endpoint" {
				label += " " + mdText(s.URL)
			}
			rows = append(rows, []string{"✗", "**" + label + "**", s.What, mdText(s.How), s.Counts, s.RateCI, s.P, s.P50, s.P99})
		}
		m.table([]string{"", "Suspect", "Kind", "How it fails", "Failed", "Failure rate (95% CI)", "p", "p50", "p99"}, "llllrllrr", rows)
	}

	if len(b.Samples) > 0 {
		if b.Samples[0].For != "" {
			m.printf("\n## One failed request of each suspect\n")
		} else {
			m.printf("\n## Failed requests, the first of each failing address\n")
		}
		tb := Table{Marks: true, Cols: append([]Col{{Head: "Of"}}, sampleCols...)}
		for i := range b.Samples {
			it := &b.Samples[i]
			tb.Rows = append(tb.Rows, Row{Failing: it.Row.Failed, Cells: sampleCells([]string{cmp.Or(it.For, it.Label)}, &it.Row)})
		}
		m.pageTable(&tb)
	}

	l := &b.Logs
	switch {
	case len(l.Queries) > 0:
		for _, q := range l.Queries {
			m.printf("\n## Find them in the logs: %s\n\n%s", mdText(q.Gateway), mdText(q.Query.Title))
			if l.PortFilter {
				m.printf(" (nothing found? delete the port line: a NAT or proxy in between changes the client port)")
			}
			m.printf(":\n\n")
			m.code(q.Query.Lang, q.Query.Text)
		}
	case len(l.Filters) > 0:
		m.printf("\n## Find them in the logs\n\n")
		for _, f := range l.Filters {
			m.printf("- **%s:** %s\n", f.Name, mdSpans(f.Value))
		}
	}
	m.printf("\n*Everything else (DNS, every table, the timeline, every query): the same command without `--brief`. Written by pinprobe %s; times are UTC.*\n", mdText(v.Run.Version))
}
