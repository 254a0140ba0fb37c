package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/render"
)

// TestVantageBreakdown: the text, Markdown and HTML reports of a merge of
// runs from two vantage points show each vantage's runs, requests and
// failures per endpoint, mark the endpoint the verdict names from its
// vantage, and say the claim.
func TestVantageBreakdown(t *testing.T) {
	m := fixture.VantageMerge(t)
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"text", func(b *bytes.Buffer) error { return render.Text(render.Options{})(b, m) }, []string{
			"BY VANTAGE", "eu-west", "us-east",
			// The inputs, each with its vantage.
			"MERGED from 3 reports: eu-west.json from eu-west,", "us-east.json:us-east-2.json from us-east",
			"✗ eu-west 1 all 400 60 15.0%", "✗ 2001:db8::10 IPv6 200 60 30.0%", "us-east 2 all 800 0 0.0%",
			// The headline, in the terse verdict.
			"answers 502; only eu-west sees 2001:db8::10 fail."}},
		{"markdown", func(b *bytes.Buffer) error { return render.Must(render.ForFormat("markdown", render.Options{}))(b, m) }, []string{
			"## By vantage point", "| ✗ | **eu-west** | 1 | all | | 400 | 60 | 15.0% |",
			"| Report | Vantage | From (UTC) |", "| eu-west.json | eu-west | 2026-06-16T20:43:00.000Z |", "| us-east.json:us-east-2.json | us-east |",
			"| ✗ | | | 2001:db8::10 | IPv6 | 200 | 60 | 30.0% |", "| | us-east | 2 | all | | 800 | 0 | 0.0% |",
			"Only the runs from eu-west see 2001:db8::10 fail"}},
		{"html", func(b *bytes.Buffer) error { return render.HTML(b, m) }, []string{
			"<section id=\"vantages\">\n<h2>By vantage point</h2>",
			`<th>Report</th><th>Vantage</th><th>From (UTC)</th>`, `<td><span class="nw">eu-west.json</span></td><td><span class="nw">eu-west</span></td>`, `<td class="name"><span class="nw">eu-west</span></td><td class="num">1</td><td>all</td>`,
			`<td>2001:db8::10</td><td class="p1">IPv6</td><td class="num">200</td><td class="num">60</td><td class="num">30.0%</td>`,
			// A hyphenated name is kept whole on its line (html16's "words").
			`Only the runs from <span class="nw">eu-west</span> see 2001:db8::10 fail`}},
	} {
		var b bytes.Buffer
		if err := tt.write(&b); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// Columns are aligned with runs of spaces: compare words.
		var lines []string
		for _, l := range strings.Split(b.String(), "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		got := strings.Join(lines, "\n")
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, b.String())
			}
		}
	}
	// A single run says its vantage and shows no breakdown.
	one := fixture.VantageRun(t, "eu-west", 0, 0)
	b := render.Written(t, render.Text(render.Options{}), one)
	if !strings.Contains(b, "from eu-west") || strings.Contains(b, "BY VANTAGE") {
		t.Errorf("a single run's text: want its vantage and no breakdown:\n%s", b)
	}
}
