package render

// What a careful reader sees from one table, section or format to the
// next: the same columns, the same order, the same names.

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestEndpointTablesShareOneLayout: every URL's table has the same
// columns, as wide: a healthy URL's kept FAMILY (or MAX) where a failing
// one's longer statuses dropped it.
func TestEndpointTablesShareOneLayout(t *testing.T) {
	r := fixture.GoldenReport(t)
	for _, width := range []int{80, 120} {
		b := Written(t, Text(Options{Width: width}), r)
		lines := strings.Split(b, "\n")
		var heads []string
		for i, l := range lines {
			if strings.HasPrefix(l, "BY ENDPOINT  ") && i+1 < len(lines) {
				heads = append(heads, lines[i+1])
			}
		}
		if len(heads) != 2 || heads[0] != heads[1] {
			t.Errorf("width %d: the endpoint tables' heads differ:\n%s", width, strings.Join(heads, "\n"))
		}
	}
}

// TestNaturalLess: runs of digits compare by value.
func TestNaturalLess(t *testing.T) {
	want := []string{"", "gw", "gw-1", "gw-2", "gw-02", "gw-3", "gw-10", "gw-10a", "gw-10b", "gw-a", "pod-1-1", "pod-1-12", "pod-2-1"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, func(a, b string) int {
		switch {
		case naturalLess(a, b):
			return -1
		case naturalLess(b, a):
			return 1
		}
		return 0
	})
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q; want %q", got, want)
	}
}

// TestInstancesInTheirOrder: the instances of a header are listed as a
// reader looks for them (gw-1 … gw-10), not by their counts, whatever
// the report's order; the values past the cap come last.
func TestInstancesInTheirOrder(t *testing.T) {
	r := fixture.GoldenReport(t)
	r.Groups = nil
	for i, v := range []string{"gw-2", "gw-3", "gw-10", report.OtherValues, "gw-1"} { // the report's order: most requests first
		n := int64(50 - i)
		r.Groups = append(r.Groups, report.Group{Header: "X-Served-By", Value: v,
			Stats: report.Stats{Requests: n, OK: n, Status: map[string]int64{"200": n}}, Addresses: map[string]int64{"203.0.113.7": n}})
	}
	var got []string
	for _, row := range NewView(r).Groups[0].Rows {
		got = append(got, row.Label)
	}
	if want := []string{"gw-1", "gw-2", "gw-3", "gw-10", report.OtherValues}; !slices.Equal(got, want) {
		t.Errorf("instances %q; want %q", got, want)
	}
}

// TestMergedDNSNamesItsInputs: the inputs of a merge that resolved a host
// the same way share one DNS row that names them (it printed the same line
// twice, naming neither); an input whose answer differs has its own row.
func TestMergedDNSNamesItsInputs(t *testing.T) {
	r := fixture.GoldenReport(t)
	d := report.DNS{Host: "sign.example.com", Port: 443, Source: "system", Addresses: []string{"203.0.113.7", "2001:db8::7"}, Changes: []report.DNSChange{}}
	eu, us, ap := d, d, d
	eu.Input, us.Input, ap.Input = "eu.json", "us.json", "ap.json"
	ap.Addresses = []string{"203.0.113.7"}
	r.DNS = []report.DNS{eu, us, ap}
	r.Inputs = []report.Input{{File: "eu.json"}, {File: "us.json"}, {File: "ap.json"}}
	v := NewView(r)
	var got []string
	for _, row := range v.DNS {
		got = append(got, row.Host+" ("+row.Where+"): "+row.Addresses)
	}
	want := []string{"sign.example.com:443 (system, in eu.json and us.json): 203.0.113.7, 2001:db8::7",
		"sign.example.com:443 (system, in ap.json): 203.0.113.7"}
	if !slices.Equal(got, want) {
		t.Fatalf("DNS rows\n%q; want\n%q", got, want)
	}
	text := Written(t, Text(Options{Width: 120}), r)
	for name, doc := range map[string]string{"text": text, "markdown": renderMarkdown(t, r), "html": textOf(parseHTML(t, renderHTML(t, r)))} {
		for _, w := range []string{"system, in eu.json and us.json", "system, in ap.json"} {
			if !strings.Contains(norm(doc), w) {
				t.Errorf("the %s report lacks %q", name, w)
			}
		}
	}
	if n := strings.Count(text, "sign.example.com:443 (system"); n != 2 {
		t.Errorf("the text report has %d DNS lines of sign.example.com; want 2:\n%s", n, text)
	}
}

// TestReleaseGateOneName: the release gate is called that in every format
// and in its summary line at the top of the text report; a gate that
// passed lists the checks it passed, as one that failed lists them all,
// the failing first.
func TestReleaseGateOneName(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limits report.Limits
		first  string // the gate's line at the top
		rows   []string
	}{
		{"passed", report.Limits{MaxFailureRate: 1}, "RELEASE GATE passed: all 6 checks, each proven at 95%",
			[]string{"max-failure-rate  total", "max-failure-rate  198.51.100.20 api.example.com:8080/health"}},
		{"failed", report.Limits{MaxFailureRate: 0.5, MaxP99: 50 * time.Millisecond}, "RELEASE GATE FAILED: 3 of 12 checks breached, 5 not proven",
			[]string{"✗  max-p99           family ipv6", "✗  max-p99           2001:db8::7 sign.example.com/", "   max-failure-rate  total"}},
	} {
		r := fixture.GoldenReport(t)
		r.Thresholds = report.CheckLimits(r, tt.limits)
		text := Written(t, Text(Options{Width: 120}), r)
		lines := strings.Split(text, "\n")
		if !slices.Contains(lines[:3], tt.first) {
			t.Errorf("%s: the text report does not start with %q:\n%s", tt.name, tt.first, strings.Join(lines[:3], "\n"))
		}
		if strings.Contains(text, "THRESHOLDS") {
			t.Errorf("%s: the text report still says THRESHOLDS", tt.name)
		}
		// The section's heading says the summary again, beside it.
		i := strings.LastIndex(text, "\n"+strings.Replace(tt.first, "GATE ", "GATE  ", 1)+"\n")
		if i < 0 {
			t.Fatalf("%s: no gate section:\n%s", tt.name, text)
		}
		section := text[i:]
		section = section[:strings.Index(section, "\n\n")]
		if i := strings.Index(section, "\n ·"); i >= 0 { // what would prove the checks not proven
			section = section[:i]
		}
		if n := strings.Count(section, "\n") - 2; n != len(r.Thresholds) {
			t.Errorf("%s: the gate section lists %d checks; want all %d:\n%s", tt.name, n, len(r.Thresholds), section)
		}
		last := -1
		for _, row := range tt.rows {
			j := strings.Index(section, " "+row)
			if j < 0 || j < last {
				t.Errorf("%s: the gate section lacks %q, or has it out of order:\n%s", tt.name, row, section)
			}
			last = j
		}
		for name, doc := range map[string]string{"markdown": renderMarkdown(t, r), "html": renderHTML(t, r)} {
			if !strings.Contains(doc, "Release gate") || strings.Contains(strings.ToLower(doc), "thresholds") {
				t.Errorf("%s: the %s report does not call it the release gate", tt.name, name)
			}
		}
		if tt.name == "passed" && strings.Contains(renderHTML(t, r), ">all "+strconv.Itoa(len(r.Thresholds))+" checks<") {
			t.Errorf("the HTML links to the checks as 'all 14 checks', which the summary already says")
		}
	}
}

// TestAbandonedInEveryFormat: the requests abandoned at a second interrupt
// are said in every format, at the top (beside the requests, or in the
// run's sentence) and in a note; the brief says them too.
func TestAbandonedInEveryFormat(t *testing.T) {
	r := fixture.AbandonedRun(t)
	for _, brief := range []bool{false, true} {
		for _, format := range []string{"text", "markdown", "html"} {
			render := Must(ForFormat(format, Options{Width: 100, Brief: brief}))
			b := Written(t, render, r)
			doc := norm(b)
			// Text says them beside the requests and in the verdict's
			// line; Markdown and HTML in the run's sentence.
			wants := []string{"10 requests (10.0/s) to 1 endpoint: 8 finished, 0 of them failed, and 2 were abandoned: still in flight when a second interrupt ended the wait"}
			if format == "text" {
				// Not an OK: the abandoned requests' outcome is unknown.
				wants = []string{"8 requests, 0 dropped, 2 abandoned", "VERDICT UNFINISHED 0 of 8 finished requests failed; 2 more were still unanswered when the report was written (abandoned): how they ended is unknown"}
			}
			if !brief || format == "html" {
				wants = append(wants, "2 requests were abandoned: sent, and still in flight when a second interrupt ended the wait for them after 1.0s of waiting")
			}
			for _, w := range wants {
				if !strings.Contains(doc, w) {
					t.Errorf("%s (brief %v) does not say %q:\n%s", format, brief, w, b)
				}
			}
		}
	}
}
