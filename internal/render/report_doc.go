package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// reportPage is the whole report as a page, in every format's order. A
// terse page (a terminal's default) leaves out the statistics and the
// blocks that say little in the run at hand (dnsRepeats, phasesTell).
func reportPage(v *View, terse bool) *Page {
	p := newReportPage(v)
	p.Top = reportTop(v)
	p.Footer = "Written by pinprobe " + v.r.Version + ". Times are UTC, from the clock of the machine that ran it."
	add := func(s ...Section) { p.Sections = append(p.Sections, s...) }
	add(withBlocks(runSection(v), inputsSection(v).Blocks...), clientSection(v))
	if !terse || !dnsRepeats(v) {
		add(dnsSection(v))
	}
	add(preflightSection(v))
	probed := v.r.NotProbed == ""
	if probed {
		add(familiesSection(v), endpointsSection(v), vantagesSection(v), whoSection(v.Who))
		if len(v.Groups) > 0 {
			add(instancesSection(v))
		}
		if len(v.Conns) > 0 {
			add(withBlocks(connectionsSection(v), failingQueries(v)...))
		}
		add(latencySection(v))
		if len(v.r.Endpoints) > 0 && (!terse || phasesTell(v)) {
			add(phasesSection(v))
		}
		if !terse || len(v.Timeline.Series) > 0 && len(v.Timeline.Series[0].Requests) >= minTimeline {
			add(timelineSection(v))
		}
		add(overTimeSection(v), samplesSection(v, terse))
	}
	add(gateSection(v), verdictSection(v, terse))
	if probed {
		add(logsSection(v), testsSection(v), headersSection(v))
	}
	return p
}

// newReportPage is the title and HTML's header of a report's page.
func newReportPage(v *View) *Page {
	return &Page{Title: "pinprobe: " + v.Headline + " — " + v.Hosts, Bad: verdictTone(v.Verdict) == ToneBad,
		Kicker: "pinprobe " + v.r.Version + " · " + v.Hosts + " · " + v.Run.Started + " UTC",
		Badge:  strings.ToUpper(v.Verdict.Status), Heading: words.Capitalize(v.Headline), Tone: v.Verdict.Tone}
}

// reportTop is what the report found, first: on a terminal the verdict
// and the release gate in a line each, what ran, and how the run ended;
// in the documents the verdict with its evidence and who answered.
func reportTop(v *View) []Block {
	var top []Block
	text := func(b ...Block) { top = append(top, b...) }
	st, run := v.Verdict, v.Run
	if st.Line != "" {
		text(Para{Only: FormatText, Lead: "VERDICT " + strings.ToUpper(st.Status), Text: st.Line, Indent: 2, Tone: verdictTone(st)})
	}
	if g := v.Gate; g.Summary != "" {
		tone := ToneBad
		if g.Passed {
			tone = ToneStrong
		}
		text(Para{Only: FormatText, Lead: "RELEASE GATE", Text: g.Summary, Indent: 2, Tone: tone})
	}
	text(runParts(v))
	if v.r.Interrupted {
		text(Para{Only: FormatText, Lead: "INTERRUPTED", Text: fmt.Sprintf("after %s: this report covers every request sent until then.", run.Seconds), Indent: 2, Tone: ToneBad})
	}
	for _, p := range run.Pauses {
		text(Para{Only: FormatText, Lead: "PAUSED", Text: p + ".", Indent: 2, Tone: ToneBad})
	}
	if run.Settled != "" {
		text(Para{Only: FormatText, Lead: "STOPPED EARLY", Text: run.Settled + ".", Indent: 2, Tone: ToneStrong})
	}
	if n := len(v.r.Inputs); n > 0 {
		files := make([]string, n)
		for i, in := range v.r.Inputs {
			files[i] = in.File
			if in.Vantage != "" {
				files[i] += " from " + in.Vantage
			}
		}
		text(Para{Only: FormatText, Lead: "MERGED", Text: fmt.Sprintf("from %d report%s: %s", n, words.Plural(n), strings.Join(files, ", ")), Indent: 2, Tone: ToneStrong})
	}
	for _, n := range v.r.Notes {
		text(Para{Only: FormatText, Text: n, Note: true})
	}

	md := FormatMarkdown
	text(Para{Only: md, Lead: "Verdict: " + st.Status + ".", Text: st.Summary})
	for _, n := range st.Notes {
		text(Para{Only: md, Text: n})
	}
	if st.Level != "" {
		text(Para{Only: md, Text: st.Level + "."})
	}
	if len(v.Who) > 0 {
		text(Para{Only: md, Lead: "Who answered:", Text: whoWords(v.Who) + "."})
	}
	if v.r.Totals.Failed > 0 {
		text(Para{Only: md, Text: "Queries to find these requests in the gateway's access logs are below, after the samples."})
	}
	if v.r.Interrupted {
		text(Para{Only: documents, Tone: ToneBad, Lead: "Interrupted after " + mdSecs(v.r.DurationS) + ":", Text: "the run was stopped early; this report covers every request sent until then."})
	}
	if run.Settled != "" {
		text(Para{Only: FormatHTML, Tone: ToneStrong, Lead: "Stopped early:", Text: run.Settled + "."})
	}
	for _, p := range run.Pauses {
		text(Para{Only: documents, Tone: ToneBad, Lead: "Paused", Text: p + "."})
	}
	return append(top, htmlTop(v)...)
}

// htmlTop is what HTML's header box says under the heading: the verdict's
// summary, the suspects, the other findings, the release gate's failures
// and who answered.
func htmlTop(v *View) []Block {
	st, h := v.Verdict, FormatHTML
	top := []Block{Para{Only: h, Text: st.Summary}}
	if st.Level != "" {
		top = append(top, Para{Only: h, Text: st.Level + "."})
	}
	if len(st.Suspects) > 0 {
		l := List{Only: h, Title: "Suspects"}
		for _, s := range st.Suspects {
			lead := s.What + " " + s.Label
			if s.Kind == "connections" {
				lead = s.What + " " + s.Address
			}
			lead = strings.TrimSpace(strings.Join([]string{lead, s.URL, s.Family}, " "))
			text := s.Failed + ", " + s.RateCI + " · " + s.P
			if s.How != "" {
				text = s.How + " · " + text
			}
			l.Items = append(l.Items, Item{Lead: lead, Text: text})
		}
		top = append(top, l)
	}
	if len(st.Notes) > 0 {
		l := bullets(st.Notes, 0)
		l.Only, l.Title = h, "Also found"
		top = append(top, l)
	}
	if g := v.Gate; g.Summary != "" {
		top = append(top, gateLine(g, h))
	}
	if who := whoPhrases(v.Who); len(who) > 0 {
		if len(v.Who) > topWho {
			who = append(who, fmt.Sprintf("%d kinds in all, below", len(v.Who)))
		}
		l := bullets(who, 0)
		l.Only, l.Title = h, "Who answered the failures"
		top = append(top, l)
	}
	return top
}

// runParts is what ran, in a line or two on a terminal: the version, the
// window, the rate planned and achieved, what was sent and dropped, and
// where from.
func runParts(v *View) Parts {
	r, t := v.r, &v.r.Totals
	planned := "max rate (closed model)"
	if !r.Plan.Max {
		planned = words.Num(r.Plan.Rate) + " req/s planned"
	}
	p := Parts{Only: FormatText, Lead: "pinprobe", Items: []string{
		v.r.Version,
		v.Run.Started + " – " + clock(r.EndedAt.Time) + " UTC (" + v.Run.Took + ")",
		planned + ", " + strconv.FormatFloat(t.RPS, 'f', 1, 64) + " achieved",
		// One part, so that a line never begins with "0 dropped".
		fmt.Sprintf("%d request%s, %d dropped", t.Requests, words.Plural(int(t.Requests)), t.Dropped),
	}}
	if t.Abandoned > 0 {
		p.Items[len(p.Items)-1] += fmt.Sprintf(", %d abandoned", t.Abandoned)
	}
	if v.Vantage != "" {
		p.Items = append(p.Items, "from "+v.Vantage)
	}
	return p
}

// runSection is what ran, for the documents: the window, what was sent,
// the plan, the tool and the command.
func runSection(v *View) Section {
	run := v.Run
	items := []Item{
		{Lead: "Window (UTC)", Text: fmt.Sprintf("%s → %s (%s, %s)", run.From, run.To, run.Length, run.Ended)},
		{Lead: "Sent", Text: run.Sent},
	}
	if run.Settled != "" {
		items = append(items, Item{Lead: "Stopped early", Text: run.Settled})
	}
	items = append(items, Item{Lead: "Plan", Text: run.Plan})
	if v.Vantage != "" {
		items = append(items, Item{Lead: "Vantage", Text: v.Vantage})
	}
	items = append(items, Item{Lead: "Tool", Text: "pinprobe " + v.r.Version + " — resolves every A/AAAA address of the host, pins one connection pool to each address (an endpoint) and sends each a steady request stream, so failures can be told apart by address. It never retries a request."})
	s := Section{Heading: "The run", ID: "run", Nav: "Run", Blocks: []Block{List{Only: documents, Items: items}}}
	if run.Command != "" {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "Command (secrets redacted):"}, Code{Only: documents, Info: "sh", Text: run.Command})
	}
	return s
}

// gateSection is the release gate: its summary, then every check, those
// that did not pass first (marked ✗); a passing gate lists what it passed.
func gateSection(v *View) Section {
	g := v.Gate
	if g.Summary == "" {
		return Section{}
	}
	s := Section{Heading: "Release gate", ID: "gate", Nav: "Release gate", Aside: g.Summary, Bad: !g.Passed}
	why := ""
	if !g.Passed {
		why = "Each check is judged in every scope: each endpoint, each family and the total. A check passes only when proven: what the scope is shown to stay within, at the gate's confidence (Shown), is within the limit; a scope that measured within it on too few requests is not proven, and one no request reached is not judged: neither passes."
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Check"}, {Head: "Scope", Only: documents}, {Head: "Scope", Fit: true, Only: FormatText}, {Head: "Measured", Right: true},
		{Head: "Shown", Right: true}, {Head: "Limit", Right: true}, {Head: "Result"}}}
	tb.Rows = gateRows(v)
	s.Blocks = append(s.Blocks, Para{Only: documents, Lead: g.Summary + ".", Text: why}, tb)
	for _, p := range []string{g.Prove, g.Seen} {
		if p != "" {
			s.Blocks = append(s.Blocks, Para{Text: p, Note: true})
		}
	}
	return s
}

// verdictSection is the whole verdict, last on a terminal; terse, a
// concentrated verdict is its line, which names every suspect.
func verdictSection(v *View, terse bool) Section {
	st := v.Verdict
	text := st.Summary
	if terse && st.Status == report.VerdictConcentrated {
		text = st.Line + "."
	}
	s := Section{Blocks: []Block{Para{Only: FormatText, Lead: "VERDICT " + strings.ToUpper(st.Status), Text: text, Indent: 2, Tone: verdictTone(st)}}}
	for _, n := range st.Notes {
		s.Blocks = append(s.Blocks, Para{Only: FormatText, Text: n, Note: true})
	}
	switch {
	case !terse && st.Level != "":
		s.Blocks = append(s.Blocks, Para{Only: FormatText, Text: st.Level + ".", Note: true})
	case terse && st.Status != "" && v.r.NotProbed == "":
		s.Blocks = append(s.Blocks, Para{Only: FormatText, Text: detailHint, Note: true})
	}
	return s
}

// timelineSection is the failures over time of each endpoint.
func timelineSection(v *View) Section {
	if len(v.Timeline.Series) == 0 {
		return Section{}
	}
	return Section{Heading: "Timeline", ID: "timeline", Nav: "Timeline", Blocks: []Block{
		Chart{Timeline: v.Timeline, Multi: v.MultiURL, Only: FormatText | FormatMarkdown},
		Para{Only: FormatHTML, Text: "One strip per endpoint: each column is a slice of the run, its height the share of that slice's requests that failed. A failure that starts, stops or comes and goes shows here."},
		Figure{Kind: FigureTimeline, V: v}}}
}

// overTimeSection is each family's and each suspect's requests, failures
// and latency over time: a chart a browser draws.
func overTimeSection(v *View) Section {
	if v.OverTime.Columns == 0 || len(v.OverTime.Scopes) == 0 {
		return Section{}
	}
	return Section{Heading: "Over time: requests, failures and latency", ID: "over-time", Nav: "Over time", Blocks: []Block{
		Para{Only: FormatHTML, Text: "Each address family, and each suspect the verdict names: requests sent per second, the failed ones in the failure colour, and under them the p50 and p99 latency of the requests sent in each slice of the run. When it failed, and when it slowed down."},
		Figure{Kind: FigureOverTime, V: v}}}
}

// latencySection is each endpoint's latency percentiles (a chart a
// browser draws) and what the verdict found slower than the rest.
func latencySection(v *View) Section {
	s := Section{Heading: "Latency", ID: "latency", Nav: "Latency", Blocks: []Block{Figure{Kind: FigureLatency, V: v}}}
	if len(v.r.Verdict.Slow) == 0 {
		return s
	}
	tb := Table{Only: FormatHTML, Title: "Slower than the rest", Intro: "Latency significantly higher than the rest's (a one-sided Mann–Whitney test) and by enough to matter: at least 1.5× and 2 ms slower over at least a fifth of the percentiles. Slowness never fails a run.",
		Cols: []Col{{Head: "Scope", Label: true}, {Head: "Against"}, {Head: "Median", Right: true}, {Head: "The rest's", Right: true}, {Head: "Ratio", Right: true},
			{Head: "p99", Right: true}, {Head: "The rest's p99", Right: true}, {Head: "Percentiles ≥1.5× slower", Right: true}, {Head: "p"}}}
	for i := range v.r.Verdict.Slow {
		r := &v.r.Verdict.Slow[i]
		what, label, url, against := v.slowScope(r)
		tb.Rows = append(tb.Rows, Row{Cells: []string{strings.TrimSpace(what + " " + label + " " + url), against,
			words.Latency(r.MedianMS, 1), words.Latency(r.RestMedianMS, 1), strconv.FormatFloat(r.Ratio, 'f', 1, 64) + "×",
			words.Latency(r.P99MS, 1), words.Latency(r.RestP99MS, 1), words.PctRate(r.Share), words.PValue(r.P)}})
	}
	s.Blocks = append(s.Blocks, tb)
	return s
}

// failingQueries are the queries over the failing connections' client
// ports, for HTML's section of the failing connections.
func failingQueries(v *View) []Block {
	var out []Block
	for _, g := range v.Logs.Gateways {
		for _, q := range g.Queries {
			if q.Failing {
				out = append(out, Code{Only: FormatHTML, Title: g.Name + ": " + q.Title, Info: q.Lang, Text: q.Text})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	where := "for each gateway pinprobe knows"
	if v.Logs.Known {
		where = "for the gateway that answered"
	}
	lead := Para{Only: FormatHTML, Text: fmt.Sprintf("Find them in the gateway's logs: the requests of the failing connections alone, by their client ports (%s), %s. If they return nothing, delete the port line: a NAT or proxy between this machine and the gateway changes the client port.", joinInts(v.Logs.FailingPorts, ", "), where)}
	return append([]Block{lead}, out...)
}

// verdictTone is the style of the verdict's label: red when it found
// failures.
func verdictTone(st VerdictView) Tone {
	if st.Tone == "bad" || st.Tone == "warn" {
		return ToneBad
	}
	return ToneStrong
}

// topWho is how many kinds of failed answer the top of a report, and a
// brief report, name.
const topWho = 3

// whoWords says the first topWho kinds of failed answer in a sentence,
// and how many more there are.
func whoWords(who []WhoRow) string {
	out := whoPhrases(who)
	if n := len(who) - topWho; n > 0 {
		out = append(out, fmt.Sprintf("%d more kinds", n))
	}
	return strings.Join(out, "; ")
}

// whoPhrases says each of the first topWho kinds of failed answer: "20 ×
// 502 from Azure Application Gateway (Server: …) on ::1".
func whoPhrases(who []WhoRow) []string {
	var out []string
	for _, f := range who[:min(len(who), topWho)] {
		s := fmt.Sprintf("%d × %s", f.Count, f.What)
		switch {
		case f.Producer != "" && f.Server != "":
			s += " from " + f.Producer + " (Server: " + f.Server + ")"
		case f.Producer != "":
			s += " from " + f.Producer
		case f.Server != "":
			s += " with Server: " + f.Server
		}
		addrs := words.ByCount(f.Addresses)
		if len(addrs) > 3 {
			addrs = append(addrs[:3], fmt.Sprintf("%d more addresses", len(addrs)-3))
		}
		out = append(out, s+" on "+strings.Join(addrs, ", "))
	}
	return out
}

// gateLine is the release gate in a paragraph for the top of a document:
// its summary, then the first three checks that did not pass.
func gateLine(g GateView, only Format) Para {
	var lines []string
	for i, l := range g.Lines {
		if i == 3 {
			lines = append(lines, "…")
			break
		}
		lines = append(lines, failMark+" "+l+".")
	}
	return Para{Only: only, Lead: "Release gate " + g.Summary + ".", Text: strings.Join(lines, " ")}
}

// detailHint ends a terse report: where the rest is.
const detailHint = "Statistics and every block: --detail, or the Markdown, HTML or JSON report."

// minTimeline is the fewest slices of a timeline a terse report draws: a
// shorter one shows no more than the tables.
const minTimeline = 10

// dnsRepeats reports whether the DNS answers only repeat the tables of
// the endpoints: every address answered was probed, and no answer failed
// or changed, or differed between the inputs of a merged report.
func dnsRepeats(v *View) bool {
	hosts := map[string]bool{}
	for _, d := range v.DNS {
		if d.Failed || len(d.Changes) > 0 || d.Missed != "" || hosts[d.Host] {
			return false
		}
		hosts[d.Host] = true
	}
	return true
}

// phasesTell reports whether where the time went says more than the
// latency columns: something was slower than the rest, or a failure was
// an error (a timeout, a reset) rather than a status.
func phasesTell(v *View) bool {
	if len(v.r.Verdict.Slow) > 0 {
		return true
	}
	for _, w := range v.Who {
		if _, err := strconv.Atoi(w.What); err != nil {
			return true
		}
	}
	return false
}
