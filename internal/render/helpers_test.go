package render

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// signRun is the demo's fleet, for the reports built here from synthetic
// results: http://sign.example.com:8080/sign on 192.0.2.1, 192.0.2.2 and
// 2001:db8::1, failing on 5xx, from 20:43 UTC, its instances named by
// X-Served-By.
type signRun struct {
	tg    *probe.Target
	eps   []*probe.Endpoint
	fail  report.FailStatus
	start time.Time
	agg   *collect.Aggregator
}

func newSignRun(t *testing.T) *signRun {
	t.Helper()
	tg := fixture.MustTarget(t, "http://sign.example.com:8080/sign")
	s := &signRun{tg: tg, start: time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC), eps: []*probe.Endpoint{
		{ID: 0, Target: tg, Addr: netip.MustParseAddr("192.0.2.1")},
		{ID: 1, Target: tg, Addr: netip.MustParseAddr("192.0.2.2")},
		{ID: 2, Target: tg, Addr: netip.MustParseAddr("2001:db8::1")},
	}}
	var err error
	if s.fail, err = report.ParseFailStatus("5xx"); err != nil {
		t.Fatal(err)
	}
	s.agg = collect.NewAggregator(s.eps)
	s.agg.SetGroupBy([]string{"X-Served-By"})
	return s
}

// verdictOnly is a report of nothing sent but its verdict v.
func verdictOnly(v report.Verdict) *report.Report {
	return &report.Report{Version: "0.1.0", Families: map[string]*report.Stats{}, Verdict: v}
}

// noData is the report of a run that sent nothing.
func noData() *report.Report {
	return verdictOnly(report.Verdict{Status: report.VerdictNoData, Summary: "No request was sent, so there is nothing to judge."})
}

// ms is v milliseconds.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// result is the i-th request to endpoint ep, sent at sent after the start
// and answered 200, on connection conn of four requests each, rotating
// over four connections as the engine does; port is its local port; a new
// connection took 0.3 ms to connect.
func (s *signRun) result(ep, i int, sent time.Duration, port func(conn int) int) (r probe.Result, conn int) {
	client := map[bool]netip.Addr{false: netip.MustParseAddr("192.0.2.100"), true: netip.MustParseAddr("2001:db8::100")}
	e := s.eps[ep]
	conn = i/16*4 + i%4 + 1
	r = probe.Result{Endpoint: ep, Start: s.start.Add(sent), Status: 200,
		RequestID: fmt.Sprintf("pinprobe-0123abcd-%d-%d", ep, i+1), ConnID: uint64(conn), ConnReq: i%16/4 + 1,
		Local:  netip.AddrPortFrom(client[e.Addr.Is6()], uint16(port(conn))),
		Remote: netip.AddrPortFrom(e.Addr, s.tg.Port())}
	r.Reused = r.ConnReq > 1
	if !r.Reused {
		r.Connect = ms(0.3)
	}
	return r, conn
}

// add counts r, judged by the run's failure rule; a 502 carries the Azure
// gateway's error page.
func (s *signRun) add(r probe.Result) {
	r.TTFB = r.Latency * 9 / 10
	if r.Status == 502 {
		r.Server, r.BodyHash = "Microsoft-Azure-Application-Gateway/v2", 0x8aa9b7e56a3ec6e6
		r.Exemplar = []byte("<html><center>Microsoft-Azure-Application-Gateway/v2</center></html>")
	}
	s.agg.Add(fixture.Decide(s.fail, r))
}

// report closes the run at end, judged, sent by pinprobe args… at rate
// for durationS; settled is --until-verdict's look, or nil.
func (s *signRun) report(end time.Time, rate, durationS float64, settled *report.Settled, args ...string) *report.Report {
	return fixture.CloseJudged(s.agg, &report.Report{
		Version:   "0.1.0",
		Command:   append(append([]string{"pinprobe"}, args...), s.tg.String()),
		StartedAt: report.Time{Time: s.start}, EndedAt: report.Time{Time: end},
		Plan:    report.Plan{Rate: rate, DurationS: durationS, Concurrency: 10, Timeout: 10, HTTP: "auto", FailStatus: "5xx", ConnRequests: 4},
		DNS:     []report.DNS{{Host: "sign.example.com", Port: 8080, Source: "system", Addresses: []string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}}},
		Settled: settled,
	})
}

// The helpers below serve the tests of render_test too.

// Written is doc as write writes it; an error fails t.
func Written[T any](t testing.TB, write func(io.Writer, T) error, doc T) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b, doc); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// CheckGolden compares got with the golden file at path, rewritten first
// with -update; a difference is said at its first line.
func CheckGolden(t testing.TB, path, got string) {
	t.Helper()
	if *docfix.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rerun the test with -update to create it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		if g, w := lineAt(gl, i), lineAt(wl, i); g != w {
			t.Errorf("output differs from %s at line %d (rerun with -update if the change is intended):\ngot:  %s\nwant: %s", path, i+1, g, w)
			return
		}
	}
	t.Errorf("output differs from %s in its trailing newlines: %d lines, want %d (rerun with -update if the change is intended)", path, len(gl), len(wl))
}

// lineAt is lines[i], or "" past the end.
func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// CheckWidth reports each line of out wider than width columns.
func CheckWidth(t testing.TB, out string, width int) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("line %d is %d columns wide; want at most %d: %q", i+1, n, width, line)
		}
	}
}

// norm is s's words, one space apart: text as read, whatever its wrapping.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// Must is w, its error a panic: a writer of a format known to exist.
func Must[W any](w W, err error) W {
	if err != nil {
		panic(err)
	}
	return w
}
