package render

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

func renderMarkdown(t *testing.T, r *report.Report) string {
	t.Helper()
	return Written(t, Must(ForFormat("markdown", Options{})), r)
}

func TestMarkdownGolden(t *testing.T) {
	got := renderMarkdown(t, fixture.GoldenReport(t))
	CheckGolden(t, filepath.Join("testdata", "markdown.golden"), got)
	fixture.CheckMarkdown(t, got)
}

// TestMarkdownContent checks, on the golden report, what a support engineer
// relies on, so a golden refresh cannot quietly drop it.
func TestMarkdownContent(t *testing.T) {
	rep := fixture.GoldenReport(t)
	got := renderMarkdown(t, rep)
	for _, want := range []string{
		// IPv6 has a healthy address too: the title blames the address, not the family.
		"# pinprobe: 2001:db8::7 (sign.example.com/) answers 502 — sign.example.com, api.example.com, gone.example.com\n",
		"> **Verdict: concentrated.** ",
		"**Interrupted after 12.5 s:**",
		"2026-06-16T20:43:00.000Z → 2026-06-16T20:43:12.500Z (12.5 s, interrupted)",
		"pinprobe --rate 20 -H 'Authorization: REDACTED' https://sign.example.com/",
		"- **Local addresses:** 192.0.2.10, 2001:db8::100",
		"- 2026-06-16T20:43:06.500Z — api.example.com:8080: removed 2001:db8::20",
		"| ✗   | **2001:db8::7** |",
		"left DNS at 2026-06-16T20:43:06.500Z, not probed after",
		"— (plain HTTP)",
		"<hr><center>Microsoft-Azure-Application-Gateway/v2</center>",
		"|▆▆▆▆▆▆▆▆▆▆| 30 of 40 failed",
		"pinprobe-0123abcd-1-2",
		"Set-Cookie: REDACTED",
		"error: dial tcp 198.51.100.20:8080: connect: connection refused",
		"AGWAccessLogs\n",
		`| where Category == "ApplicationGatewayAccessLog"`,
		"starting with `pinprobe-0123abcd-`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown report lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\| 30 × 502 +\| Microsoft-Azure-Application-Gateway/v2 +\| Azure Application Gateway +\| 2001:db8::7 ×30 +\| 0 / 30 +\|`).MatchString(got) {
		t.Errorf("markdown report lacks the fingerprint row of the 502s")
	}
	if strings.Contains(got, "5f1c0ffee") {
		t.Errorf("markdown report shows a Set-Cookie value")
	}
}

// TestMarkdownHostileContent: bodies, headers and names from the network
// cannot break the document's fences, tables or details blocks.
func TestMarkdownHostileContent(t *testing.T) {
	rep := fixture.GoldenReport(t)
	body := "```\n| a | b |\n|---|---|\n</details>\n````` five\n    ```````\n~~~\n\x1b[31mred\r\nend"
	rep.Fingerprints[0].Body = body
	rep.Fingerprints[0].Server = "evil | <b>bold</b> `tick` *star* [link](x)\n# heading"
	rep.Fingerprints[0].Addresses["a|b"] = 1
	rep.DNS[2].Error = "no | such ``` host\n| x |"
	rep.Endpoints[1].Samples[0].Headers["X-Evil"] = "a | b ``` c </details>"
	rep.Endpoints[1].Samples[0].Error = "boom\n```\n| x |"
	rep.Verdict.Summary = "Failures <script>alert(1)</script> | here"
	got := renderMarkdown(t, rep)
	fixture.CheckMarkdown(t, got)

	// The body is shown whole inside one fence longer than its longest run
	// of backticks (7), with only its control characters escaped.
	fence := strings.Repeat("`", 8)
	shown := strings.ReplaceAll(strings.ReplaceAll(body, "\x1b", `\x1b`), "\r\n", "\n")
	if !strings.Contains(got, fence+"text\n"+shown+"\n"+fence+"\n") {
		t.Errorf("hostile body is not whole inside an eight-backtick fence:\n%s", got)
	}
	for _, leak := range []string{"<script>", "<b>", "</b>"} {
		if regexp.MustCompile(`(^|[^\\])` + leak).MatchString(got) {
			t.Errorf("markdown report contains %q unescaped", leak)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("markdown report contains a raw escape character")
	}
}

func TestMarkdownForFormat(t *testing.T) {
	render := Must(ForFormat("markdown", Options{}))
	rep := fixture.GoldenReport(t)
	got := Written(t, render, rep)
	if !strings.HasPrefix(got, "# pinprobe: ") {
		t.Errorf("ForFormat(markdown) output starts %q; want a pinprobe title", got[:min(len(got), 40)])
	}
	// The run went from 20:43:00.000 to 20:43:12.500; the queries add 5s.
	window := "between (datetime(2026-06-16T20:42:55.000Z) .. datetime(2026-06-16T20:43:17.500Z))"
	if n := strings.Count(got, window); n != 3 {
		t.Errorf("%d queries filter on %q; want 3 (two AGWAccessLogs, one AzureDiagnostics)", n, window)
	}
	if len(rep.Client.Ports) == 0 {
		t.Fatal("the golden report has no client ports")
	}
	ports := make([]string, len(rep.Client.Ports))
	for i, p := range rep.Client.Ports {
		ports[i] = strconv.Itoa(p)
	}
	list := strings.Join(ports, ", ")
	if n := strings.Count(got, "| where isnull(Port) or Port in ("+list+")"); n != 3 {
		t.Errorf("%d queries filter on the client ports %s; want 3", n, list)
	}
	for _, want := range []string{`Port = toint(column_ifexists("ClientPort", int(null)))`, `Listener = tostring(column_ifexists("ListenerName", ""))`,
		"    by Listener, ServerRouted, HttpStatus"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown report lacks %q", want)
		}
	}
}

func TestMarkdownLogQuery(t *testing.T) {
	rep := fixture.GoldenReport(t)
	t.Run("many ports", func(t *testing.T) {
		r := *rep
		r.Client = report.Client{LocalAddresses: []string{"192.0.2.10"}, Ports: make([]int, 101), PortsCount: 101, PortMin: 1024, PortMax: 60999}
		got := renderMarkdown(t, &r)
		if n := strings.Count(got, "| where isnull(Port) or Port between (1024 .. 60999)"); n != 3 {
			t.Errorf("with 101 ports, %d queries filter on their range; want 3", n)
		}
		if strings.Contains(got, "Port in (") {
			t.Errorf("with 101 ports, the query still lists them")
		}
	})
	t.Run("no connection", func(t *testing.T) {
		r := *rep
		r.Client = report.Client{LocalAddresses: []string{}, Ports: []int{}}
		got := renderMarkdown(t, &r)
		if strings.Contains(got, "or Port ") {
			t.Errorf("without client ports, a query still filters on them")
		}
		fixture.CheckMarkdown(t, got)
	})
	tests := []struct{ spec, want string }{
		{"5xx", "HttpStatus between (500 .. 599)"},
		{"500-503,429", "(HttpStatus == 429 or HttpStatus between (500 .. 503))"},
		{"502", "HttpStatus == 502"},
		{"4xx,5xx", "HttpStatus between (400 .. 599)"},
	}
	for _, tt := range tests {
		f, err := report.ParseFailStatus(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := (&logQuery{fail: f}).failExpr("HttpStatus"); got != tt.want {
			t.Errorf("failExpr for --fail-status %s = %q; want %q", tt.spec, got, tt.want)
		}
	}
}

// The title is the verdict's own headline, every suspect in it; without
// suspects it says the status in a few words.
func TestMarkdownTitleIsTheHeadline(t *testing.T) {
	tests := []struct {
		verdict report.Verdict
		want    string
	}{
		{report.Verdict{Status: report.VerdictConcentrated, Headline: "IPv6 (::1) answers 502; X-Served-By: gw-3 behind 127.0.0.2 answers 502"},
			"IPv6 (::1) answers 502; X-Served-By: gw-3 behind 127.0.0.2 answers 502"},
		{report.Verdict{Status: report.VerdictOK}, "no failures"},
		{report.Verdict{Status: report.VerdictSpread}, "failures not attributable to one address"},
		{report.Verdict{Status: report.VerdictNoData}, "no data"},
	}
	for _, tt := range tests {
		if got := renderMarkdown(t, verdictOnly(tt.verdict)); !strings.HasPrefix(got, "# pinprobe: "+tt.want+" — ") {
			t.Errorf("%s: title %q; want it to start with %q", tt.verdict.Status, strings.SplitN(got, "\n", 2)[0], "# pinprobe: "+tt.want)
		}
	}
}

// The title escapes the headline: it names instances by the values of a
// response header, which a server chooses, so markup in one stays text.
func TestMarkdownTitleEscapesInstances(t *testing.T) {
	for _, value := range []string{"<img src=x onerror=alert(1)>", "[l](javascript:alert(1))", "*gw*_1_`x`"} {
		r := verdictOnly(report.Verdict{Status: report.VerdictConcentrated, Headline: "X-Served-By: " + value + " behind 127.0.0.2 answers 502"})
		title := strings.SplitN(renderMarkdown(t, r), "\n", 2)[0]
		if want := "# pinprobe: X-Served-By: " + mdText(value) + " behind"; !strings.HasPrefix(title, want) {
			t.Errorf("title %q; want it to start with %q", title, want)
		}
	}
}

func TestMdText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nginx/1.22.1", "nginx/1.22.1"},
		{"p<1e-9 & more", "p<1e-9 & more"},
		{"<b>x</b> &amp; a|b", `\<b>x\</b> \&amp; a\|b`},
		{"*a* _b_ `c` [d] ~e~", "\\*a\\* \\_b\\_ \\`c\\` \\[d\\] \\~e\\~"},
		{"connect_refused __init__", `connect_refused \_\_init\_\_`},
		{"line\nbreak\ttab", "line break tab"},
		{"bell\x07", `bell\\x07`}, // renders as bell\x07
		{"rtl\u202eevil", `rtl\\u{202e}evil`},
	}
	for _, tt := range tests {
		if got := mdText(tt.in); got != tt.want {
			t.Errorf("mdText(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	// A bracketed IPv6 address keeps its brackets in a table cell, where
	// no link can start, and never in running text, where hostile text
	// could open a list item and define a link there.
	for _, tt := range []struct {
		in         string
		text, cell string
	}{
		{"[2001:db8::1]:443 → [::1]:8080", `\[2001:db8::1\]:443 → \[::1\]:8080`, "[2001:db8::1]:443 → [::1]:8080"},
		{"- [::1]: https://evil.example", `- \[::1\]: https://evil.example`, "- [::1]: https://evil.example"},
		{"[10.0.0.1]:80 [x]", `\[10.0.0.1\]:80 \[x\]`, `\[10.0.0.1\]:80 \[x\]`},
		{"a [fe80::1%eth0]:80", `a \[fe80::1%eth0\]:80`, `a \[fe80::1%eth0\]:80`},
		{"a [::1](http://evil)", `a \[::1\](http://evil)`, `a \[::1\](http://evil)`},
		{"a ![::1](http://evil)", `a !\[::1\](http://evil)`, `a !\[::1\](http://evil)`},
		{"a [::1][x]", `a \[::1\]\[x\]`, `a \[::1\]\[x\]`},
		{"1234", "1234", "1234"},
		{" 12  34 ", "12 34", "12 34"},
	} {
		if got := mdText(tt.in); got != tt.text {
			t.Errorf("mdText(%q) = %q; want %q", tt.in, got, tt.text)
		}
		if got := mdCell(tt.in); got != tt.cell {
			t.Errorf("mdCell(%q) = %q; want %q", tt.in, got, tt.cell)
		}
	}
	// Whatever a hostile note or cell holds, cmark-gfm makes no link of an
	// address and no image (a bare URL is autolinked, as anywhere on GitHub).
	hostile := []string{"- [::1]: https://evil.example \"t\"", ">[::1]: https://evil.example", "1. [::1]: https://evil.example",
		"[::1]: https://evil.example", "![::1](https://evil.example/x.png)"}
	var doc strings.Builder
	for _, h := range hostile {
		doc.WriteString("- " + mdText(h) + "\n")
	}
	doc.WriteString("\n| a |\n|---|\n")
	for _, h := range hostile {
		doc.WriteString("| " + cellEscape(mdCell(h)) + " [::1] |\n")
	}
	if html := cmarkGFM(t, doc.String()); strings.Contains(html, "::1</a>") || strings.Contains(html, "<img") {
		t.Errorf("hostile text made a link or an image:\n%s\n%s", doc.String(), html)
	}
	if got := cellEscape(`a|b\|c\\|d`); got != `a\|b\|c\\\|d` {
		t.Errorf("cellEscape = %q", got)
	}
}

// TestMarkdownRendersWithCmarkGFM renders the golden and the hostile reports
// with cmark-gfm, GitHub's own Markdown implementation, when it is
// installed: every table comes out a table, every fence a <pre>, hostile
// text stays whole in its cell or code block, and none of it becomes HTML
// (raw HTML is let through, as a less careful portal would, to catch any
// that leaks).
func TestMarkdownRendersWithCmarkGFM(t *testing.T) {
	hostile := fixture.GoldenReport(t)
	hostile.Fingerprints[0].Body = "```\n| a | b |\n</details>\n<script>alert(1)</script>\n"
	hostile.Fingerprints[0].Server = "evil | <b>bold</b> `tick`"
	hostile.Endpoints[1].Samples[0].Headers["X-Evil"] = "a | b ``` </details>"
	for name, rep := range map[string]*report.Report{"golden": fixture.GoldenReport(t), "hostile": hostile} {
		doc := renderMarkdown(t, rep)
		html := cmarkGFM(t, doc)
		// Count the tables by their shape (a block of lines starting with
		// "|"), not by a valid delimiter row, so a broken one shows.
		tables, fences := 0, 0
		inFence, prev := "", ""
		for _, l := range strings.Split(doc, "\n") {
			switch m := fixture.FenceLine.FindStringSubmatch(l); {
			case inFence != "" && strings.TrimSpace(l) == inFence:
				inFence = ""
			case inFence != "":
			case m != nil:
				inFence = m[1]
				fences++
			case strings.HasPrefix(l, "|") && !strings.HasPrefix(prev, "|"):
				tables++
			}
			prev = l
		}
		if got := strings.Count(html, "<table>"); got != tables {
			t.Errorf("%s: cmark-gfm made %d tables of %d", name, got, tables)
		}
		if got := strings.Count(html, "<pre>"); got != fences {
			t.Errorf("%s: cmark-gfm made %d code blocks of %d fences", name, got, fences)
		}
		// GFM drops a row's excess cells silently, so check that the hostile
		// text landed whole in one cell and one code block.
		if name == "hostile" {
			for _, want := range []string{
				"<td>evil | &lt;b&gt;bold&lt;/b&gt; `tick`</td>",
				"<pre><code class=\"language-text\">```\n| a | b |\n&lt;/details&gt;\n&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>",
				"X-Evil: a | b ``` &lt;/details&gt;\n",
			} {
				if !strings.Contains(html, want) {
					t.Errorf("hostile: cmark-gfm output lacks %q", want)
				}
			}
		}
		for _, leak := range []string{"<script>", "<b>bold"} {
			if strings.Contains(html, leak) {
				t.Errorf("%s: %q reached the HTML", name, leak)
			}
		}
		if o, c := strings.Count(html, "<details>"), strings.Count(html, "</details>"); o != c {
			t.Errorf("%s: %d <details> and %d </details> in the HTML", name, o, c)
		}
	}
}

// TestMarkdownQueriesFollowTheGateway: the log queries are those of the
// gateway whose error pages the failures carried, not Azure's for nginx's
// page; with none recognised, every gateway pinprobe knows is offered.
func TestMarkdownQueriesFollowTheGateway(t *testing.T) {
	sections := map[string]string{"azure": "AGWAccessLogs", "aws": "FROM alb_logs", "nginx": "### nginx", "haproxy": "### HAProxy"}
	tests := []struct {
		producer string
		want     []string
	}{
		{"Azure Application Gateway", []string{"azure"}},
		{"nginx", []string{"nginx"}},
		{"HAProxy", []string{"haproxy"}},
		{"AWS ELB/ALB", []string{"aws"}},
		{"", []string{"azure", "aws", "nginx", "haproxy"}},
	}
	for _, tt := range tests {
		r := fixture.GoldenReport(t)
		for i := range r.Fingerprints {
			r.Fingerprints[i].Producer = tt.producer
		}
		got := renderMarkdown(t, r)
		fixture.CheckMarkdown(t, got)
		for name, marker := range sections {
			if want := slices.Contains(tt.want, name); strings.Contains(got, marker) != want {
				t.Errorf("producer %q: section %s shown = %v; want %v", tt.producer, name, !want, want)
			}
		}
		if !strings.Contains(got, "### Any other gateway") {
			t.Errorf("producer %q: the generic list is missing", tt.producer)
		}
	}
}

// TestMarkdownBrief: --brief keeps what a ticket needs and drops the rest
// (see TestBriefEveryFormat for every format); neither report uses raw
// HTML.
func TestMarkdownBrief(t *testing.T) {
	r := fixture.GoldenReport(t)
	var full, brief bytes.Buffer
	if err := writePageMarkdown(&full, pageOf(r, false, false)); err != nil {
		t.Fatal(err)
	}
	if err := writePageMarkdown(&brief, pageOf(r, true, false)); err != nil {
		t.Fatal(err)
	}
	fixture.CheckMarkdown(t, brief.String())
	for _, doc := range []string{full.String(), brief.String()} {
		if strings.Contains(doc, "<details>") || strings.Contains(doc, "<summary>") {
			t.Errorf("a report uses raw HTML (<details>), which ticket systems strip")
		}
	}
	b := brief.String()
	for _, want := range []string{"> **Verdict: concentrated.**", "**Who answered:**", "## By address family", "## Suspects",
		"## One failed request of each suspect", "AGWAccessLogs"} {
		if !strings.Contains(b, want) {
			t.Errorf("brief report lacks %q", want)
		}
	}
	for _, not := range []string{"## DNS answers", "## By endpoint", "## Where the time went", "## Timeline", "## Appendix", "AzureDiagnostics"} {
		if strings.Contains(b, not) {
			t.Errorf("brief report has %q", not)
		}
	}
	// One failed request of the one suspect, 2001:db8::7; none of
	// 198.51.100.20, which fails less and is no suspect.
	if n, other := strings.Count(b, "| ✗   | 2001:db8::7 "), strings.Count(b, "| ✗   | 198.51.100.20 "); n != 1 || other != 0 {
		t.Errorf("brief report shows %d failed requests of the suspect and %d of another address; want 1 and 0:\n%s", n, other, b)
	}
	if lf, lb := strings.Count(full.String(), "\n"), strings.Count(b, "\n"); lb*2 > lf {
		t.Errorf("brief report has %d lines, the full one %d; want it under half", lb, lf)
	}
}

// cmarkGFM renders doc with cmark-gfm, GitHub's Markdown engine, with the
// extensions GitHub turns on; it skips the test without it outside CI.
func cmarkGFM(t *testing.T, doc string) string {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cmark-gfm is not installed: .ci/run installs it")
		}
		t.Skip("cmark-gfm is not installed (apt-get install cmark-gfm); .ci/run installs it")
	}
	cmd := exec.Command(bin, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough")
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	return string(out)
}
