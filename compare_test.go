package main

// pinprobe compare on real runs against loopback servers: a slowdown
// between BEFORE and AFTER fails the gate, unchanged runs pass it time
// after time, and runs that do not match are said not to.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/demo"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// cmpDoc is the part of a pinprobe.compare/v1 document these tests read.
type cmpDoc struct {
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	Match      string `json:"match"`
	Common     int    `json:"common"`
	Totals     struct {
		Latency struct {
			Tested bool   `json:"tested"`
			Change string `json:"change"`
			P50    struct {
				BeforeMS float64 `json:"before_ms"`
				AfterMS  float64 `json:"after_ms"`
				PSlower  float64 `json:"p_slower"`
			} `json:"p50"`
			P99 struct {
				BeforeMS float64 `json:"before_ms"`
				AfterMS  float64 `json:"after_ms"`
				PSlower  float64 `json:"p_slower"`
			} `json:"p99"`
		} `json:"latency"`
	} `json:"totals"`
	Endpoints []struct {
		Address     string `json:"address"`
		Change      string `json:"change"`
		AfterTarget string `json:"after_target"`
		Latency     struct {
			Change string `json:"change"`
		} `json:"latency"`
	} `json:"endpoints"`
}

// compareJSON runs compare --format json (with extra flags) and decodes
// its document, checked against the schema.
func compareJSON(t *testing.T, extra ...string) cmpDoc {
	t.Helper()
	code, stdout, stderr := pinprobe(t, append([]string{"compare", "--format", "json"}, extra...)...)
	if code != exitOK {
		t.Fatalf("compare --format json %v: exit %d\n%s", extra, code, stderr)
	}
	checkSchema(t, kindCompare, []byte(stdout))
	var c cmpDoc
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// delayFleet is a fleet on 127.0.0.1 and 127.0.0.2 whose answers wait
// delay[address] first, settable between runs.
func delayFleet(t *testing.T, host string) (*testserver.Fleet, *[2]atomic.Int64) {
	var delay [2]atomic.Int64
	wait := func(i int) testserver.Policy {
		return func(n int64, r *http.Request) testserver.Answer {
			return testserver.Answer{Status: http.StatusOK, Delay: time.Duration(delay[i].Load())}
		}
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: host, Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4a: wait(0), testserver.Lo4b: wait(1),
	}}, testserver.Lo4a, testserver.Lo4b)
	return f, &delay
}

// TestCompareSlowerServer: a server adding 50 ms to every answer is a
// regression, each endpoint and the total slower; one address made 20 ms
// slower is named alone. Each BEFORE is probed side by side with its AFTER
// (two servers, ports matched with --match host), so both meet the same
// machine, at 100 req/s a side: the runs' own load must not hide 50 ms.
func TestCompareSlowerServer(t *testing.T) {
	check.Long(t, "seconds of live traffic")
	dir := t.TempDir()
	b, a, base, one := filepath.Join(dir, "before.json"), filepath.Join(dir, "after.json"), filepath.Join(dir, "base.json"), filepath.Join(dir, "one.json")
	sideBySide := func(before, after string, delay [2]time.Duration) {
		t.Helper()
		f, _ := delayFleet(t, "")
		g, gDelay := delayFleet(t, "")
		gDelay[0].Store(int64(delay[0]))
		gDelay[1].Store(int64(delay[1]))
		var runs []<-chan runOutcome
		for _, r := range []struct {
			f    *testserver.Fleet
			file string
		}{{f, before}, {g, after}} {
			ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
			defer cancel()
			runs = append(runs, goPinprobe(ctx, "-q", "--rate", "100", "-n", "200", "--resolve", r.f.Resolve(), "-o", r.file, r.f.URL()))
		}
		for _, done := range runs {
			o := <-done
			o.noPanic(t)
			if o.code != exitOK {
				t.Fatalf("pinprobe %v: exit %d\n%s", o.args, o.code, o.stderr)
			}
		}
	}
	sideBySide(b, a, [2]time.Duration{50 * time.Millisecond, 50 * time.Millisecond})
	sideBySide(base, one, [2]time.Duration{0, 20 * time.Millisecond})

	code, stdout, stderr := pinprobe(t, "compare", "--match", "host", "--fail-on-regression", b, a)
	first, _, _ := strings.Cut(stdout, "\n")
	if code != exitFail || !strings.HasPrefix(first, "REGRESSED every endpoint slower, in total p50 ") || !strings.Contains(stderr, "regression") {
		t.Errorf("compare --fail-on-regression, 50 ms added: exit %d, first line %q, stderr %q; want 1, REGRESSED, every endpoint slower", code, first, stderr)
	}
	c := compareJSON(t, "--match", "host", b, a)
	l := c.Totals.Latency
	t.Logf("50 ms added: p50 %.1f → %.1f ms, p = %.2g", l.P50.BeforeMS, l.P50.AfterMS, l.P50.PSlower)
	if c.Status != "regressed" || !l.Tested || l.Change != "slower" || l.P50.AfterMS-l.P50.BeforeMS < 45 || l.P50.PSlower > 1e-9 {
		t.Errorf("total latency %+v, status %s; want slower by about 50 ms at p50, p<1e-9", l, c.Status)
	}
	for _, e := range c.Endpoints {
		if e.Latency.Change != "slower" || e.Change != "same" {
			t.Errorf("%s: failures %s, latency %s; want same, slower", e.Address, e.Change, e.Latency.Change)
		}
	}
	c = compareJSON(t, "--match", "host", base, one)
	if !strings.HasPrefix(c.Conclusion, "regression: 127.0.0.2 slower: p50 ") || strings.Contains(c.Conclusion, "127.0.0.1") {
		t.Errorf("20 ms on 127.0.0.2: %q; want 127.0.0.2 slower, 127.0.0.1 not named", c.Conclusion)
	}
	// Within a tolerance set above it, it is no regression.
	if code, stdout, _ := pinprobe(t, "compare", "--match", "host", "--fail-on-regression", "--max-latency-increase", "100ms", base, one); code != exitOK {
		t.Errorf("--max-latency-increase 100ms, 20 ms slower: exit %d; want 0\n%s", code, stdout)
	}
	// And 50 ms back to nothing is faster: an improvement, exit 0.
	if c := compareJSON(t, "--match", "host", a, b); c.Status != "improved" || !strings.HasPrefix(c.Conclusion, "improvement: every endpoint faster, in total p50 ") {
		t.Errorf("50 ms taken away: %s: %q; want improved, every endpoint faster", c.Status, c.Conclusion)
	}
}

// TestCompareUnchangedServer: pairs of runs of the same server, a few
// milliseconds an answer, never fail the gate: no false regression in
// repeated runs at the default level and tolerance. BEFORE and AFTER of a
// pair run at the same time, so that both meet the same machine: one run
// after the other, a machine that stalls during one of them (a loaded CI
// runner: once, 40 ms on every answer for a second) makes that run really
// slower, and compare rightly says so. Two pairs run at a time, all four
// runs meeting the same machine. The regressions with no tolerance at all
// (any significant move) are counted and logged too.
func TestCompareUnchangedServer(t *testing.T) {
	check.Long(t, "pairs of runs of an unchanged server")
	f, delay := delayFleet(t, "")
	delay[0].Store(int64(2 * time.Millisecond))
	delay[1].Store(int64(2 * time.Millisecond))
	dir := t.TempDir()
	const pairs, together = 8, 2
	bare := 0
	for first := 0; first < pairs; first += together {
		var runs []<-chan runOutcome
		for i := first; i < first+together; i++ {
			for _, side := range []string{"b", "a"} {
				ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
				defer cancel()
				file := filepath.Join(dir, fmt.Sprintf("%s%d.json", side, i))
				runs = append(runs, goPinprobe(ctx, "-q", "--rate", "400", "-n", "400", "--resolve", f.Resolve(), "-o", file, f.URL()))
			}
		}
		for _, done := range runs {
			o := <-done
			o.noPanic(t)
			if o.code != exitOK {
				t.Fatalf("pinprobe %v: exit %d\n%s", o.args, o.code, o.stderr)
			}
		}
		for i := first; i < first+together; i++ {
			b, a := filepath.Join(dir, fmt.Sprintf("b%d.json", i)), filepath.Join(dir, fmt.Sprintf("a%d.json", i))
			code, stdout, stderr := pinprobe(t, "compare", "--fail-on-regression", b, a)
			if first, _, _ := strings.Cut(stdout, "\n"); code != exitOK || !strings.HasPrefix(first, "UNCHANGED ") && !strings.HasPrefix(first, "IMPROVED ") {
				t.Errorf("pair %d of the same server: exit %d, %q\n%s; want 0, unchanged", i, code, first, stderr)
			}
			if c := compareJSON(t, "--max-latency-increase", "0", b, a); c.Status == "regressed" {
				bare++
				t.Logf("pair %d with --max-latency-increase 0: %s", i, c.Conclusion)
			}
		}
	}
	t.Logf("%d pairs of unchanged runs: 0 regressions allowed at the default tolerance; %d with --max-latency-increase 0", pairs, bare)
}

// TestCompareMismatchedRuns: runs of other ports, paths or hosts are named
// as such and fail the gate, even when BEFORE failed and AFTER does not
// (that was "IMPROVED failures gone"); where only the port differs,
// --match host compares them.
func TestCompareMismatchedRuns(t *testing.T) {
	t.Parallel()
	failing := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(4, fx503),
	}}, testserver.Lo4a, testserver.Lo4b)
	otherPort := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(4, fx503),
	}}, testserver.Lo4a, testserver.Lo4b)
	healthy := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a, testserver.Lo4b)
	otherHost := testserver.StartFleet(t, testserver.FleetOptions{Host: "other.test"}, testserver.Lo4a, testserver.Lo4b)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name+".json") }
	// Side by side, so that --match host of the other port compares runs
	// that met the same machine.
	var runs []<-chan runOutcome
	for _, r := range []struct {
		f         *testserver.Fleet
		url, name string
	}{{failing, failing.URL(), "before"}, {otherPort, otherPort.URL(), "port"}, {healthy, healthy.URL() + "health", "path"}, {otherHost, otherHost.URL(), "host"}} {
		ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
		defer cancel()
		runs = append(runs, goPinprobe(ctx, "-q", "--rate", "800", "-n", "100", "--resolve", r.f.Resolve(), "-o", file(r.name), r.url))
	}
	for _, done := range runs {
		o := <-done
		o.noPanic(t)
		if o.code != exitOK {
			t.Fatalf("pinprobe %v: exit %d\n%s", o.args, o.code, o.stderr)
		}
	}
	addrs := "127.0.0.1, 127.0.0.2 at "
	tests := []struct {
		name, after string
		hint        string // what the conclusion ends with
	}{
		{"another port", "port", "; AFTER probed " + addrs + otherPort.URL() + "; only the port differs: --match host compares them"},
		{"another path, healthy", "path", "; AFTER probed " + addrs + healthy.URL() + "health; the paths differ"},
		{"another host, healthy", "host", "; AFTER probed " + addrs + otherHost.URL() + "; the hosts differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := pinprobe(t, "compare", "--fail-on-regression", file("before"), file(tt.after))
			want := "no endpoint in common: BEFORE probed " + addrs + failing.URL() + tt.hint
			if code != exitFail || !strings.HasPrefix(stdout, "DISJOINT no endpoint in common: ") || !strings.Contains(stderr, "nothing was compared: "+want+"\n") {
				t.Errorf("exit %d, stdout %q…, stderr %q;\nwant 1, DISJOINT, %q", code, stdout[:min(len(stdout), 100)], stderr, want)
			}
			if c := compareJSON(t, file("before"), file(tt.after)); c.Conclusion != want {
				t.Errorf("conclusion %q; want %q", c.Conclusion, want)
			}
			for _, match := range []string{"endpoint", "host"} {
				compared := match == "host" && tt.after == "port"
				if c := compareJSON(t, "--match", match, file("before"), file(tt.after)); (c.Status != "disjoint") != compared {
					t.Errorf("--match %s: %s: %q; want disjoint, only --match host of another port compared", match, c.Status, c.Conclusion)
				}
			}
		})
	}
	// Only the port differs: with --match host the same faults are the
	// same failure rates, endpoint by endpoint.
	c := compareJSON(t, "--match", "host", file("before"), file("port"))
	if c.Match != "host" || c.Common != 2 || c.Status == "disjoint" || len(c.Endpoints) != 2 || c.Endpoints[0].AfterTarget != otherPort.URL() {
		t.Errorf("--match host: match %s, %d in common, %s: %q, endpoints %+v; want host, 2, after_target %s", c.Match, c.Common, c.Status, c.Conclusion, c.Endpoints, otherPort.URL())
	}
	for _, e := range c.Endpoints {
		if e.Change != "same" {
			t.Errorf("--match host: %s failures %s; want the same", e.Address, e.Change)
		}
	}
	if code, _, stderr := pinprobe(t, "compare", "--match", "port", file("before"), file("port")); code != exitUsage || !strings.Contains(stderr, "--match") {
		t.Errorf("--match port: exit %d, %q; want 2 naming --match", code, stderr)
	}
}

// TestCompareMaxLatencyIncreaseFlag: the values --max-latency-increase
// takes, as the JSON echoes them, and those it refuses with exit 2.
func TestCompareMaxLatencyIncreaseFlag(t *testing.T) {
	t.Parallel()
	before, after := twoRuns(t, t.TempDir(), "run", goldenSaved(t))
	for _, tt := range []struct {
		args      []string
		ratio, ms float64
	}{
		{nil, 0.2, 2},
		{[]string{"10%"}, 0.1, 0},
		{[]string{"5ms"}, 0, 5},
		{[]string{"25%,1.5ms"}, 0.25, 1.5},
		{[]string{"25%", "1s"}, 0.25, 1000},
		{[]string{"0"}, 0, 0},
	} {
		var args []string
		for _, a := range tt.args {
			args = append(args, "--max-latency-increase", a)
		}
		code, stdout, stderr := pinprobe(t, append(append([]string{"compare", "--format", "json"}, args...), before, after)...)
		var c struct {
			Tol struct{ Ratio, MS float64 } `json:"max_latency_increase"`
		}
		if code != exitOK || json.Unmarshal([]byte(stdout), &c) != nil || c.Tol.Ratio != tt.ratio || c.Tol.MS != tt.ms {
			t.Errorf("%v: exit %d, %+v (%s); want ratio %v, ms %v", tt.args, code, c.Tol, stderr, tt.ratio, tt.ms)
		}
	}
	for _, bad := range [][]string{{"20"}, {"-5%"}, {"fast"}, {"10%,20%"}, {"5ms", "6ms"}, {"0,5ms"}, {"2h"}} {
		var args []string
		for _, a := range bad {
			args = append(args, "--max-latency-increase", a)
		}
		code, _, stderr := pinprobe(t, append(append([]string{"compare"}, args...), before, after)...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--max-latency-increase") {
			t.Errorf("%v: exit %d, %q; want 2 and one line naming the flag", bad, code, stderr)
		}
	}
}

// TestDemoSaysItsPort: when its port (47080) is taken, the demo says so
// and which port it took, and compare of two such runs (each on a port of
// its own) says only the port differs; --match host compares them, as the
// README says. The test holds a port of its own as the demo's: 47080
// itself may be taken and freed by anything else on the machine.
func TestDemoSaysItsPort(t *testing.T) {
	check.Long(t, "two demo runs")
	hold, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	port := hold.Addr().(*net.TCPAddr).Port
	demo.Preferred = port
	t.Cleanup(func() { demo.Preferred = demo.Port })
	dir := t.TempDir()
	runs := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
	want := fmt.Sprintf("pinprobe: demo: port %d is taken on 127.0.0.1, so the gateway took port ", port)
	// The two at once: each takes a port of its own, and both meet the
	// same machine, so that compare has nothing to see but the ports.
	var done []<-chan runOutcome
	for _, file := range runs {
		ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
		defer cancel()
		done = append(done, goPinprobe(ctx, "--demo", "-q", "-d", "2s", "-r", "90", "-o", file))
	}
	for _, d := range done {
		o := <-d
		o.noPanic(t)
		if o.code != exitOK || !strings.Contains(o.stderr, want) || !strings.Contains(o.stderr, "only with --match host") {
			t.Errorf("demo with port %d held: exit %d, stderr:\n%s\nwant a line %q…", port, o.code, o.stderr, want)
		}
	}
	c := compareJSON(t, runs[0], runs[1])
	if c.Status != "disjoint" || !strings.HasSuffix(c.Conclusion, "; only the port differs: --match host compares them") {
		t.Errorf("compare of the two demo runs: %s: %q; want disjoint, only the port differs", c.Status, c.Conclusion)
	}
	c = compareJSON(t, "--match", "host", runs[0], runs[1])
	if c.Status == "disjoint" || c.Status == "improved" || c.Common < 2 {
		t.Errorf("--match host: %s: %q, %d in common; want the demo's endpoints compared", c.Status, c.Conclusion, c.Common)
	}
	// With its port free, the demo takes it and says nothing of it (its
	// notes say the port; -q would hide them).
	hold.Close()
	code, _, stderr := pinprobe(t, "--demo", "-d", "1s", "-r", "90", "-o", filepath.Join(dir, "c.json"))
	if code != exitOK || strings.Contains(stderr, "is taken") || !strings.Contains(stderr, fmt.Sprintf(" port %d;", port)) {
		t.Errorf("demo with port %d free: exit %d, stderr:\n%s\nwant it on that port, nothing said of it", port, code, stderr)
	}
}

// TestCompareBriefFlag: compare --brief gives the one-screen comparison in
// text and Markdown (shorter than the full one, 40 lines at most, the
// conclusion first) and leaves JSON whole.
func TestCompareBriefFlag(t *testing.T) {
	t.Parallel()
	before, after := twoRuns(t, t.TempDir(), "run", goldenSaved(t))
	for _, format := range []string{"text", "markdown", "json"} {
		_, full, _ := pinprobe(t, "compare", "--format", format, before, after)
		code, brief, stderr := pinprobe(t, "compare", "--brief", "--format", format, before, after)
		if code != exitOK {
			t.Fatalf("compare --brief --format %s: exit %d\n%s", format, code, stderr)
		}
		lines, fullLines := strings.Count(brief, "\n"), strings.Count(full, "\n")
		switch {
		case format == "json" && brief != full:
			t.Errorf("compare --brief --format json differs from the whole JSON")
		case format == "json":
		case lines > 40 || lines >= fullLines:
			t.Errorf("compare --brief --format %s: %d lines (the full one %d); want at most 40 and fewer:\n%s", format, lines, fullLines, brief)
		case !strings.Contains(strings.ToLower(brief), "none of ") || !strings.Contains(brief, "changed"):
			t.Errorf("compare --brief --format %s does not say that nothing changed:\n%s", format, brief)
		}
	}
}
