package render

import (
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/report"
)

// hostileName is a backend name as a hostile log could write it: markup,
// a Markdown table cell's end, a code span, a terminal escape and a bidi
// override.
const hostileName = "<b>be</b> | `x` \x1b[31m\u202e[2001:db8::9]:443"

// sampleJoin is a join of the incident, one backend named by a hostile
// log.
func sampleJoin() *join.Join {
	at := report.Time{Time: time.Date(2026, 12, 1, 16, 40, 0, 0, time.UTC)}
	p := 1e-12
	return &join.Join{Schema: join.Schema, Version: join.Revision, Alpha: 0.001, Status: join.StatusTraced,
		Conclusion: "All 50 502s were routed to " + hostileName + " (IPv6), by instances appgw_0 and appgw_2.",
		Run:        join.Run{File: "run.json", RunID: "abcdef12", StartedAt: at, EndedAt: report.Time{Time: at.Add(30 * time.Second)}, Requests: 300, Failed: 50},
		Logs: []join.Log{{Name: "agw.csv", Kind: "azure", Format: "Azure AGWAccessLogs (CSV)", Logs: []string{"time", "client port", "backend"},
			Lines: 376, Records: 375, Skipped: 1, SkippedAt: []int64{17}}},
		Offset:  join.Offset{Measured: true, MS: 3200, SpreadMS: 1, Pairs: 225, By: "client port", ResolutionMS: 1},
		Clients: []string{"198.51.100.7", "2001:db8:77::7"},
		Lines:   join.Lines{Records: 375, Run: 300, ByPort: 225, ByWindow: 75, Failed: 50, OtherClients: 75, NoEndpointAt: []string{}},
		Backends: []join.Scope{
			{Name: hostileName, Family: "ipv6", Requests: 50, Failed: 50, FailureRate: 1, Status: map[string]int64{"502": 50},
				Endpoints: map[string]int64{"2001:db8::10": 50}, RunFailed: 50, P: p, Significant: true},
			{Name: "10.0.0.4:443", Family: "ipv4", Requests: 250, Status: map[string]int64{"200": 250}, Endpoints: map[string]int64{"203.0.113.10": 150, "2001:db8::10": 100}, P: 1},
		},
		Instances: []join.Scope{},
		Listeners: []join.Scope{},
		Endpoints: []join.Endpoint{
			{Target: "https://sign.example.com/sign", Address: "203.0.113.10", Family: "ipv4", Requests: 150, Logged: 150, Backends: map[string]int64{"10.0.0.4:443": 150}},
			{Target: "https://sign.example.com/sign", Address: "2001:db8::10", Family: "ipv6", Requests: 150, Failed: 50, Logged: 150, LoggedFailed: 50, TrailFailed: 50, FailedMatched: 50,
				Backends: map[string]int64{hostileName: 50, "10.0.0.4:443": 100}},
		},
		Missing:  join.Missing{IDs: []string{}, Gaps: []join.Gap{}},
		Findings: []join.Finding{{Kind: "backend", Text: "All 50 502s were routed to " + hostileName + " (IPv6)."}},
	}
}

// TestJoinText: the text join leads with the conclusion, shows every
// section, and writes no escape or reordering character a log sent.
func TestJoinText(t *testing.T) {
	r := Must(JoinForFormat("text", Options{Width: 100}))
	out := Written(t, r, sampleJoin())
	flat := norm(out)
	for _, want := range []string{"FAILURES TRACED All 50 502s", "BY BACKEND", "BY PINPROBE ENDPOINT", "+3200 ms ± 1 ms", `\x1b[31m`, `\u{202e}`, "1 line did not parse (line 17)", "75 of other clients"} {
		if !strings.Contains(flat, want) {
			t.Errorf("text join lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("text join holds a raw escape or bidi character")
	}
	if _, err := JoinForFormat("yaml", Options{}); err == nil {
		t.Errorf("--format yaml accepted")
	}
}

// TestJoinStatusAndMarks: a join whose logs name no backend is headed
// UNTRACED in every format (never NO FAILURE above failures), and a scope
// with failures that no test found failing more than the rest (p = 1)
// has no ✗; one the test found has.
func TestJoinStatusAndMarks(t *testing.T) {
	j := sampleJoin()
	j.Status = join.StatusUntraced
	j.Conclusion = "The logs name no backend: 45 of the run's 90 logged requests failed."
	j.Backends = []join.Scope{}
	j.Listeners = []join.Scope{
		{Name: "listener-a", Requests: 45, Failed: 45, FailureRate: 1, Status: map[string]int64{"502": 45}, Endpoints: map[string]int64{"::1": 45}, P: 1e-9, Significant: true},
		{Name: "listener-b", Requests: 45, Failed: 1, FailureRate: 1.0 / 45, Status: map[string]int64{"502": 1, "200": 44}, Endpoints: map[string]int64{"127.0.0.1": 45}, P: 1},
	}
	for _, f := range []string{"text", "markdown", "html"} {
		r := Must(JoinForFormat(f, Options{Width: 120}))
		out := Written(t, r, j)
		if !strings.Contains(out, "UNTRACED") || strings.Contains(out, "NO FAILURE") {
			t.Errorf("--format %s: headline not UNTRACED:\n%s", f, out)
		}
		if f != "text" {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.Contains(line, "listener-a") && !strings.Contains(line, failMark):
				t.Errorf("the significant listener is not marked: %q", line)
			case strings.Contains(line, "listener-b") && strings.Contains(line, failMark):
				t.Errorf("listener-b (p = 1) is marked: %q", line)
			}
		}
	}
}

// TestJoinMarkdownRendersWithCmarkGFM: GitHub's Markdown engine makes of
// the join the tables it has, the hostile name text in one cell.
func TestJoinMarkdownRendersWithCmarkGFM(t *testing.T) {
	page := cmarkGFM(t, Written(t, Must(JoinForFormat("markdown", Options{})), sampleJoin()))
	if got := strings.Count(page, "<table>"); got != 2 {
		t.Errorf("%d tables; want 2 (backends, endpoints):\n%s", got, page)
	}
	if !strings.Contains(page, "<li><strong>Clock offset:</strong> +3200 ms") {
		t.Errorf("the run and the logs are not a list of what each is:\n%s", page)
	}
	if strings.Contains(page, "<b>be") || strings.ContainsAny(page, "\x1b\u202e") {
		t.Errorf("the hostile name became markup or kept its escapes:\n%s", page)
	}
	if !strings.Contains(page, "<td>&lt;b&gt;be&lt;/b&gt; | <code>x</code>") && !strings.Contains(page, "&lt;b&gt;be&lt;/b&gt; | `x`") {
		t.Errorf("the hostile name is not whole in its cell:\n%s", page)
	}
}

// TestJoinHTML: the join's page is self-contained (no script, no fetch,
// its style allowed by hash) and shows the hostile name as text;
// TestHTMLInChromium/join loads it in Chromium.
func TestJoinHTML(t *testing.T) {
	doc := parseHTML(t, Written(t, writePageHTML, joinPage(sampleJoin())))
	checkSelfContained(t, doc)
	if n := len(find(doc, tagged("b"))); n != 0 {
		t.Errorf("the hostile name made %d <b> elements", n)
	}
	if !strings.Contains(textOf(doc), `<b>be</b> | `+"`x`"+` \x1b[31m\u{202e}[2001:db8::9]:443`) {
		t.Errorf("the page does not show the hostile name as text")
	}
	if got := len(find(doc, tagged("table"))); got != 2 {
		t.Errorf("%d tables; want 2 (backends, endpoints)", got)
	}
}
