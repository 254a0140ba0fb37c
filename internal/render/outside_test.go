package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"

	"golang.org/x/net/html"
)

// outside is text a hostile server or a forged report could put in any
// string: a terminal title (OSC … BEL), a screen clear (CSI), a bare bell
// and escape, HTML elements, a javascript: link, Markdown table and code
// delimiters and a right-to-left override.
const outside = "A\x1b]0;owned\x07B\x1b[2J\x07<img src=x onerror=alert(1)><script>alert(2)</script>[x](javascript:alert(3)) | `tick` *\u202eC"

// outsideFields are the strings of a report that come from outside —
// from a server, from the command line, or from the file a saved report
// was read from — each with how to set it on the golden report.
var outsideFields = []struct {
	name string
	set  func(r *report.Report, s string)
}{
	{"version", func(r *report.Report, s string) { r.Version = s }},
	{"command", func(r *report.Report, s string) { r.Command = append(r.Command, s) }},
	{"address", func(r *report.Report, s string) {
		r.Endpoints[1].Address, r.Timeline.Series[1].Address = s, s
		r.Verdict.Suspects[0].Address = s
		r.Fingerprints[0].Addresses[s] = 1
	}},
	{"family", func(r *report.Report, s string) {
		r.Endpoints[1].Family = s
		r.Families[s] = r.Families["ipv6"]
	}},
	{"target", func(r *report.Report, s string) { r.Endpoints[1].Target, r.Timeline.Series[1].Target = s, s }},
	{"host", func(r *report.Report, s string) { r.Endpoints[1].Host, r.DNS[0].Host = s, s }},
	{"dns source", func(r *report.Report, s string) { r.DNS[0].Source = s }},
	{"dns error", func(r *report.Report, s string) { r.DNS[2].Error = s }},
	{"dns address", func(r *report.Report, s string) { r.DNS[0].Addresses = append(r.DNS[0].Addresses, s) }},
	{"dns change", func(r *report.Report, s string) { r.DNS[1].Changes[0].Removed = append(r.DNS[1].Changes[0].Removed, s) }},
	{"client address", func(r *report.Report, s string) { r.Client.LocalAddresses = append(r.Client.LocalAddresses, s) }},
	{"client error", func(r *report.Report, s string) { r.ClientError = s }},
	{"status key", func(r *report.Report, s string) { r.Endpoints[1].Status[s] = 1 }},
	{"error class", func(r *report.Report, s string) { r.Endpoints[1].Errors[s] = 1; r.Fingerprints[0].Error = s }},
	{"fingerprint server", func(r *report.Report, s string) { r.Fingerprints[0].Server = s }},
	{"fingerprint producer", func(r *report.Report, s string) { r.Fingerprints[0].Producer = s }},
	{"fingerprint body", func(r *report.Report, s string) { r.Fingerprints[0].Body = s }},
	{"fingerprint hash", func(r *report.Report, s string) { r.Fingerprints[0].BodyHash = s }},
	{"sample request ID", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].RequestID = s }},
	{"sample local", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Local = s }},
	{"sample remote", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Remote = s }},
	{"sample error", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Error = s }},
	{"sample class", func(r *report.Report, s string) {
		r.Endpoints[1].Samples[1].Status, r.Endpoints[1].Samples[1].Class = 0, s
	}},
	{"sample proto", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Proto = s }},
	{"sample header", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Headers["X-Request-Id"] = s }},
	{"sample header name", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Headers[s] = "v" }},
	{"sample body", func(r *report.Report, s string) { r.Endpoints[1].Samples[1].Body = s }},
	{"group header and value", func(r *report.Report, s string) {
		r.Groups = append(r.Groups, report.Group{Header: s, Value: s, Stats: r.Endpoints[1].Stats,
			Addresses: map[string]int64{s: 40}, FailedBy: map[string]int64{s: 30}})
	}},
	{"verdict", func(r *report.Report, s string) {
		v := &r.Verdict
		v.Status, v.Headline, v.Summary, v.Notes = s, s, s, append(v.Notes, s)
		v.Suspects[0].How, v.Suspects[0].Agrees, v.Suspects[0].Target = s, s, s
		v.Tests[0].Scope = s
		v.Slow = append(v.Slow, report.SlowFinding{Kind: report.TestGroup, Scope: s, Header: s, Value: s})
	}},
	{"notes and inputs", func(r *report.Report, s string) {
		r.Notes = append(r.Notes, s)
		r.Inputs = append(r.Inputs, report.Input{File: s, Version: s, Command: []string{"pinprobe", s}})
	}},
	{"thresholds", func(r *report.Report, s string) {
		v := 0.5
		r.Thresholds = append(r.Thresholds, report.Threshold{Name: s, Scope: s, Unit: s, Status: s, Value: &v})
	}},
}

// renderAll renders r in every format, and a comparison of r with golden
// (the golden report, untouched) in every comparison format.
func renderAll(t *testing.T, golden, r *report.Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []struct {
		name, format string
		o            Options
	}{
		{"text", "text", Options{}}, {"text color", "text", Options{Color: true, Width: 200}},
		{"markdown", "markdown", Options{}}, {"markdown brief", "markdown", Options{Brief: true}},
		{"html", "html", Options{}}, {"html brief", "html", Options{Brief: true}}, {"json", "json", Options{}},
		{"text brief", "text", Options{Brief: true}}, {"text brief color", "text", Options{Brief: true, Color: true, Width: 200}},
	} {
		render := Must(ForFormat(f.format, f.o))
		var buf bytes.Buffer
		if err := render(&buf, r); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		out[f.name] = buf.String()
	}
	c := compare.Reports(golden, r)
	c.Before.File, c.After.File = "before.json", outside
	for _, f := range []string{"text", "markdown", "json"} {
		cr := Must(CompareForFormat(f, Options{}))
		out["compare "+f] = Written(t, cr, c)
	}
	return out
}

// hostileElements returns the elements of page that outside text made.
func hostileElements(t *testing.T, page string) []string {
	t.Helper()
	var found []string
	walk(parseHTML(t, page), func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "img" || n.Data == "script" && !strings.Contains(textOf(n), "pinprobe")) {
			found = append(found, n.Data)
		}
	})
	return found
}

// TestOutsideStringsInEveryRenderer sets each string that comes from outside
// to text that would act on a terminal, make HTML or break Markdown, one at
// a time, in a report that skips the cleaning of Read (so each
// renderer is tried on its own escaping), and checks every format: nothing
// a terminal acts on in the text, no raw HTML in the Markdown, no element
// in the HTML, no control character in the JSON.
func TestOutsideStringsInEveryRenderer(t *testing.T) {
	// A comparison reads its reports and changes neither: one golden
	// report is the side before of every field's.
	golden := fixture.GoldenReport(t)
	for _, f := range outsideFields {
		t.Run(f.name, func(t *testing.T) {
			r := fixture.GoldenReport(t)
			f.set(r, outside)
			for format, out := range renderAll(t, golden, r) {
				switch {
				case strings.HasPrefix(format, "compare markdown") || strings.HasPrefix(format, "markdown"):
					if l := fixture.MarkdownRawHTML(out); l != "" {
						t.Errorf("%s: raw HTML in %q", format, l)
					}
					fixture.CheckMarkdown(t, out)
				case strings.HasPrefix(format, "html"):
					if els := hostileElements(t, out); len(els) > 0 {
						t.Errorf("%s: outside text made %v elements", format, els)
					}
					continue // a browser shows no control character
				}
				if strings.HasSuffix(format, "json") {
					// JSON keeps the data as it came (a saved report's is
					// cleaned when read); a raw control character would
					// make it invalid.
					if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' }); i >= 0 {
						t.Errorf("%s: a raw control character at byte %d", format, i)
					}
					continue
				}
				if bad := fixture.TerminalUnsafe(out, strings.HasSuffix(format, "color")); bad != "" {
					t.Errorf("%s: a control character reaches the output: %q", format, bad)
				}
			}
		})
	}
}

// TestOutsideStringsInCmarkGFM renders, with GitHub's Markdown engine, the
// report with outside text in every field at once: none of it becomes an
// element or a javascript: link.
func TestOutsideStringsInCmarkGFM(t *testing.T) {
	r := fixture.GoldenReport(t)
	for _, f := range outsideFields {
		f.set(r, outside)
	}
	outs := renderAll(t, fixture.GoldenReport(t), r)
	for _, format := range []string{"markdown", "markdown brief", "compare markdown"} {
		page := cmarkGFM(t, outs[format])
		if els := hostileElements(t, page); len(els) > 0 {
			t.Errorf("%s: outside text made %v elements in cmark-gfm's HTML", format, els)
		}
		if strings.Contains(page, `href="javascript:`) {
			t.Errorf("%s: outside text made a javascript: link", format)
		}
	}
}
