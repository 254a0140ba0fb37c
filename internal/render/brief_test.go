package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"

	"golang.org/x/net/html"
)

// briefLines is how long a brief report may be, in lines of text (in
// HTML, of its text as a browser lays it out at full width: a row, a
// paragraph, a heading, a line of a query): one screen, about 40. The
// richest here (a release gate, an early stop, three suspects) takes 52
// at 80 columns since its query finds every suspect, which lists the
// run's 36 client ports, where the one over a suspect's 3 failing
// connections found a third of the failures.
const briefLines = 52

// renderBrief renders r in format with --brief at width columns.
func renderBrief(t *testing.T, r *report.Report, format string, width int) string {
	t.Helper()
	render := Must(ForFormat(format, Options{Brief: true, Width: width}))
	return Written(t, render, r)
}

// htmlLines counts the lines of a page's text: each heading, paragraph,
// list item, table row and term, and each line of preformatted text.
func htmlLines(t *testing.T, page string) int {
	t.Helper()
	doc := parseHTML(t, page)
	n := 0
	var walk func(*html.Node)
	walk = func(node *html.Node) {
		if node.Type == html.ElementNode {
			switch node.Data {
			case "h1", "h2", "h3", "p", "li", "tr", "dt", "footer":
				n++
			case "pre":
				var b strings.Builder
				for c := node.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.TextNode {
						b.WriteString(c.Data)
					}
				}
				n += strings.Count(strings.TrimRight(b.String(), "\n"), "\n") + 1
				return
			case "style", "head", "svg":
				return
			}
		}
		for c := node.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return n
}

// TestBriefEveryFormat: --brief makes the text, Markdown and HTML reports
// one screen long (briefLines), at 80 and 120 columns, and each keeps
// what the brief promises: the verdict with the failures counted, who
// answered, the family rows, a row per suspect, one failed request of
// each suspect, and the log query; the tables a brief leaves out
// (DNS, phases, timeline, every test) are gone.
func TestBriefEveryFormat(t *testing.T) {
	inside := insideReport(t)
	spread := fixture.GoldenReport(t)
	spread.Verdict = report.Verdict{Status: report.VerdictSpread, Summary: "Failures are spread over every address.",
		Notes: []string{"No IPv6 address (AAAA record) for api.example.com: IPv6 not tested."}}
	for _, tt := range []struct {
		name string
		r    *report.Report
		// want is in every format; samples are the request IDs of the
		// failed requests shown, one per suspect.
		want, samples []string
	}{
		{"inside", inside,
			[]string{"IPv6 (2001:db8::1) answers 502", "Azure Application Gateway", "2001:db8::1", "X-Served-By: gw-3 behind 192.0.2.2",
				"(on 3 of 12 connections)", "AGWAccessLogs", "3 of 13 checks breached, 6 not proven"},
			// 2001:db8::1's, and gw-3's on a failing connection of 192.0.2.2
			[]string{"pinprobe-0123abcd-2-1", "pinprobe-0123abcd-1-3"}},
		{"golden", fixture.GoldenReport(t),
			[]string{"2001:db8::7", "AGWAccessLogs"}, nil},
		// No suspect: the verdict's notes are what there is to say.
		{"spread", spread, []string{"spread", "No IPv6 address (AAAA record) for api.example.com"}, nil},
	} {
		for _, format := range []string{"text", "markdown", "html"} {
			for _, width := range []int{80, 120} {
				if format != "text" && width == 120 {
					continue
				}
				name := fmt.Sprintf("%s/%s/%d", tt.name, format, width)
				out := renderBrief(t, tt.r, format, width)
				lines := strings.Count(out, "\n")
				if format == "html" {
					lines = htmlLines(t, out)
				}
				t.Logf("%s: %d lines", name, lines)
				if lines > briefLines {
					t.Errorf("%s: the brief report has %d lines; want at most %d:\n%s", name, lines, briefLines, out)
				}
				flat := strings.ToLower(norm(out)) // as read, whatever the wrapping
				for _, w := range append(tt.want, tt.samples...) {
					if !strings.Contains(flat, strings.ToLower(w)) {
						t.Errorf("%s: the brief report lacks %q", name, w)
					}
				}
				for _, s := range tt.samples {
					if n := strings.Count(out, s); n != 1 {
						t.Errorf("%s: sample %s shown %d times; want once", name, s, n)
					}
				}
				left := map[string][]string{ // the sections a brief leaves out
					"text":     {"\nDNS ANSWERS\n", "\nWHERE THE TIME WENT", "\nTIMELINE", "\nBY ENDPOINT", "AzureDiagnostics"},
					"markdown": {"## DNS", "## Where the time went", "## Timeline", "## Appendix", "## By endpoint", "AzureDiagnostics"},
					"html":     {`id="dns"`, `id="timeline"`, `id="phases"`, `id="tests"`, `id="endpoints"`, "AzureDiagnostics"},
				}
				for _, not := range left[format] {
					if strings.Contains(out, not) {
						t.Errorf("%s: the brief report has %q", name, not)
					}
				}
				if format == "text" {
					for i, l := range strings.Split(out, "\n") {
						if n := runes(l); n > width {
							t.Errorf("%s: line %d is %d columns: %q", name, i+1, n, l)
						}
					}
					if !strings.HasPrefix(out, "VERDICT "+strings.ToUpper(tt.r.Verdict.Status)) {
						t.Errorf("%s: the brief report does not start with the verdict:\n%.200s", name, out)
					}
				}
				if format == "markdown" {
					fixture.CheckMarkdown(t, out)
				}
			}
		}
	}
}

// TestBriefGolden: the brief text report of the demo's incident at 80 and
// 120 columns, and its brief Markdown, are what testdata holds.
func TestBriefGolden(t *testing.T) {
	r := insideReport(t)
	for _, tt := range []struct {
		format string
		width  int
		file   string
	}{
		{"text", 80, "text-brief-80.golden"},
		{"text", 120, "text-brief-120.golden"},
		{"markdown", 80, "markdown-brief.golden"},
	} {
		CheckGolden(t, filepath.Join("testdata", tt.file), renderBrief(t, r, tt.format, tt.width))
	}
}

// TestCodeLines: a query's long lines are broken at spaces outside
// quotes, a comment keeps its mark on every line (and, moved above its
// code, says "the line below", not "this line"), a shell line goes on
// after a backslash, and nothing is lost.
func TestCodeLines(t *testing.T) {
	for _, tt := range []struct {
		lang, text string
		want       []string
	}{
		{"kusto", `| where Host in~ ("a b c d", "e") or Port in (1, 2, 3)  // the ports: delete this line behind a NAT`,
			[]string{"// the ports: delete the line", "// below behind a NAT", `| where Host in~ ("a b c d",`, `    "e") or Port in (1, 2, 3)`}},
		{"sql", "  AND client_port IN (1, 2)  -- pinprobe's client ports; drop this line behind a NAT",
			[]string{"  -- pinprobe's client ports;", "  -- drop the line below behind", "  -- a NAT", "  AND client_port IN (1, 2)"}},
		{"sh", "grep -E ':(40103|40107) \\[' /var/log/haproxy.log | grep something",
			[]string{`grep -E ':(40103|40107) \[' \`, "    /var/log/haproxy.log | \\", "    grep something"}},
	} {
		got := codeLines(tt.text, tt.lang, 32)
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.lang, got, tt.want)
		}
	}
}

// TestHTMLBriefSelfContained: the brief page, like the full one, loads
// nothing and runs nothing, with the same style sheet allowed by its
// hash; an empty report makes one too.
func TestHTMLBriefSelfContained(t *testing.T) {
	for name, r := range map[string]*report.Report{"inside": insideReport(t), "golden": fixture.GoldenReport(t), "empty": noData()} {
		page := renderBrief(t, r, "html", 0)
		if !strings.HasPrefix(page, "<!DOCTYPE html>\n") || !strings.HasSuffix(page, "</html>\n") {
			t.Errorf("%s: not a whole page", name)
		}
		checkSelfContained(t, parseHTML(t, page))
		if name == "empty" && (strings.Contains(page, `id="suspects"`) || strings.Contains(page, `id="logs"`)) {
			t.Errorf("empty: the page has suspects or log queries")
		}
	}
}

// TestBriefWhoCapped: a brief report lists the first three kinds of
// failed answer and says how many more the full report has.
func TestBriefWhoCapped(t *testing.T) {
	r := fixture.GoldenReport(t)
	r.Fingerprints = append(r.Fingerprints, r.Fingerprints...)
	if n := len(NewView(r).Who); n != 6 {
		t.Fatalf("%d kinds of answer; want 6", n)
	}
	out := renderBrief(t, r, "text", 80)
	if n := strings.Count(out, "\n ✗ 30 × 502") + strings.Count(out, "\n ✗ 3 × "); n != 3 {
		t.Errorf("%d kinds listed; want 3:\n%s", n, out)
	}
	if !strings.Contains(out, "… and 3 more kinds of failure in the full report") {
		t.Errorf("the brief report does not say how many more kinds there are:\n%s", out)
	}
}
