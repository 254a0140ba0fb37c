package render

import (
	"bytes"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestTextGolden renders the golden report, and the demo's incident
// (insideReport: an address, an instance and connections to blame, a
// release gate), at 80 and 120 columns, terse and with --detail: every
// line fits, and the output is what testdata holds.
func TestTextGolden(t *testing.T) {
	for _, width := range []int{80, 120} {
		for _, detail := range []bool{false, true} {
			name := strconv.Itoa(width)
			if detail {
				name = "detail-" + name
			}
			o := Options{Width: width, Detail: detail}
			t.Run(name, func(t *testing.T) {
				checkTextGolden(t, fixture.GoldenReport(t), o, "text-"+name+".golden")
			})
			t.Run("inside-"+name, func(t *testing.T) {
				checkTextGolden(t, insideReport(t), o, "text-inside-"+name+".golden")
			})
		}
	}
}

func checkTextGolden(t *testing.T, rep *report.Report, o Options, name string) {
	t.Helper()
	buf := Written(t, Text(o), rep)
	CheckWidth(t, buf, o.Width)
	CheckGolden(t, filepath.Join("testdata", name), buf)
	if strings.Contains(buf, "\x1b[") {
		t.Errorf("Text without Color wrote ANSI escapes")
	}
}

func TestTextColor(t *testing.T) {
	rep := fixture.GoldenReport(t)
	var plain, color bytes.Buffer
	if err := Text(Options{Detail: true})(&plain, rep); err != nil {
		t.Fatal(err)
	}
	if err := Text(Options{Color: true, Detail: true})(&color, rep); err != nil {
		t.Fatal(err)
	}
	if got := fixture.Ansi.ReplaceAllString(color.String(), ""); got != plain.String() {
		t.Errorf("Text(true) without its escapes differs from Text(false):\n%s\nvs\n%s", got, plain.String())
	}
	red := 0
	prevRed := false
	for _, line := range strings.Split(strings.TrimRight(color.String(), "\n"), "\n") {
		text := fixture.Ansi.ReplaceAllString(line, "")
		isRed := strings.Contains(line, AnsiRed)
		wasRed := prevRed
		prevRed = isRed
		switch {
		case wasRed && isRed && strings.HasPrefix(text, "    "):
			// A wrapped failing item stays red on its continuation lines.
			if !strings.HasPrefix(line, AnsiRed) || !strings.HasSuffix(line, ansiReset) {
				t.Errorf("continuation of a failing item is not red from end to end: %q", line)
			}
		case strings.HasPrefix(text, " "+failMark):
			red++
			if !strings.HasPrefix(line, AnsiRed) || !strings.HasSuffix(line, ansiReset) {
				t.Errorf("failing row is not red from end to end: %q", line)
			}
		case strings.HasPrefix(text, "INTERRUPTED"), strings.HasPrefix(text, "VERDICT CONCENTRATED"), strings.HasPrefix(text, "VERDICT SPREAD"):
			// The banner and a failing verdict are red too, on purpose.
			if !isRed {
				t.Errorf("line is not red: %q", line)
			}
		case isRed:
			t.Errorf("row without failures is red: %q", line)
		}
	}
	// The host that did not resolve; families ipv4 and ipv6; endpoints
	// 2001:db8::7 and 198.51.100.20 in the endpoint, phase and timeline
	// tables; three failure fingerprints; four failed samples.
	if red != 16 {
		t.Errorf("%d failing rows in red; want 16:\n%s", red, color.String())
	}
}

func TestRenderersReturnWriteErrors(t *testing.T) {
	rep := fixture.GoldenReport(t)
	for _, format := range Formats {
		for _, n := range []int{0, 100, 1000} {
			render := Must(ForFormat(format, Options{}))
			if err := render(&fixture.FailingWriter{N: n}, rep); !errors.Is(err, fixture.ErrDiskFull) {
				t.Errorf("%s renderer, writer failing after %d bytes: err = %v; want %v", format, n, err, fixture.ErrDiskFull)
			}
		}
	}
	if _, err := ForFormat("xml", Options{}); err == nil {
		t.Errorf("ForFormat(xml) = nil error; want one")
	}
}

// TestCutList: a list cut to a width keeps the most items that fit with
// how many more there are, and a list of thousands is cut in one pass (it
// was joined anew for each count: 20,000 error classes took 3.7 GB).
func TestCutList(t *testing.T) {
	slow := func(s string, n int) string { // the definition
		if runes(s) <= n {
			return s
		}
		items := strings.Fields(s)
		for k := len(items) - 1; k >= 1; k-- {
			if out := strings.Join(items[:k], " ") + " +" + strconv.Itoa(len(items)-k); runes(out) <= n {
				return out
			}
		}
		return items[0]
	}
	for _, s := range []string{"200×40 502×20 reset×3", "a b c d e f g h i j k l", "200×123456 502×1 connect_refused×99", "x"} {
		for n := range 40 {
			if got, want := cutList(s, n), slow(s, n); got != want {
				t.Errorf("cutList(%q, %d) = %q; want %q", s, n, got, want)
			}
		}
	}
	var many []string
	for i := range 20000 {
		many = append(many, "e"+strconv.Itoa(i)+"×0")
	}
	long := strings.Join(many, " ")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cutList(long, 40)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 20*uint64(len(long)) && !check.Race {
		t.Errorf("cutList of 20,000 items (%d bytes) allocated %d bytes; want a small multiple", len(long), n)
	}
}

// TestTextStartsWithTheVerdict: the text report's first line, wrapped to
// the width, is the verdict: how many requests failed and the headline,
// which names every suspect; then the release gate's outcome, when there
// is one. The verdict comes last again: whole with --detail; terse, a
// concentrated verdict's line (the statistics are --detail's), another's
// summary, which says what no line says (how sure an OK is).
func TestTextStartsWithTheVerdict(t *testing.T) {
	ok := fixture.GoldenReport(t)
	ok.Verdict = report.Verdict{Status: report.VerdictOK, Summary: "0 failures in 130 requests."}
	for _, tt := range []struct {
		name string
		r    *report.Report
		want string
	}{
		{"inside", insideReport(t), "VERDICT CONCENTRATED 60 of 144 requests failed (41.7%): IPv6 (2001:db8::1) answers 502; X-Served-By: gw-3 behind 192.0.2.2 answers 502 (on 3 of 12 connections) RELEASE GATE FAILED: 3 of 13 checks breached, 6 not proven"},
		{"golden", fixture.GoldenReport(t), "VERDICT CONCENTRATED 36 of 130 requests failed (27.7%): 2001:db8::7 (sign.example.com/) answers 502"},
		{"ok", ok, "VERDICT OK 36 of 130 requests failed"},
	} {
		if tt.name == "ok" {
			tt.r.Totals.Failed = 0
			tt.want = "VERDICT OK 0 of 130 requests failed"
		}
		if tt.r.Verdict.Status == report.VerdictConcentrated && !strings.Contains(tt.want, " requests failed ("+pct(tt.r.Totals.FailureRate, tt.r.Totals.Requests)+"): "+tt.r.Verdict.Headline) {
			t.Fatalf("%s: the test's line %q does not hold the headline %q", tt.name, tt.want, tt.r.Verdict.Headline)
		}
		for _, width := range []int{80, 120} {
			for _, detail := range []bool{false, true} {
				b := Written(t, Text(Options{Width: width, Detail: detail}), tt.r)
				top, _, _ := strings.Cut(b, "\npinprobe ")
				if got := norm(top); got != tt.want {
					t.Errorf("%s at %d columns: the report starts\n%s\nwant\n%s", tt.name, width, top, tt.want)
				}
				last := tt.r.Verdict.Summary
				if !detail && tt.r.Verdict.Status == report.VerdictConcentrated {
					last, _, _ = strings.Cut(tt.want, " RELEASE GATE")
					last = strings.TrimPrefix(last, "VERDICT CONCENTRATED ") + "."
				}
				i := strings.LastIndex(b, "\nVERDICT ")
				if end := norm(b[i+1:]); i < len(b)/2 || !strings.HasPrefix(end, "VERDICT "+strings.ToUpper(tt.r.Verdict.Status)+" "+last) {
					t.Errorf("%s at %d columns (detail %v): the verdict at the end is not %q:\n%s", tt.name, width, detail, last, end)
				}
			}
		}
	}
}

// TestOutageLabel: a verdict of an outage is labelled one in every format,
// though its status stays spread.
func TestOutageLabel(t *testing.T) {
	r := fixture.CmpRun(t, fixture.CmpStart,
		fixture.CmpEndpoint{Address: "192.0.2.7", N: 40, Failed: 40, FailStatus: 502, Latency: time.Millisecond},
		fixture.CmpEndpoint{Address: "2001:db8::7", N: 40, Failed: 40, FailStatus: 502, Latency: time.Millisecond})
	r.Verdict = judge.Judge(r, judge.Once())
	if r.Verdict.Status != report.VerdictSpread || !r.Verdict.Outage {
		t.Fatalf("verdict %s, outage %v; want spread, an outage", r.Verdict.Status, r.Verdict.Outage)
	}
	for format, want := range map[string]string{"text": "VERDICT OUTAGE 80 of 80 requests failed (100.0%): every request to every address",
		"markdown": "> **Verdict: outage.** Every request to every address failed", "html": `<span class="badge">OUTAGE</span>`} {
		w := Must(ForFormat(format, Options{Width: 120}))
		b := Written(t, w, r)
		if !strings.Contains(b, want) {
			t.Errorf("%s lacks %q:\n%.600s", format, want, b)
		}
	}
}

// TestTerseText: by default the text report leaves out the statistics and
// what says little in the run at hand, and keeps a block where it tells
// something; --detail writes every block. The inside report: DNS that
// repeats the tables and a 5-slice timeline go, the phases stay while an
// address is slow and go without; the golden report: DNS stays for its
// host that did not resolve, the phases for a refused connection, the
// timeline for its 10 slices.
func TestTerseText(t *testing.T) {
	stats := []string{"95% CI", "p<1e-9; ", "Bonferroni", "against 0 of 36 from the other values"}
	notSlow := insideReport(t)
	notSlow.Verdict.Slow = nil
	for _, tt := range []struct {
		name       string
		r          *report.Report
		detail     bool
		has, hasNo []string
	}{
		{"inside", insideReport(t), false, []string{"WHERE THE TIME WENT", "SAMPLE REQUESTS  the first failed of each address", detailHint},
			append([]string{"DNS ANSWERS", "TIMELINE"}, stats...)},
		{"inside-not-slow", notSlow, false, []string{"BY ENDPOINT"}, []string{"WHERE THE TIME WENT", "DNS ANSWERS", "TIMELINE"}},
		{"inside-detail", insideReport(t), true, append([]string{"DNS ANSWERS", "TIMELINE", "WHERE THE TIME WENT"}, stats...), []string{detailHint}},
		{"golden", fixture.GoldenReport(t), false, []string{"DNS ANSWERS", "WHERE THE TIME WENT", "TIMELINE"}, []string{"95% CI", "Bonferroni"}},
	} {
		out := Written(t, Text(Options{Width: 400, Detail: tt.detail}), tt.r)
		for _, w := range tt.has {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, out)
			}
		}
		for _, w := range tt.hasNo {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", tt.name, w, out)
			}
		}
	}
}
