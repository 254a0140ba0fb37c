package render

import (
	"crypto/sha256"
	"encoding/base64"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"

	"golang.org/x/net/html"
)

func renderHTML(t *testing.T, r *report.Report) string {
	t.Helper()
	return Written(t, HTML, r)
}

func TestHTMLGolden(t *testing.T) {
	got := renderHTML(t, fixture.GoldenReport(t))
	CheckGolden(t, filepath.Join("testdata", "html.golden"), got)
	if again := renderHTML(t, fixture.GoldenReport(t)); again != got {
		t.Errorf("two renderings of the same report differ")
	}
}

// parseHTML parses a page as a browser would.
func parseHTML(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatalf("parse html: %v", err)
	}
	return doc
}

// walk calls fn on n and every node below it, in document order.
func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " "+class+" ")
}

// find returns the elements below n that match.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(m *html.Node) {
		if m != n && m.Type == html.ElementNode && match(m) {
			out = append(out, m)
		}
	})
	return out
}

// titledList is the items of the list under the heading title in n.
func titledList(n *html.Node, title string) []*html.Node {
	for _, div := range find(n, classed("list")) {
		if h := find(div, tagged("h2")); len(h) > 0 && textOf(h[0]) == title {
			return find(div, tagged("li"))
		}
	}
	return nil
}

// connPorts is the client ports of the failing connections' tables in n:
// the first cell after each row's mark.
func connPorts(n *html.Node) []string {
	var ports []string
	for _, tr := range find(n, tagged("tr")) {
		if tds := find(tr, tagged("td")); len(tds) > 1 && hasClass(tds[0], "mark-col") {
			ports = append(ports, textOf(tds[1]))
		}
	}
	return ports
}

func byID(doc *html.Node, id string) *html.Node {
	if els := find(doc, func(n *html.Node) bool { return attr(n, "id") == id }); len(els) == 1 {
		return els[0]
	}
	return nil
}

func tagged(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag }
}

func classed(class string) func(*html.Node) bool {
	return func(n *html.Node) bool { return hasClass(n, class) }
}

// textOf is the text below n.
func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(m *html.Node) {
		if m.Type == html.TextNode {
			b.WriteString(m.Data)
		}
	})
	return b.String()
}

// chartCounts is what a page's charts hold, as the tests count it.
type chartCounts struct {
	timelineSeries, failingSeries, failColumns int
	mixBars                                    []string // "family:segments"
	latencySeries, latencyMarkers              int
}

func countCharts(t *testing.T, doc *html.Node) chartCounts {
	t.Helper()
	var c chartCounts
	for _, id := range []string{"timeline-chart", "mix-chart", "latency-chart"} {
		svg := byID(doc, id)
		if svg == nil {
			t.Fatalf("no svg#%s in the page", id)
		}
		if svg.Data != "svg" || attr(svg, "role") != "img" || attr(svg, "aria-labelledby") == "" {
			t.Errorf("#%s is <%s role=%q aria-labelledby=%q>; want an accessible <svg role=img>", id, svg.Data, attr(svg, "role"), attr(svg, "aria-labelledby"))
		}
		for _, ref := range strings.Fields(attr(svg, "aria-labelledby")) {
			if el := byID(doc, ref); el == nil || strings.TrimSpace(textOf(el)) == "" {
				t.Errorf("#%s is labelled by #%s, which is missing or empty", id, ref)
			}
		}
		switch id {
		case "timeline-chart":
			for _, g := range find(svg, classed("series")) {
				c.timelineSeries++
				if hasClass(g, "failing") {
					c.failingSeries++
				}
				c.failColumns += len(find(g, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "fail") }))
			}
		case "mix-chart":
			for _, g := range find(svg, classed("bar")) {
				c.mixBars = append(c.mixBars, attr(g, "data-family")+":"+strconv.Itoa(len(find(g, classed("seg")))))
			}
		case "latency-chart":
			for _, g := range find(svg, classed("series")) {
				c.latencySeries++
				c.latencyMarkers += len(find(g, func(n *html.Node) bool {
					return hasClass(n, "p50") || hasClass(n, "p90") || hasClass(n, "p99") || hasClass(n, "max")
				}))
			}
		}
	}
	return c
}

// wantGoldenCharts is what the golden report's charts hold: four endpoints,
// two of them failing; 2001:db8::7 fails in each of its 10 one-second
// columns (3 of 4 requests) and 198.51.100.20 in its first 6 (one reset or
// refusal each); two families, IPv4 with 200, connect_refused and reset,
// IPv6 with 200 and 502; four markers per endpoint.
var wantGoldenCharts = chartCounts{timelineSeries: 4, failingSeries: 2, failColumns: 16,
	mixBars: []string{"IPv4:3", "IPv6:2"}, latencySeries: 4, latencyMarkers: 16}

func checkGoldenCharts(t *testing.T, doc *html.Node) {
	t.Helper()
	got := countCharts(t, doc)
	if got.timelineSeries != wantGoldenCharts.timelineSeries || got.failingSeries != wantGoldenCharts.failingSeries ||
		got.failColumns != wantGoldenCharts.failColumns || got.latencySeries != wantGoldenCharts.latencySeries ||
		got.latencyMarkers != wantGoldenCharts.latencyMarkers ||
		strings.Join(got.mixBars, " ") != strings.Join(wantGoldenCharts.mixBars, " ") {
		t.Errorf("charts hold %+v; want %+v", got, wantGoldenCharts)
	}
}

// TestHTMLStructure: the golden page parses into what it should hold (the
// sections, the charts with a series per endpoint, failing rows marked),
// loads nothing, runs nothing, and its style sheet matches the hash its
// Content-Security-Policy allows.
func TestHTMLStructure(t *testing.T) {
	page := renderHTML(t, fixture.GoldenReport(t))
	doc := parseHTML(t, page)
	checkSelfContained(t, doc)
	checkGoldenCharts(t, doc)
	for _, id := range []string{"verdict", "run", "dns", "timeline", "families", "endpoints", "who", "latency", "phases", "samples", "tests", "logs"} {
		if byID(doc, id) == nil {
			t.Errorf("no #%s section", id)
		}
	}
	if got := len(find(doc, classed("banner"))); got != 1 {
		t.Errorf("%d interrupted banners; want 1", got)
	}
	// Failing rows: the IPv4 and IPv6 families, 2001:db8::7 and
	// 198.51.100.20 in the endpoint and phase tables, the DNS host that did
	// not resolve, and the three failed samples of each failing endpoint.
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "fail") })
	if len(rows) != 13 {
		t.Errorf("%d failing table rows; want 13", len(rows))
	}
	for _, row := range rows {
		if !strings.Contains(textOf(row), "✗") {
			t.Errorf("failing row without ✗: %q", textOf(row))
		}
	}
	suspects := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "suspect") })
	if len(suspects) != 1 || !strings.Contains(textOf(suspects[0]), "2001:db8::7") {
		t.Errorf("suspect rows %d; want one, 2001:db8::7", len(suspects))
	}
	pres := find(doc, tagged("pre"))
	body := false
	for _, p := range pres {
		body = body || strings.Contains(textOf(p), "<center>Microsoft-Azure-Application-Gateway/v2</center>")
	}
	if !body {
		t.Errorf("no <pre> holds the 502 body as text")
	}
	if got := len(find(doc, tagged("details"))); got < 4 {
		t.Errorf("%d <details>; want the headers of each of 4 endpoints' samples folded", got)
	}
	if strings.Contains(page, "ApplicationGatewayAffinity=5f1c0ffee") {
		t.Errorf("HTML report shows a Set-Cookie value")
	}
}

// checkSelfContained: no script, no fetch of anything (only in-page links
// and the in-SVG pattern), a CSP that forbids both, and a style sheet whose
// hash the CSP allows.
func checkSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	var styles []string
	csp := ""
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "iframe", "object", "embed", "img", "link", "base", "form", "input":
			t.Errorf("page has a <%s> element", n.Data)
		case "style":
			styles = append(styles, textOf(n))
		case "meta":
			if strings.EqualFold(attr(n, "http-equiv"), "Content-Security-Policy") {
				csp = attr(n, "content")
			}
		}
		for _, a := range n.Attr {
			switch {
			case strings.HasPrefix(a.Key, "on"):
				t.Errorf("<%s> has an event handler %s", n.Data, a.Key)
			case a.Key == "href" && !strings.HasPrefix(a.Val, "#"), a.Key == "src", a.Key == "xlink:href", a.Key == "style":
				t.Errorf("<%s %s=%q>: the page must link to nothing outside itself", n.Data, a.Key, a.Val)
			case strings.Contains(a.Val, "url(") && a.Val != "url(#no-response)":
				t.Errorf("<%s %s=%q> refers to a resource", n.Data, a.Key, a.Val)
			}
		}
	})
	if len(styles) != 1 {
		t.Fatalf("%d <style> elements; want 1", len(styles))
	}
	if strings.Contains(styles[0], "url(") || strings.Contains(styles[0], "@import") {
		t.Errorf("the style sheet refers to a resource")
	}
	sum := sha256.Sum256([]byte(styles[0]))
	want := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if csp != want {
		t.Errorf("Content-Security-Policy = %q; want %q", csp, want)
	}
}

// TestHTMLHostileContent: whatever the network or the command line sent
// stays text: the page parses into the same elements, shows it whole, and
// escapes control and reordering characters as the other formats do.
func TestHTMLHostileContent(t *testing.T) {
	page := renderHTML(t, fixture.HostileReport(t))
	doc := parseHTML(t, page)
	checkSelfContained(t, doc)
	checkGoldenCharts(t, doc)
	for _, el := range []string{"b", "i", "svg"} {
		for _, n := range find(doc, tagged(el)) {
			if el != "svg" || !hasClass(n, "chart") && !hasClass(n, "ci") {
				t.Errorf("hostile text became a <%s> element: %q", el, textOf(n))
			}
		}
	}
	text := textOf(doc)
	for _, want := range []string{
		"</pre><script>alert(1)</script><pre>\\x1b[31mred\nend",
		`evil" onmouseover="alert(2)" <b>bold</b>`,
		"no such host</td><img src=x onerror=alert(3)>",
		"X-Evil: </pre></details><script>alert(4)</script>",
		"boom <svg onload=alert(5)>",
		`id\u{202e}evil`,
		"Failures <script>alert(6)</script> here",
		`'"><style>body{display:none}</style>'`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
	if strings.ContainsAny(page, "\x1b\u202e") {
		t.Errorf("the page holds a raw escape or reordering character")
	}
}

// TestEmptyReport: a run that sent nothing still makes a page, without
// charts, and a Markdown document, each titled.
func TestEmptyReport(t *testing.T) {
	r := noData()
	md := renderMarkdown(t, r)
	if !strings.HasPrefix(md, "# pinprobe: no data — no host\n") {
		t.Errorf("empty report starts %q", md[:min(len(md), 60)])
	}
	fixture.CheckMarkdown(t, md)
	doc := parseHTML(t, renderHTML(t, r))
	checkSelfContained(t, doc)
	if got := len(find(doc, classed("chart"))); got != 0 {
		t.Errorf("%d charts for an empty report; want 0", got)
	}
	if title := textOf(find(doc, tagged("title"))[0]); title != "pinprobe: no data — no host" {
		t.Errorf("title %q", title)
	}
}

func TestHTMLForFormat(t *testing.T) {
	render := Must(ForFormat("html", Options{}))
	buf := Written(t, render, fixture.GoldenReport(t))
	if !strings.HasPrefix(buf, "<!DOCTYPE html>\n") || !strings.HasSuffix(buf, "</html>\n") {
		t.Errorf("html format does not write a whole page: %.60q … %q", buf, buf[max(0, len(buf)-20):])
	}
}

// TestTimelineChartMergesColumns: a long run's intervals merge so a strip has
// at most maxColumns columns, every failure still shows, and the axis is
// labelled at round clock times.
func TestTimelineChartMergesColumns(t *testing.T) {
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	n := 1000
	req, fail := make([]int64, n), make([]int64, n)
	for i := range req {
		req[i] = 10
	}
	fail[123] = 1 // one failure among 10,000 requests
	fail[999] = 10
	r := &report.Report{
		Endpoints: []report.Endpoint{{Stats: report.Stats{Requests: 10000, Failed: 11}, Target: "http://h/", Address: "192.0.2.1"}},
		Timeline:  report.Timeline{IntervalS: 0.5, Start: report.Time{Time: start}, Series: []report.Series{{Address: "192.0.2.1", Target: "http://h/", Requests: req, Failed: fail}}},
		Families:  map[string]*report.Stats{},
	}
	v := NewView(r)
	c := newTimelineChart(v)
	if c == nil || len(c.Rows) != 1 {
		t.Fatalf("chart %+v; want one row", c)
	}
	row := c.Rows[0]
	if got := len(row.Fails); got != 2 {
		t.Errorf("%d failure columns; want 2", got)
	}
	if h := row.Fails[0].H; h != "2" {
		t.Errorf("one failure in a column of 70 requests is %s units high; want the 2-unit minimum", h)
	}
	if !strings.HasPrefix(row.Fails[0].Title, "192.0.2.1, 20:43:59.500–20:44:03.000 UTC: 1 of 70 failed") {
		t.Errorf("first failure column says %q", row.Fails[0].Title)
	}
	if row.Sent != "M190 0h410v24h-410z" {
		t.Errorf("sent path %q; want one run across the plot", row.Sent)
	}
	var labels []string
	for _, tk := range c.Axis.Ticks {
		labels = append(labels, tk.Label)
	}
	if got, want := strings.Join(labels, " "), "20:44 20:46 20:48 20:50"; got != want {
		t.Errorf("time ticks %q; want %q", got, want)
	}
	if !strings.Contains(string(c.Axis.Title), "3.5 s") {
		t.Errorf("axis title %q; want one column per 3.5 s", c.Axis.Title)
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0.3, 40, "0.2 0.5 1 2 5 10 20 50"},
		{1.5, 9000, "1 10 100 1000 10000"}, // 1-2-5 would be 13 ticks
		{20, 1200, "20 50 100 200 500 1000 2000"},
	}
	for _, tt := range tests {
		var got []string
		for _, v := range logTicks(tt.lo, tt.hi) {
			got = append(got, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("logTicks(%v, %v) = %s; want %s", tt.lo, tt.hi, strings.Join(got, " "), tt.want)
		}
	}
}

// TestLatencyChartScale: a wide range of latencies is drawn on a log
// scale, a narrow one on a linear scale from zero.
func TestLatencyChartScale(t *testing.T) {
	mk := func(p50, max float64) *report.Report {
		return &report.Report{
			Families: map[string]*report.Stats{},
			Endpoints: []report.Endpoint{
				{Stats: report.Stats{Requests: 10, LatencyMS: report.Latency{P50: p50, P90: p50 * 1.2, P99: p50 * 1.5, Max: p50 * 1.5}}, Target: "http://h/", Address: "192.0.2.1"},
				{Stats: report.Stats{Requests: 10, LatencyMS: report.Latency{P50: p50 * 2, P90: max / 2, P99: max / 1.5, Max: max}}, Target: "http://h/", Address: "192.0.2.2"},
				{Target: "http://h/", Address: "192.0.2.3"},
			},
		}
	}
	tests := []struct {
		p50, max float64
		log      bool
		ticks    string
	}{
		{1, 8, false, "0 ms 2 ms 4 ms 6 ms 8 ms"},
		{0.4, 3000, true, "0.1 ms 1 ms 10 ms 100 ms 1 s 10 s"},
		{20, 900, true, "20 ms 50 ms 100 ms 200 ms 500 ms 1 s"},
	}
	for _, tt := range tests {
		r := mk(tt.p50, tt.max)
		c := newLatencyChart(NewView(r))
		var labels []string
		for _, tk := range c.Axis.Ticks {
			labels = append(labels, tk.Label)
		}
		if log := strings.HasSuffix(c.Title, "(log scale)"); log != tt.log || strings.Join(labels, " ") != tt.ticks {
			t.Errorf("p50 %v, max %v: log %v, ticks %q; want log %v, ticks %q", tt.p50, tt.max, log, strings.Join(labels, " "), tt.log, tt.ticks)
		}
		if n := len(c.Rows); n != 3 || !c.Rows[2].None {
			t.Errorf("p50 %v: %d rows, the last None=%v; want 3, the endpoint without requests said so", tt.p50, n, n == 3 && c.Rows[2].None)
		}
		first, _ := strconv.ParseFloat(c.Axis.Ticks[0].X, 64)
		last, _ := strconv.ParseFloat(c.Axis.Ticks[len(c.Axis.Ticks)-1].X, 64)
		if first != plotX0 || last != plotX1 {
			t.Errorf("p50 %v: ticks run from %v to %v; want the plot's %v to %v", tt.p50, first, last, plotX0, plotX1)
		}
	}
}

// TestHTMLInside: a run with an address fault and an instance fault behind
// another address shows both in the verdict box (every suspect with its
// kind, every note, the gate), the instances as a table and a chart with
// the suspect marked, the failing connections with their ports and the
// query over them, and the release gate's checks, the failing ones first.
func TestHTMLInside(t *testing.T) {
	r := insideReport(t)
	v := NewView(r)
	doc := parseHTML(t, renderHTML(t, r))
	checkSelfContained(t, doc)
	for _, id := range []string{"verdict", "run", "instances", "connections", "gate", "logs", "instances-chart-1"} {
		if byID(doc, id) == nil {
			t.Errorf("no #%s", id)
		}
	}
	box := byID(doc, "verdict")
	var suspects []string
	for _, li := range titledList(box, "Suspects") {
		suspects = append(suspects, norm(textOf(li)))
	}
	wantSuspects := []string{"address 2001:db8::1 IPv6: answers 502",
		"instance X-Served-By: gw-3 behind 192.0.2.2 IPv4: answers 502; on 192.0.2.2 ×12; 3 of 12 connections failed"}
	if len(suspects) != len(wantSuspects) {
		t.Fatalf("verdict box lists suspects %q; want %d", suspects, len(wantSuspects))
	}
	for i, w := range wantSuspects {
		if !strings.HasPrefix(suspects[i], w) {
			t.Errorf("suspect %d is %q; want it to start %q", i, suspects[i], w)
		}
	}
	if notes := titledList(box, "Also found"); len(notes) != len(r.Verdict.Notes) {
		t.Errorf("verdict box notes %d; want %d", len(notes), len(r.Verdict.Notes))
	} else {
		for i, li := range notes {
			if textOf(li) != r.Verdict.Notes[i] {
				t.Errorf("note %d %q; want %q", i, textOf(li), r.Verdict.Notes[i])
			}
		}
	}
	gateLines := find(box, func(n *html.Node) bool {
		return n.Data == "p" && strings.HasPrefix(textOf(n), "Release gate "+v.Gate.Summary)
	})
	if len(gateLines) != 1 || !strings.Contains(textOf(gateLines[0]), "✗") {
		t.Errorf("verdict box gate line %d; want one saying %q and its failed checks", len(gateLines), v.Gate.Summary)
	}

	inst := byID(doc, "instances")
	rows := find(inst, func(n *html.Node) bool { return n.Data == "tr" && len(find(n, tagged("td"))) > 0 })
	if len(rows) != 4 {
		t.Fatalf("%d instance rows; want 4", len(rows))
	}
	for _, row := range rows {
		text := textOf(row)
		if suspect := hasClass(row, "suspect"); suspect != strings.Contains(text, "gw-3") || !strings.Contains(text, "192.0.2.2 ×12") {
			t.Errorf("instance row %q: suspect %v; want gw-3 alone a suspect, each on 192.0.2.2 ×12", text, suspect)
		}
	}
	chart := byID(doc, "instances-chart-1")
	series := find(chart, classed("series"))
	bars := find(chart, classed("rate-bar"))
	if len(series) != 4 || len(bars) != 1 || len(find(chart, classed("suspect"))) != 1 {
		t.Errorf("instance chart: %d series, %d failure bars, %d suspects; want 4, 1, 1", len(series), len(bars), len(find(chart, classed("suspect"))))
	}

	conns := byID(doc, "connections")
	if ports := connPorts(conns); strings.Join(ports, " ") != "40103 40107 40111" {
		t.Errorf("failing connections' ports %q; want 40103 40107 40111", ports)
	}
	pres := find(conns, tagged("pre"))
	if len(pres) != 1 || !strings.Contains(textOf(pres[0]), "Port in (40103, 40107, 40111)") {
		t.Errorf("failing connections: %d queries; want the KQL over their three ports", len(pres))
	}

	gate := byID(doc, "gate")
	checks := find(gate, func(n *html.Node) bool { return n.Data == "tr" && len(find(n, tagged("td"))) > 0 })
	if len(checks) != len(r.Thresholds) {
		t.Errorf("%d gate rows; want %d", len(checks), len(r.Thresholds))
	}
	passed := false
	for _, row := range checks {
		failed := hasClass(row, "fail")
		if failed && passed {
			t.Errorf("gate row %q fails after one that passed; want the failing ones first", textOf(row))
		}
		passed = passed || !failed
		if failed != strings.Contains(textOf(row), "✗") {
			t.Errorf("gate row %q: failing %v but ✗ %v", textOf(row), failed, !failed)
		}
	}

	run := textOf(byID(doc, "run"))
	for _, want := range []string{v.Run.Settled, "2 could not be sent by this machine (client errors)"} {
		if !strings.Contains(run, want) {
			t.Errorf("the run section lacks %q", want)
		}
	}
	if got := len(find(doc, classed("banner"))); got != 1 {
		t.Errorf("%d banners; want one, stopped early", got)
	}
	if tests := textOf(byID(doc, "tests")); !strings.Contains(tests, "each instance") {
		t.Errorf("the tests section does not say the instances were tested")
	}
}

// TestHTMLMerged: a merged report lists its inputs and the notes on where
// the merge is less than exact, as the Markdown and text reports do.
func TestHTMLMerged(t *testing.T) {
	r := fixture.GoldenReport(t)
	at := r.StartedAt
	r.Inputs = []report.Input{
		{File: "eu.json", Version: "0.1.0", Command: []string{"pinprobe", "-r", "10", "https://sign.example.com/"}, StartedAt: at, EndedAt: r.EndedAt, Requests: 65, Failed: 20},
		{File: "us.json", Version: "0.1.0", Command: []string{"pinprobe", "-r", "10", "https://sign.example.com/"}, StartedAt: at, EndedAt: r.EndedAt, Requests: 65, Failed: 16, Interrupted: true},
	}
	r.Notes = []string{"us.json was interrupted: it covers less time than planned."}
	run := byID(parseHTML(t, renderHTML(t, r)), "run")
	text := textOf(run)
	for _, want := range []string{"Merged from 2 reports", "eu.json", "us.json", "interrupted", r.Notes[0], "pinprobe -r 10 https://sign.example.com/"} {
		if !strings.Contains(text, want) {
			t.Errorf("the run section lacks %q", want)
		}
	}
	md := renderMarkdown(t, r)
	fixture.CheckMarkdown(t, md)
	for _, want := range []string{"Merged from 2 reports:", "| us.json ", "- us.json was interrupted"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown report lacks %q", want)
		}
	}
	tx := Written(t, Text(Options{}), r)
	for _, want := range []string{"MERGED from 2 reports: eu.json, us.json", " · us.json was interrupted"} {
		if !strings.Contains(tx, want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
}

// TestHTMLLogsFollowTheGateway: the log queries are those of the gateway
// whose error pages the failures carried; with none recognised, every
// gateway pinprobe knows is offered; the failing connections get the
// queries over their ports of each gateway that logs the client port.
func TestHTMLLogsFollowTheGateway(t *testing.T) {
	const (
		azureV2   = "Azure Application Gateway v2: AGWAccessLogs"
		azureDiag = "Azure Application Gateway: AzureDiagnostics"
		alb       = "AWS Application Load Balancer: access logs in Athena"
	)
	tests := []struct {
		producer string
		want     []string
		failing  int // queries over the failing connections' ports
	}{
		{GatewayAzure, []string{azureV2, azureDiag}, 1},
		{GatewayAWS, []string{alb}, 1},
		{GatewayNginx, []string{GatewayNginx}, 0},
		{GatewayHAProxy, []string{GatewayHAProxy}, 1},
		{"Cloudflare", nil, 0},
		{"", []string{azureV2, azureDiag, alb, GatewayNginx, GatewayHAProxy}, 3},
	}
	for _, tt := range tests {
		r := insideReport(t)
		for i := range r.Fingerprints {
			r.Fingerprints[i].Producer = tt.producer
		}
		doc := parseHTML(t, renderHTML(t, r))
		logs := byID(doc, "logs")
		var heads []string
		for _, h := range find(logs, tagged("h3")) {
			heads = append(heads, textOf(h))
		}
		want := append(slices.Clone(tt.want), "Any other gateway, load balancer or backend")
		if !slices.Equal(heads, want) {
			t.Errorf("producer %q: log sections %q; want %q", tt.producer, heads, want)
		}
		if got := len(find(byID(doc, "connections"), tagged("pre"))); got != tt.failing {
			t.Errorf("producer %q: %d queries over the failing connections; want %d", tt.producer, got, tt.failing)
		}
		var filters []string
		for _, li := range find(logs, tagged("li")) {
			if s := find(li, tagged("strong")); len(s) > 0 {
				filters = append(filters, textOf(s[0]))
			}
		}
		if !slices.Contains(filters, "X-Request-Id:") || !slices.Contains(filters, "Status:") {
			t.Errorf("producer %q: filters %q; want X-Request-Id and Status among them", tt.producer, filters)
		}
	}
}

// TestHTMLNotesSayMore: "Also found" lists each note once, and none that
// repeats word for word what the summary already says of the suspects.
func TestHTMLNotesSayMore(t *testing.T) {
	r := fixture.GoldenReport(t)
	sentences := strings.SplitAfter(r.Verdict.Summary, ". ")
	fresh := "198.51.100.20 was slow to connect between 20:43:02 and 20:43:04 UTC."
	r.Verdict.Notes = []string{r.Verdict.Summary, strings.TrimSpace(sentences[0]), fresh, fresh}
	doc := parseHTML(t, renderHTML(t, r))
	var notes []string
	for _, li := range titledList(doc, "Also found") {
		notes = append(notes, textOf(li))
	}
	if !slices.Equal(notes, []string{fresh}) {
		t.Errorf("Also found lists %q; want only %q, once", notes, fresh)
	}
}

// TestNotesSayMoreEveryFormat: the text and Markdown reports, like the
// HTML one, list each of the verdict's notes once and none that repeats
// word for word what the summary says: the summary's first sentence is
// written once (in the detailed verdict: --detail's on a terminal), the
// fresh note once.
func TestNotesSayMoreEveryFormat(t *testing.T) {
	r := fixture.GoldenReport(t)
	first := strings.TrimSpace(strings.SplitAfter(r.Verdict.Summary, ". ")[0])
	fresh := "198.51.100.20 was slow to connect between 20:43:02 and 20:43:04 UTC."
	r.Verdict.Notes = []string{r.Verdict.Summary, first, fresh, fresh}
	for name, write := range map[string]Renderer{"text": Text(Options{Width: 400, Detail: true}), "markdown": Must(ForFormat("markdown", Options{}))} {
		b := Written(t, write, r)
		// Words, not line breaks or Markdown's escapes, are compared.
		out := norm(strings.ReplaceAll(b, `\`, ""))
		if n := strings.Count(out, fresh); n != 1 {
			t.Errorf("%s: the fresh note is written %d times; want once", name, n)
		}
		if n := strings.Count(out, strings.TrimSuffix(first, ".")); n != 1 {
			t.Errorf("%s: the summary's first sentence is written %d times; want once (the notes repeat it):\n%s", name, n, b)
		}
	}
}
