package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// reportPage is the whole report as a page, in the order every format
// shows it: what it found first, then what ran, where the failures are,
// who answered them, when, a sample of them, the release gate, and (the
// documents' appendices) the log queries, every test and every header.
func reportPage(v *View) *Page {
	p := &Page{Title: "pinprobe: " + v.Headline + " — " + v.Hosts, Top: reportTop(v), Bad: verdictTone(v.Verdict) == ToneBad,
		Footer: "Written by pinprobe " + v.Run.Version + ". Times are UTC, from the clock of the machine that ran it."}
	add := func(s ...Section) { p.Sections = append(p.Sections, s...) }
	add(withBlocks(runSection(v), inputsSection(v).Blocks...), clientSection(v), dnsSection(v), preflightSection(v))
	probed := v.NotProbed == ""
	if probed {
		add(familiesSection(v), endpointsSection(v), vantagesSection(v), whoSection(v))
		if len(v.Groups) > 0 {
			add(instancesSection(v))
		}
		if len(v.Conns) > 0 {
			add(connectionsSection(v))
		}
		if len(v.Phases) > 0 {
			add(phasesSection(v))
		}
		add(timelineSection(v), samplesSection(v))
	}
	add(gateSection(v), verdictSection(v))
	if probed {
		add(Section{Heading: "Find these requests in your logs", Blocks: []Block{Queries{Logs: &v.Logs, Only: documents}}},
			testsSection(v), headersSection(v))
	}
	return p
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
		text(Para{Only: FormatText, Lead: "RELEASE GATE", Text: g.Summary, Indent: 2, Tone: gateTone(g)})
	}
	text(runParts(v))
	if run.Interrupted {
		text(Para{Only: FormatText, Lead: "INTERRUPTED", Text: fmt.Sprintf("after %s: this report covers every request sent until then.", run.Seconds), Indent: 2, Tone: ToneBad})
	}
	for _, p := range run.Pauses {
		text(Para{Only: FormatText, Lead: "PAUSED", Text: p + ".", Indent: 2, Tone: ToneBad})
	}
	if run.Settled != "" {
		text(Para{Only: FormatText, Lead: "STOPPED EARLY", Text: run.Settled + ".", Indent: 2, Tone: ToneStrong})
	}
	if n := len(v.Inputs); n > 0 {
		files := make([]string, n)
		for i, in := range v.Inputs {
			files[i] = in.File
			if v.InputVantages && in.Vantage != "-" {
				files[i] += " from " + in.Vantage
			}
		}
		text(Para{Only: FormatText, Lead: "MERGED", Text: fmt.Sprintf("from %d report%s: %s", n, words.Plural(n), strings.Join(files, ", ")), Indent: 2, Tone: ToneStrong})
	}
	for _, n := range v.Notes {
		text(Para{Only: FormatText, Text: n, Note: true})
	}

	text(Para{Only: documents, Lead: "Verdict: " + st.Status + ".", Text: st.Summary})
	for _, n := range st.Notes {
		text(Para{Only: documents, Text: n})
	}
	if st.Level != "" {
		text(Para{Only: documents, Text: st.Level + "."})
	}
	if len(v.Who) > 0 {
		text(Para{Only: documents, Lead: "Who answered:", Text: whoWords(v.Who, 3) + "."})
	}
	if run.Failed > 0 {
		text(Para{Only: documents, Text: "Queries to find these requests in the gateway's access logs are below, after the samples."})
	}
	if run.Interrupted {
		text(Para{Only: documents, Lead: "Interrupted after " + mdSecs(run.DurationS) + ":", Text: "the run was stopped early; this report covers every request sent until then."})
	}
	for _, p := range run.Pauses {
		text(Para{Only: documents, Lead: "Paused", Text: p + "."})
	}
	return top
}

// runParts is what ran, in a line or two on a terminal: the version, the
// window, the rate planned and achieved, what was sent and dropped, and
// where from.
func runParts(v *View) Parts {
	run := v.Run
	p := Parts{Only: FormatText, Lead: "pinprobe", Items: []string{
		run.Version,
		run.Started + " – " + run.EndClock + " UTC (" + run.Took + ")",
		run.Planned + ", " + strings.TrimSuffix(run.Achieved, " req/s") + " achieved",
		// One part, so that a line never begins with "0 dropped".
		fmt.Sprintf("%d requests, %d dropped", run.Requests, run.Dropped),
	}}
	if run.Abandoned > 0 {
		p.Items[len(p.Items)-1] += fmt.Sprintf(", %d abandoned", run.Abandoned)
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
		{Lead: "Window (UTC)", Text: fmt.Sprintf("%s → %s (%s, %s)", run.From, run.To, mdSecs(run.DurationS), run.Ended)},
		{Lead: "Sent", Text: run.Sent},
	}
	if run.Settled != "" {
		items = append(items, Item{Lead: "Stopped early", Text: run.Settled})
	}
	items = append(items, Item{Lead: "Plan", Text: run.Plan})
	if v.Vantage != "" {
		items = append(items, Item{Lead: "Vantage", Text: v.Vantage})
	}
	items = append(items, Item{Lead: "Tool", Text: "pinprobe " + run.Version + " — resolves every A/AAAA address of the host, pins one connection pool to each address (an endpoint) and sends each a steady request stream, so failures can be told apart by address. It never retries a request."})
	s := Section{Heading: "The run", Blocks: []Block{List{Only: documents, Items: items}}}
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
	s := Section{Heading: "Release gate", Aside: g.Summary, Bad: !g.Passed}
	why := ""
	if !g.Passed {
		why = "Each check is judged in every scope: each endpoint, each family and the total. A check passes only when proven: what the scope is shown to stay within, at the gate's confidence (Shown), is within the limit; a scope that measured within it on too few requests is not proven, and one no request reached is not judged: neither passes."
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Check"}, {Head: "Scope", Only: documents}, {Head: "Scope", Fit: true, Only: FormatText}, {Head: "Measured", Right: true},
		{Head: "Shown", Right: true}, {Head: "Limit", Right: true}, {Head: "Result"}}}
	for _, pass := range []bool{false, true} {
		for _, c := range g.Checks {
			if c.OK == pass {
				tb.Rows = append(tb.Rows, Row{Failing: !c.OK, Cells: []string{c.Name, c.Scope, strings.TrimSpace(c.Where + " " + c.WhereURL), c.Value, c.Bound, c.Limit, c.Result}})
			}
		}
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Lead: g.Summary + ".", Text: why}, tb)
	for _, p := range []string{g.Prove, g.Seen} {
		if p != "" {
			s.Blocks = append(s.Blocks, Para{Text: p, Note: true})
		}
	}
	return s
}

// verdictSection is the whole verdict with its evidence, last on a
// terminal (the documents quote it first).
func verdictSection(v *View) Section {
	st := v.Verdict
	s := Section{Blocks: []Block{Para{Only: FormatText, Lead: "VERDICT " + strings.ToUpper(st.Status), Text: st.Summary, Indent: 2, Tone: verdictTone(st)}}}
	for _, n := range st.Notes {
		s.Blocks = append(s.Blocks, Para{Only: FormatText, Text: n, Note: true})
	}
	if st.Level != "" {
		s.Blocks = append(s.Blocks, Para{Only: FormatText, Text: st.Level + ".", Note: true})
	}
	return s
}

// timelineSection is the failures over time of each endpoint.
func timelineSection(v *View) Section {
	if len(v.Timeline.Series) == 0 {
		return Section{}
	}
	return Section{Heading: "Timeline", Blocks: []Block{Chart{Timeline: v.Timeline, Multi: v.MultiURL}}}
}

// verdictTone is the style of the verdict's label: red when it found
// failures.
func verdictTone(st VerdictView) Tone {
	if st.Tone == "bad" || st.Tone == "warn" {
		return ToneBad
	}
	return ToneStrong
}

// gateTone is the style of the gate's summary: red when it did not pass.
func gateTone(g GateView) Tone {
	if !g.Passed {
		return ToneBad
	}
	return ToneStrong
}

// whoWords says the first n kinds of failed answer in a sentence, and how
// many more there are.
func whoWords(who []WhoRow, n int) string {
	var out []string
	for i := range who {
		if i == n {
			out = append(out, fmt.Sprintf("%d more kinds", len(who)-n))
			break
		}
		out = append(out, fingerprintWords(&who[i]))
	}
	return strings.Join(out, "; ")
}

// fingerprintWords says one fingerprint in a phrase: "20 × 502 from Azure
// Application Gateway (Server: …) on ::1".
func fingerprintWords(f *WhoRow) string {
	s := fmt.Sprintf("%d × %s", f.Count, f.What)
	switch {
	case f.Producer != "" && f.Server != "":
		s += " from " + f.Producer + " (Server: " + f.Server + ")"
	case f.Producer != "":
		s += " from " + f.Producer
	case f.Server != "":
		s += " with Server: " + f.Server
	}
	addrs := words.SortedKeys(f.Addresses)
	sort.SliceStable(addrs, func(i, j int) bool { return f.Addresses[addrs[i]] > f.Addresses[addrs[j]] })
	if len(addrs) > 3 {
		addrs = append(addrs[:3], fmt.Sprintf("%d more addresses", len(addrs)-3))
	}
	return s + " on " + strings.Join(addrs, ", ")
}
