package render

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// The report's sections as pages' sections, each built once for every
// format; the writers of the report call them in their order while the
// rest of the report moves here.

// statsCols are the columns of a StatsRow after the leading ones: the
// documents show the rate's interval, and statuses and errors apart.
var statsCols = []Col{
	{Head: "Requests", Right: true},
	{Head: "Failed", Right: true},
	{Right: true, Only: FormatText},
	{Head: "Failure rate (95% CI)", Only: documents, Interval: true},
	{Head: "Status/error", List: true, Only: FormatText},
	{Head: "Statuses", List: true, Only: documents},
	{Head: "Errors", List: true, Only: documents},
	{Head: "p50", Right: true, Prio: 6},
	{Head: "p99", Right: true, Prio: 7},
	{Head: "Max", Right: true, Prio: 3, Only: FormatText},
	{Head: "Dropped", Right: true, Prio: 4, DropZero: true},
}

// statsTableRow is s's row: lead, then its cells of statsCols, then tail,
// in one allocation (a report may hold thousands of rows).
func statsTableRow(s *StatsRow, lead []string, tail ...string) Row {
	out := make([]string, 0, len(lead)+len(statsCols)+len(tail))
	out = append(out, lead...)
	st := s.Stats
	out = append(out, strconv.FormatInt(st.Requests, 10), strconv.FormatInt(st.Failed, 10), pct(st.FailureRate, st.Requests),
		rateCI(st.Failed, st.Requests, st.FailureRate), s.Answers, counts(st.Status, "×"), counts(st.Errors, "×"),
		s.P50, s.P99, s.Max, strconv.FormatInt(st.Dropped, 10))
	return Row{Failing: s.Failing, Suspect: s.Suspect, Interval: intervalOf(st, s.Failing), Cells: append(out, tail...)}
}

// familiesSection is the families and the total.
func familiesSection(v *View) Section {
	tb := Table{Marks: true, Cols: append([]Col{{Head: "Family", Label: true}, {Head: "Endpoints", Right: true, Prio: 2}}, statsCols...)}
	for i := range v.Families {
		f := &v.Families[i]
		tb.Rows = append(tb.Rows, statsTableRow(f, []string{f.Label, f.Count}))
	}
	return Section{Heading: "By address family", ID: "families", Nav: "Families", Blocks: []Block{tb, Para{Only: documents,
		Text: "✗ marks a row with failed requests. The interval is the Wilson 95% confidence interval of the failure rate; p50 and p99 are request latencies."},
		Figure{Kind: FigureMix, V: v}}}
}

// endpointsSection is a table per URL, of its addresses; a row's DNS
// history is a line under it on a terminal, a column in the documents.
func endpointsSection(v *View) Section {
	s := Section{Heading: "By endpoint", ID: "endpoints", Nav: "Endpoints"}
	if len(v.Targets) == 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "No endpoint was probed."})
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "An endpoint is one URL pinned to one of its host's addresses."})
	// Every URL's table has the same columns, a terminal lays them out as
	// one: a Note column in all when a row of any has a note.
	notes := slices.ContainsFunc(v.Targets, func(tv TargetView) bool {
		return slices.ContainsFunc(tv.Rows, func(e StatsRow) bool { return e.Note != "" })
	})
	cols := append([]Col{{Head: "Address", Label: true}, {Head: "Family", Prio: 1}}, statsCols...)
	if notes {
		cols = append(cols, Col{Head: "Note", Only: documents})
	}
	for _, tv := range v.Targets {
		tb := Table{Title: tv.Target, Marks: true, Cols: cols}
		for i := range tv.Rows {
			e := &tv.Rows[i]
			var tail []string
			if notes {
				tail = []string{e.Note}
			}
			row := statsTableRow(e, []string{e.Label, e.Family}, tail...)
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
	s := Section{Heading: "By instance", ID: "instances", Nav: "Instances"}
	if len(v.Groups) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents,
		Text: "The responses grouped by the value of their instance header: which instance (or backend) answered, and how often it failed."})
	cols := append(append([]Col{{Head: "Value", Label: true}}, statsCols...),
		Col{Head: "From", List: true, Prio: 2, Only: FormatText}, Col{Head: "Note", Only: documents})
	for gi, g := range v.Groups {
		tb := Table{Title: g.Header + " of the responses", Marks: true, Cols: cols} // shared: writers never change them
		for i := range g.Rows {
			row := &g.Rows[i]
			note := "on " + row.Where
			if row.Suspect {
				note = "named by the verdict; " + note
			}
			tb.Rows = append(tb.Rows, statsTableRow(row, []string{row.Label}, row.Where, note))
		}
		s.Blocks = append(s.Blocks, tb, Figure{Kind: FigureRates, V: v, Group: gi})
	}
	return s
}

// connsTextCap is how many failing connections of an address a terminal
// lists; the documents list them all.
const connsTextCap = 8

// connectionsSection lists the failing connections of the endpoints whose
// failures stick to connections: each client port finds the instance that
// served it in the gateway's log.
func connectionsSection(v *View) Section {
	s := Section{Heading: "Failing connections", ID: "connections", Nav: "Failing connections"}
	if len(v.Conns) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "Failures stick to some connections of these addresses: one or more instances behind the address fail and the others do not. Each TCP connection stays on one instance, so the client port of a failing connection finds, in the gateway's access log, the instance that served it and the backend it routed to (see the query below)."})
	cols := []Col{{Head: "Client port"}, {Head: "Used (UTC)", Only: FormatText},
		{Head: "First request (UTC)", Only: documents}, {Head: "Last request (UTC)", Only: documents}, {Head: "Failed", Right: true}}
	for _, c := range v.Conns {
		tb := Table{Title: c.Label + ": " + c.Summary, Marks: true, Cols: cols, TextCap: connsTextCap,
			More: "in the JSON and Markdown reports"}
		for _, r := range c.Rows {
			tb.Rows = append(tb.Rows, Row{Failing: true, Cells: []string{strconv.Itoa(int(r.LocalPort)), words.Clock(r.First.Time) + "–" + words.Clock(r.Last.Time),
				utc(r.First), utc(r.Last), fmt.Sprintf("%d of %d", r.Failed, r.Requests)}})
		}
		if c.More > 0 {
			tb.Notes = append(tb.Notes, fmt.Sprintf("%d more connections (past the first %d) are counted together in the JSON report.", c.More, report.MaxConnRecords))
		}
		s.Blocks = append(s.Blocks, tb)
	}
	return s
}

// phasesSection is where the time went: connect, TLS and time to first
// byte, and the failures on new and reused connections, per address (a
// table per URL when there are several).
func phasesSection(v *View) Section {
	s := Section{Heading: "Where the time went", ID: "phases", Nav: "Phases", Aside: "p50/p99, and failures on new and reused connections"}
	if len(v.r.Endpoints) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "Connect and TLS are timed only on requests that opened a new connection; time to first byte (TTFB) runs from sending the request to the first byte of the response. How to read it: a 502 that arrives about as fast as a healthy answer was made by the gateway itself, without waiting for a backend; a 502 after a long TTFB, near the gateway's backend timeout, is an upstream timeout."})
	cols := []Col{{Head: "Address", Label: true},
		{Head: "Connect", Prio: 5, Only: FormatText}, {Head: "TLS", Prio: 6, Only: FormatText}, {Head: "First byte", Prio: 7, Only: FormatText},
		{Head: "Connect p50 / p99", Only: documents}, {Head: "TLS p50 / p99", Only: documents}, {Head: "TTFB p50 / p99", Only: documents},
		{Head: "Failed on new connections", Short: "Failed new", Right: true}, {Head: "Failed on reused connections", Short: "Reused", Right: true}}
	var tables []Table
	for i := range v.r.Endpoints {
		e := &v.r.Endpoints[i]
		if i == 0 || v.MultiURL && v.r.Endpoints[i-1].Target != e.Target {
			tables = append(tables, Table{Marks: true, Cols: cols})
			if v.MultiURL {
				tables[len(tables)-1].Title = e.Target
			}
		}
		fresh, reused := e.Connections["fresh"], e.Connections["reused"]
		connect, tls, ttfb := phaseWords(e, e.Phases.Connect), phaseWords(e, e.Phases.TLS), phaseWords(e, e.Phases.TTFB)
		if strings.HasPrefix(e.Target, "http://") && fresh.Requests+reused.Requests > 0 {
			tls = "— (plain HTTP)"
		}
		tb := &tables[len(tables)-1]
		tb.Rows = append(tb.Rows, Row{Failing: e.Failed > 0, Cells: []string{e.Address,
			compactPhase(connect), compactPhase(tls), compactPhase(ttfb), connect, tls, ttfb,
			fmt.Sprintf("%d/%d", fresh.Failed, fresh.Requests), fmt.Sprintf("%d/%d", reused.Failed, reused.Requests)}})
	}
	for _, tb := range tables {
		s.Blocks = append(s.Blocks, tb)
	}
	return s
}

// whoSection groups the failures by what came back: a line each on a
// terminal; a table and the first bytes of each body in the documents.
func whoSection(who []WhoRow) Section {
	s := Section{Heading: "Who answered the failures", ID: "who", Nav: "Who answered"}
	if len(who) == 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "No request failed."})
		return s
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "Failures grouped by what came back: the status (or, when no response came, the error class), the Server header and a hash of the body."})
	lines := List{Only: FormatText}
	tb := Table{Only: documents, Cols: []Col{{Head: "#", Right: true}, {Head: "Failures"}, {Head: "Server header"}, {Head: "Recognised as"},
		{Head: "On addresses"}, {Head: "New / reused connection"}}}
	for i, w := range who {
		what := fmt.Sprintf("%d × %s", w.Count, w.What)
		switch {
		case w.Producer != "":
			what += " from " + w.Producer
		case w.BodyHash != "":
			what += " (body " + w.BodyHash + ")"
		}
		what += fmt.Sprintf(" on %s (new connection %d, reused %d)", counts(w.Addresses, " ×"), w.Fresh, w.Reused)
		if w.Server != "" {
			what += "; Server: " + w.Server
		}
		lines.Items = append(lines.Items, Item{Failing: true, Text: what})
		tb.Rows = append(tb.Rows, Row{Cells: []string{strconv.Itoa(i + 1), fmt.Sprintf("%d × %s", w.Count, w.What),
			cmp.Or(w.Server, "-"), cmp.Or(w.Producer, "-"), addressCounts(w.Addresses), fmt.Sprintf("%d / %d", w.Fresh, w.Reused)}})
	}
	s.Blocks = append(s.Blocks, lines, tb)
	for i, w := range who {
		body := words.LimitBytes(w.Body, bodyLimit)
		if body == "" {
			continue
		}
		kind := w.What
		if w.Producer != "" {
			kind += " from " + w.Producer
		}
		first := "First bytes of one such body"
		if w.BodyHash != "" {
			first += " (normalised body hash " + w.BodyHash + ")"
		}
		s.Blocks = append(s.Blocks, Para{Only: documents, Lead: fmt.Sprintf("#%d — %s.", i+1, kind), Text: first + ":"},
			Code{Only: documents, Info: "text", Text: body})
	}
	return s
}

// samplesSection is the requests kept as evidence: on a terminal the
// first two failed ones of each address (terse: the first), in the
// documents every sample, a table per address.
func samplesSection(v *View, terse bool) Section {
	s := Section{Heading: "Sample requests", ID: "samples", Nav: "Samples"}
	each, aside := 2, "the first two failed of each address (all in JSON/Markdown)"
	if terse {
		each, aside = 1, "the first failed of each address (--detail: two)"
	}
	if len(v.Samples) == 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "No request was kept as a sample."})
		return s
	}
	failed := List{Only: FormatText}
	for i := range v.Samples {
		g := &v.Samples[i]
		shown := 0
		for j := range g.Rows {
			if sr := &g.Rows[j]; sr.Failed && shown < each {
				shown++
				failed.Items = append(failed.Items, sampleItem(g.Label, sr))
			}
		}
	}
	if len(failed.Items) > 0 {
		s.Aside = aside
		s.Blocks = append(s.Blocks, failed)
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "For each endpoint, the first failed requests and one successful one, kept as evidence. The time is when the request was sent; the request ID is the X-Request-Id header pinprobe sent with it, the response IDs are the gateway's own correlation headers. Every response header is in the appendix."})
	for _, g := range v.Samples {
		tb := Table{Only: documents, Title: g.Address + " — " + g.Target, Marks: true, Scroll: true, Cols: sampleCols}
		for i := range g.Rows {
			sr := &g.Rows[i]
			tb.Rows = append(tb.Rows, Row{Failing: sr.Failed, Cells: sampleCells(nil, sr)})
		}
		s.Blocks = append(s.Blocks, tb)
	}
	return s
}

// sampleCols are the columns of a sample.
var sampleCols = []Col{{Head: "Sent at (UTC)"}, {Head: "Request ID"}, {Head: "Response IDs"}, {Head: "Result"}, {Head: "Latency", Right: true},
	{Head: "Local → remote"}, {Head: "Connection"}}

// sampleCells is lead, then the cells of sampleCols.
func sampleCells(lead []string, sr *SampleRow) []string {
	return append(lead, utc(sr.At), cmp.Or(sr.RequestID, "-"), cmp.Or(strings.Join(sr.Correlation, "; "), "-"),
		sr.Result, words.Latency(sr.LatencyMS, 1), cmp.Or(sr.Local, "-")+" → "+sr.Remote, sr.Conn)
}

// sampleItem is a failed request in a line: "::1 · 20:43:05.250 · 502 ·
// 1.2ms · reused connection 127.0.0.1:50000 → [::1]:443", and its IDs.
func sampleItem(label string, sr *SampleRow) Item {
	conn := sr.Conn + " connection " + sr.Local + " → " + sr.Remote
	if sr.Conn == "none" {
		conn = "no connection to " + sr.Remote
	}
	it := Item{Failing: true, Text: fmt.Sprintf("%s · %s · %s · %s · %s", label, words.Clock(sr.At.Time), sr.Result, words.Latency(sr.LatencyMS, 1), conn)}
	var ids []string
	if sr.RequestID != "" {
		ids = append(ids, "sent X-Request-Id: "+sr.RequestID)
	}
	if len(sr.Correlation) > 0 {
		ids = append(ids, "got "+strings.Join(sr.Correlation, ", "))
	}
	if len(ids) > 0 {
		it.Subs = []string{strings.Join(ids, " · ")}
	}
	return it
}

// headersSection is every sample's response headers, an appendix of the
// documents.
func headersSection(v *View) Section {
	s := Section{Heading: "Appendix: response headers of the samples (secrets redacted)", ID: "headers"}
	for _, g := range v.Samples {
		s.Blocks = append(s.Blocks, Code{Only: documents, Title: g.Address + " — " + g.Target, Info: "http", Text: headerBlock(g.Rows), Fold: true})
	}
	return s
}

// preflightSection is the endpoints that failed to connect before the
// load (every endpoint when none could be probed), with their errors.
func preflightSection(v *View) Section {
	s := Section{Heading: "Preflight", ID: "preflight", Nav: "Preflight", Aside: "the endpoints that failed to connect before the load"}
	intro := "The endpoints that failed to connect before the load (a TCP connect, and the TLS handshake for https):"
	if v.r.NotProbed != "" {
		s.Aside = "every endpoint, checked before the load: none could be probed"
		intro = "Every endpoint was checked before the load (a TCP connect, and the TLS handshake for https); none could be probed."
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Address"}, {Head: "Family"}, {Head: "Result"}, {Head: "Detail", Only: documents}}}
	var details []Block
	for _, c := range v.r.Preflight {
		if c.OK && v.r.NotProbed == "" {
			continue
		}
		addr, result, detail := c.Address, "ok", c.Error
		if u := v.urlOf(c.Target); u != "" {
			addr += " " + u
		}
		if c.OK {
			detail = checkDetail(c)
		} else {
			result = c.Class
			details = append(details, Para{Only: FormatText, Text: c.Address + ": " + detail, Indent: 3})
		}
		tb.Rows = append(tb.Rows, Row{Failing: !c.OK, Cells: []string{addr, words.FamilyName(c.Family), result, detail}})
	}
	if len(tb.Rows) == 0 {
		return Section{}
	}
	s.Blocks = append([]Block{Para{Only: documents, Text: intro}, tb}, details...)
	return s
}

// testsSection is every comparison the verdict made: an appendix of the
// documents.
func testsSection(v *View) Section {
	tests := v.r.Verdict.Tests
	if len(tests) == 0 {
		return Section{}
	}
	s := Section{ID: "tests", Nav: "Verdict tests", Heading: fmt.Sprintf("Appendix: how the verdict was reached (%d exact test%s)", len(tests), words.Plural(len(tests)))}
	tb := Table{Only: documents, Cols: []Col{{Head: "Scope", Label: true}, {Head: "Failed", Right: true}, {Head: "Failure rate (95% CI)"},
		{Head: "The rest failed", Right: true}, {Head: "p"}, {Head: "Significant"}}}
	for _, t := range tests {
		restRate, sig := 0.0, "no"
		if t.RestTotal > 0 {
			restRate = float64(t.RestFailed) / float64(t.RestTotal)
		}
		if t.Significant {
			sig = "yes"
		}
		tb.Rows = append(tb.Rows, Row{Failing: t.Significant, Cells: []string{t.Scope, fmt.Sprintf("%d of %d", t.Failed, t.Requests),
			rateCI(t.Failed, t.Requests, t.FailureRate), fmt.Sprintf("%d of %d (%s)", t.RestFailed, t.RestTotal, pct(restRate, t.RestTotal)), words.PValue(t.P), sig}})
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: testsHow(v)}, tb)
	return s
}

// clientSection is the local addresses and ports the gateway saw: what
// finds the run in its access log.
func clientSection(v *View) Section {
	s := Section{Heading: "Client", ID: "client"}
	if len(v.r.Client.LocalAddresses) == 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "No connection was established, so there is no local address or port to report."})
		return s
	}
	s.Blocks = append(s.Blocks,
		List{Only: documents, Items: []Item{{Lead: "Local addresses", Text: strings.Join(v.r.Client.LocalAddresses, ", ")}, {Lead: "Local ports", Text: portWords(v.r.Client)}}},
		Para{Only: documents, Text: "A gateway's access log shows these as the client address and port, unless a NAT or proxy sits between this machine and the gateway (then it shows the NAT's public address and ports)."})
	return s
}

// inputsSection is the reports a merged one was made of, and what merging
// them noted; it goes under the run's section, without a heading.
func inputsSection(v *View) Section {
	var s Section
	if ins := v.r.Inputs; len(ins) > 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: fmt.Sprintf("Merged from %d report%s:", len(ins), words.Plural(len(ins)))})
		tb := Table{Only: documents, Cols: []Col{{Head: "Report"}, {Head: "Vantage"}, {Head: "From (UTC)"}, {Head: "To (UTC)"},
			{Head: "Requests", Right: true}, {Head: "Failed", Right: true}, {Head: "Dropped", Right: true}, {Head: "Run"}, {Head: "Command"}}}
		for _, in := range ins {
			tb.Rows = append(tb.Rows, Row{Cells: []string{in.File, cmp.Or(in.Vantage, "-"), utc(in.StartedAt), utc(in.EndedAt), strconv.FormatInt(in.Requests, 10),
				strconv.FormatInt(in.Failed, 10), strconv.FormatInt(in.Dropped, 10), ended(in.Interrupted), cmp.Or(shellJoin(in.Command), "-")}})
		}
		if !slices.ContainsFunc(ins, func(in report.Input) bool { return in.Vantage != "" }) { // one vantage, or none named: no column for it
			tb.Cols = slices.Delete(tb.Cols, 1, 2)
			for i := range tb.Rows {
				tb.Rows[i].Cells = slices.Delete(tb.Rows[i].Cells, 1, 2)
			}
		}
		s.Blocks = append(s.Blocks, tb)
	}
	if len(v.r.Notes) > 0 {
		notes := bullets(v.r.Notes, 0)
		notes.Only = documents // a terminal has them in its header
		s.Blocks = append(s.Blocks, notes)
	}
	return s
}

// dnsSection is each host's latest answer and the changes seen during the
// run: a line per host on a terminal, its changes under it; a table, then
// the changes in order, in the documents.
func dnsSection(v *View) Section {
	s := Section{Heading: "DNS answers", ID: "dns", Nav: "DNS"}
	if len(v.DNS) == 0 {
		s.Blocks = append(s.Blocks, Para{Only: documents, Text: "No host was resolved."})
		return s
	}
	hosts := List{Only: FormatText, Marked: true}
	tb := Table{Only: documents, Marks: true, Cols: []Col{{Head: "Host", Label: true}, {Head: "Resolved by"}, {Head: "Addresses (latest answer)"}, {Head: "Changes during the run"}}}
	var missed []Block
	var changes List
	for _, d := range v.DNS {
		it := Item{Failing: d.Failed, Text: d.Host + " (" + d.Where + "): " + d.Addresses}
		for _, c := range d.Changes {
			it.Subs = append(it.Subs, "changed at "+clock(c.At.Time)+": "+c.What)
			changes.Items = append(changes.Items, Item{Text: utc(c.At) + " — " + d.Host + ": " + c.What})
		}
		if d.Missed != "" {
			it.Subs = append(it.Subs, d.Missed)
			missed = append(missed, Para{Only: documents, Text: d.Host + ": " + d.Missed + "."})
		}
		hosts.Items = append(hosts.Items, it)
		ch := "no change"
		if n := len(d.Changes); n > 0 {
			ch = fmt.Sprintf("%d (below)", n)
		}
		tb.Rows = append(tb.Rows, Row{Failing: d.Failed, Cells: []string{d.Host, d.Where, d.Addresses, ch}})
	}
	s.Blocks = append(append(s.Blocks, hosts, tb), missed...)
	if len(changes.Items) == 0 {
		return withBlocks(s, Para{Only: documents, Text: "No DNS change was seen during the run."})
	}
	changes.Only = documents
	return withBlocks(s, Para{Only: documents, Text: "Changes seen by re-resolving during the run (new addresses were probed from then on; vanished ones were no longer probed):"}, changes)
}

// withBlocks is s with blocks added.
func withBlocks(s Section, blocks ...Block) Section {
	s.Blocks = append(s.Blocks, blocks...)
	return s
}

// vantagesSection is what the runs from each place saw (--vantage), in a
// merge of runs from several: a row per vantage, and under it a row per
// address, marked where the verdict names the address from there.
func vantagesSection(v *View) Section {
	s := Section{Heading: "By vantage point", ID: "vantages", Nav: "Vantages"}
	r := v.r
	if len(r.Vantages) < 2 {
		return s
	}
	named := map[[3]string]bool{}
	for _, t := range r.Verdict.Vantages {
		named[[3]string{t.Vantage, t.Target, t.Address}] = true
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Vantage", Label: true}, {Head: "Runs", Right: true, Prio: 2}, {Head: "Address"},
		{Head: "Family", Prio: 1}, {Head: "Requests", Right: true}, {Head: "Failed", Right: true},
		{Right: true, Only: FormatText}, {Head: "Failure rate", Right: true, Only: documents}}}
	row := func(failing bool, name, runs, label, family string, requests, failed int64) Row {
		rate := "-"
		if requests > 0 {
			rate = strconv.FormatFloat(float64(failed)*100/float64(requests), 'f', 1, 64) + "%"
		}
		return Row{Failing: failing, Cells: []string{name, runs, label, family,
			strconv.FormatInt(requests, 10), strconv.FormatInt(failed, 10), rate, rate}}
	}
	for _, vs := range r.Vantages {
		at := len(tb.Rows)
		tb.Rows = append(tb.Rows, row(false, cmp.Or(vs.Name, "(none)"), strconv.Itoa(vs.Runs), "all", "", vs.Requests, vs.Failed))
		for _, e := range vs.Endpoints {
			label := e.Address
			if v.MultiURL {
				label += " (" + v.short[e.Target] + ")"
			}
			failing := named[[3]string{vs.Name, e.Target, e.Address}]
			tb.Rows[at].Failing = tb.Rows[at].Failing || failing
			tb.Rows = append(tb.Rows, row(failing, "", "", label, words.FamilyName(e.Family), e.Requests, e.Failed))
		}
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "What the runs from each place saw (--vantage); a row marked ✗ fails more from there than from the other vantages."}, tb)
	return s
}

// logsSection is the queries that find the run's requests in the logs of
// the gateway that answered (of each gateway pinprobe knows, when none
// was recognised), and what to filter any other access log on.
func logsSection(v *View) Section {
	l, d := &v.Logs, documents
	s := Section{Heading: "Find these requests in your logs", ID: "logs", Nav: "Log queries", Blocks: []Block{Para{Only: d,
		Text: "pinprobe sent every request between " + utc(v.r.StartedAt) + " and " + utc(v.r.EndedAt) + " by this machine's clock. The queries below add " + words.Num(logMargin.Seconds()) + " s on each side; widen the window if that clock may be off."}}}
	add := func(b ...Block) { s.Blocks = append(s.Blocks, b...) }
	if !l.Known {
		add(Para{Only: d, Text: "pinprobe recognised no gateway's error page in the failures, so here are the queries for the gateways it knows; use the one in front of this host."})
	}
	// query is g's query of kind, after its title when titled (else the
	// paragraph before it says what it finds), when g has one.
	query := func(g *GatewayLogs, kind string, titled bool) {
		if q := g.Query(kind); q != nil {
			if titled {
				add(Para{Only: d, Text: q.Title + ":"})
			}
			add(Code{Only: d, Info: q.Lang, Text: q.Text})
		}
	}
	for i := range l.Gateways {
		g := &l.Gateways[i]
		switch g.Name {
		case GatewayAzure:
			add(Para{Only: d, Title: "Azure Application Gateway v2: AGWAccessLogs", Text: "For a gateway whose diagnostic setting sends its access log to a Log Analytics workspace in resource-specific mode. Which listener and backend (ServerRouted) answered pinprobe's requests, and with what:"})
			query(g, LogAGWSummary, false)
			query(g, LogAGWRows, true)
			query(g, LogAGWFailing, true)
			if l.PortFilter {
				add(Para{Only: d, Text: "If these return nothing, delete the port line: a NAT or proxy between this machine and the gateway changes the client port."})
			}
			add(Para{Only: d, Title: "Azure Application Gateway: AzureDiagnostics", Text: "For a diagnostic setting in the older Azure diagnostics mode, where the access log lands in the shared AzureDiagnostics table:"})
			query(g, LogAzureDiagnostics, false)
		case GatewayAWS:
			add(Para{Only: d, Title: "AWS Application Load Balancer: access logs in Athena", Text: "For an ALB whose access logs go to S3, queried through the alb_logs table of AWS's documented Athena definition. target_ip and target_port name the target that answered; an elb_status_code without a target_status_code is the load balancer's own error:"})
			query(g, LogALB, false)
			query(g, LogALBFailing, true)
		case GatewayNginx:
			add(Para{Only: d, Title: "nginx", Text: `nginx writes why it answered 502/504 to its error log, with the client and the upstream it tried (connect() failed (111: Connection refused) while connecting to upstream, client: …, upstream: "http://[2001:db8::9]:8080/"). Its times are the server's local time:`})
			query(g, LogNginx, false)
			add(Para{Only: d, Text: "To see the upstream of every request in the access log, add $upstream_addr $upstream_status $request_id to its log_format."})
		case GatewayHAProxy:
			add(Para{Only: d, Title: "HAProxy", Text: "With option httplog, each line starts with the client ip:port and names backend/server; the termination state (SC--: the server refused the connection, sH--: it timed out before the headers) says who ended the request:"})
			query(g, LogHAProxy, false)
			query(g, LogHAProxyFailing, true)
		}
	}
	add(Para{Only: d, Title: "Any other gateway, load balancer or backend", Text: "Filter its access log on:"})
	filters := List{Only: d}
	for _, f := range l.Filters {
		filters.Items = append(filters.Items, Item{Lead: f.Name, Spans: f.Value})
	}
	add(filters)
	return s
}
