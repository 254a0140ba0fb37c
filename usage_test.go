package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pinprobe/internal/demo"
	"pinprobe/internal/testserver"

	"github.com/spf13/pflag"
)

// ---------------------------------------------------------------------------
// 1. Bad input

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("this is not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	const u = "http://app.test/"
	tests := []struct {
		name string
		args []string
		want []string // substrings of the one stderr line: the flag and the value
	}{
		{"malformed URL", []string{"http://[::1"}, []string{"URL", `"http://[::1"`}},
		{"unsupported scheme", []string{"ftp://app.test/file"}, []string{`"ftp://app.test/file"`, `scheme "ftp"`}},
		{"URL without scheme", []string{"app.test/path"}, []string{`"app.test/path"`, "scheme"}},
		{"URL without host", []string{"http:///path"}, []string{`"http:///path"`, "host"}},
		{"URL port out of range", []string{"http://app.test:99999/"}, []string{`"http://app.test:99999/"`, "99999"}},
		{"rate zero", []string{"--rate", "0", u}, []string{"--rate", `"0"`}},
		{"rate negative", []string{"--rate", "-5", u}, []string{"--rate", `"-5"`}},
		{"rate not a number", []string{"--rate", "abc", u}, []string{"--rate", `"abc"`}},
		{"rate short flag", []string{"-r", "0", u}, []string{"--rate", `"0"`}},
		{"rate max unbounded", []string{"--rate", "max", "--duration", "0", u}, []string{"--rate max", "--duration"}},
		{"duration negative", []string{"--duration", "-1s", u}, []string{"--duration", "-1s"}},
		{"duration without unit", []string{"--duration", "5", u}, []string{"--duration", `"5"`}},
		{"requests negative", []string{"--requests", "-1", u}, []string{"--requests", "-1"}},
		{"concurrency zero", []string{"--concurrency", "0", u}, []string{"--concurrency", "0"}},
		{"timeout zero", []string{"--timeout", "0", u}, []string{"--timeout", "0"}},
		{"resolve no port", []string{"--resolve", "app.test", u}, []string{"--resolve", `"app.test"`}},
		{"resolve no address", []string{"--resolve", "app.test:80", u}, []string{"--resolve", `"app.test:80"`}},
		{"resolve empty address", []string{"--resolve", "app.test:80:", u}, []string{"--resolve", `"app.test:80:"`}},
		{"resolve not an IP", []string{"--resolve", "app.test:80:backend1", u}, []string{"--resolve", "backend1"}},
		{"resolve one bad IP in list", []string{"--resolve", "app.test:80:127.0.0.1,300.1.1.1", u}, []string{"--resolve", "300.1.1.1"}},
		{"resolve port zero", []string{"--resolve", "app.test:0:127.0.0.1", u}, []string{"--resolve", `"app.test:0:127.0.0.1"`}},
		{"resolve port too big", []string{"--resolve", "app.test:70000:127.0.0.1", u}, []string{"--resolve", "70000"}},
		{"resolve port not a number", []string{"--resolve", "app.test:http:127.0.0.1", u}, []string{"--resolve", `"app.test:http:127.0.0.1"`}},
		{"resolve no host", []string{"--resolve", ":80:127.0.0.1", u}, []string{"--resolve", `":80:127.0.0.1"`}},
		{"resolve unclosed bracket", []string{"--resolve", "[::1:80:127.0.0.1", u}, []string{"--resolve", `"[::1:80:127.0.0.1"`}},
		{"resolve zoned address", []string{"--resolve", "app.test:80:fe80::1%eth0", u}, []string{"--resolve", "fe80::1%eth0"}},
		{"cacert missing", []string{"--cacert", missing, u}, []string{"--cacert", missing, "no such file"}},
		{"cacert not PEM", []string{"--cacert", notPEM, u}, []string{"--cacert", notPEM, "PEM"}},
		{"cacert with insecure", []string{"--cacert", notPEM, "--insecure", u}, []string{"--cacert", "--insecure"}},
		{"format xml", []string{"--format", "xml", u}, []string{"--format", `"xml"`}},
		{"http 3", []string{"--http", "3", u}, []string{"--http", `"3"`}},
		{"-4 and -6", []string{"-4", "-6", u}, []string{"-4", "-6"}},
		{"fail-status 7xx", []string{"--fail-status", "7xx", u}, []string{"--fail-status", "7xx"}},
		{"fail-status abc", []string{"--fail-status", "abc", u}, []string{"--fail-status", "abc"}},
		{"fail-status bad item in list", []string{"--fail-status", "5xx,abc", u}, []string{"--fail-status", "abc"}},
		{"fail-status reversed range", []string{"--fail-status", "503-500", u}, []string{"--fail-status", "503-500"}},
		{"fail-status too small", []string{"--fail-status", "99", u}, []string{"--fail-status", "99"}},
		{"dns-server bogus", []string{"--dns-server", "bogus", u}, []string{"--dns-server", `"bogus"`}},
		{"dns-server port too big", []string{"--dns-server", "127.0.0.1:99999", u}, []string{"--dns-server", "127.0.0.1:99999"}},
		{"header without colon", []string{"--header", "NoColon", u}, []string{"--header", "NoColon"}},
		{"header short flag", []string{"-H", "X-Trace 1", u}, []string{"--header", "X-Trace 1"}},
		{"header empty name", []string{"-H", ": value", u}, []string{"--header", ": value"}},
		{"method with space", []string{"--method", "GET X", u}, []string{"--method", "GET X"}},
		{"body file missing", []string{"--body", "@" + missing, u}, []string{"--body", missing}},
		{"output in missing directory", []string{"-o", filepath.Join(missing, "r.json"), u}, []string{"--output", missing}},
		{"preflight both ways", []string{"--preflight", "--no-preflight", u}, []string{"--preflight", "--no-preflight"}},
		{"demo with a URL", []string{"--demo", u}, []string{"--demo", u}},
		{"no URL", nil, []string{"no URL"}},
		{"no URL, only flags", []string{"-q", "--rate", "5"}, []string{"no URL"}},
		{"unknown flag", []string{"--bogus", u}, []string{"--bogus"}},
		{"unknown short flag", []string{"-Z", u}, []string{"Z"}},
		{"flag without value", []string{u, "--rate"}, []string{"--rate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := pinprobe(t, tt.args...)
			if code != exitUsage {
				t.Errorf("pinprobe %q: exit %d; want %d (stderr %q)", tt.args, code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("pinprobe %q: stdout %q; want nothing", tt.args, stdout)
			}
			if !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("pinprobe %q: stderr %q; want exactly one line", tt.args, stderr)
			}
			if !strings.HasPrefix(stderr, "pinprobe: ") {
				t.Errorf("pinprobe %q: stderr %q; want it to start with \"pinprobe: \"", tt.args, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("pinprobe %q: stderr %q; want it to name %q", tt.args, stderr, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(missing, "r.json")); err == nil {
		t.Errorf("a rejected -o left its file behind")
	}
}

// ---------------------------------------------------------------------------
// 2. Hosts that do not resolve

func TestNothingResolves(t *testing.T) {
	server := testserver.StartDNS(t, nil).Addr().String()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"NXDOMAIN from --dns-server", []string{"--dns-server", server, "http://nx.test:8080/"},
			[]string{"nx.test", "no such host", server}},
		{"--resolve for another port falls back to DNS",
			[]string{"--resolve", "nx.test:81:127.0.0.1", "--dns-server", server, "http://nx.test:80/"},
			[]string{"nx.test", "no such host"}},
		{"every target NXDOMAIN", []string{"--dns-server", server, "http://nx.test/", "https://other.invalid/"},
			[]string{"nx.test", "other.invalid"}},
		{"-6 with only IPv4 addresses", []string{"-6", "--resolve", "app.test:80:127.0.0.1", "http://app.test/"},
			[]string{"app.test", "ipv6", "127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-q", "--requests", "1"}, tt.args...)
			code, stdout, stderr := pinprobe(t, args...)
			if code != exitNoAddress {
				t.Errorf("exit %d; want %d; stderr:\n%s", code, exitNoAddress, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q; want nothing", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(stderr, "nothing to probe") {
				t.Errorf("stderr does not say there is nothing to probe:\n%s", stderr)
			}
		})
	}
}

func TestSomeTargetsUnresolvable(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: "good.test"}, testserver.Lo4a, testserver.Lo6)
	server := testserver.StartDNS(t, map[string][]netip.Addr{"good.test": {testserver.Lo4a, testserver.Lo6}}).Addr().String()
	bad := fmt.Sprintf("http://nx.test:%d/", f.Port())
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "200", "--requests", "20",
		"--dns-server", server, f.URL(), bad)
	if code != exitOK {
		t.Fatalf("exit %d; want %d; stderr:\n%s", code, exitOK, stderr)
	}
	if !strings.Contains(stderr, "nx.test") || !strings.Contains(stderr, "no such host") {
		t.Errorf("stderr does not say nx.test did not resolve:\n%s", stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Errorf("endpoints %v; want 127.0.0.1 and ::1 of good.test only", got)
	}
	for _, e := range rep.Endpoints {
		if e.Host != "good.test" {
			t.Errorf("endpoint %s has host %q; want good.test", e.Address, e.Host)
		}
	}
	if rep.Totals.Requests != 20 || rep.Totals.Failed != 0 {
		t.Errorf("totals: %d requests, %d failed; want 20, 0", rep.Totals.Requests, rep.Totals.Failed)
	}
	checkFleet(t, f, rep)

	if len(rep.DNS) != 2 {
		t.Fatalf("dns has %d entries; want 2: %+v", len(rep.DNS), rep.DNS)
	}
	good, nx := rep.DNS[0], rep.DNS[1]
	if good.Host != "good.test" || good.Source != "dns "+server || !slices.Equal(good.Addresses, []string{"127.0.0.1", "::1"}) || good.Error != "" {
		t.Errorf("dns[0] = %+v; want good.test from %q with 127.0.0.1, ::1", good, "dns "+server)
	}
	if nx.Host != "nx.test" || len(nx.Addresses) != 0 || !strings.Contains(nx.Error, "no such host") {
		t.Errorf("dns[1] = %+v; want nx.test with no addresses and a no such host error", nx)
	}
}

// ---------------------------------------------------------------------------
// 3. The JSON contract against three real servers

func TestJSONReportThreeAddresses(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: testserver.Status(http.StatusBadGateway)},
	}, testserver.Loopbacks()...)
	resolve := fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2,::1", f.Port())
	args := []string{"--resolve", resolve, "--format", "json", "-q", "--rate", "300", "--requests", "90",
		"-H", "Authorization: Bearer x", "-H", "X-Api-Key: y", "--header=Cookie: session=abc",
		"-H", "X-Trace: visible", f.URL()}
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)

	wantCmd := []string{"pinprobe", "--resolve", resolve, "--format", "json", "-q", "--rate", "300", "--requests", "90",
		"-H", "Authorization: REDACTED", "-H", "X-Api-Key: REDACTED", "--header=Cookie: REDACTED",
		"-H", "X-Trace: visible", f.URL()}
	if !slices.Equal(rep.Command, wantCmd) {
		t.Errorf("command = %q;\nwant      %q", rep.Command, wantCmd)
	}
	for _, secret := range []string{"Bearer x", "session=abc", ": y"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("the report contains the secret %q", secret)
		}
	}
	if rep.Interrupted {
		t.Errorf("interrupted = true; want false")
	}

	wantDNS := []jsonDNS{{Host: "app.test", Port: int(f.Port()), Source: "resolve", Addresses: []string{"127.0.0.1", "127.0.0.2", "::1"}}}
	if len(rep.DNS) != 1 || rep.DNS[0].Host != wantDNS[0].Host || rep.DNS[0].Port != wantDNS[0].Port ||
		rep.DNS[0].Source != wantDNS[0].Source || !slices.Equal(rep.DNS[0].Addresses, wantDNS[0].Addresses) || rep.DNS[0].Error != "" {
		t.Errorf("dns = %+v; want %+v", rep.DNS, wantDNS)
	}

	if rep.Totals.Requests != 90 {
		t.Errorf("totals.requests = %d; want 90 (--requests 90)", rep.Totals.Requests)
	}
	if len(rep.Totals.Errors) != 0 {
		t.Errorf("transport errors %v; want none", rep.Totals.Errors)
	}
	wantEps := []struct{ addr, family string }{{"127.0.0.1", "ipv4"}, {"127.0.0.2", "ipv4"}, {"::1", "ipv6"}}
	if len(rep.Endpoints) != len(wantEps) {
		t.Fatalf("endpoints %v; want %v", endpointAddrs(rep), wantEps)
	}
	for i, w := range wantEps {
		e := rep.Endpoints[i]
		if e.Address != w.addr || e.Family != w.family || e.Port != int(f.Port()) || e.Host != "app.test" || e.Target != f.URL() {
			t.Errorf("endpoint %d = %s/%s port %d host %q target %q; want %s/%s port %d host app.test target %s",
				i, e.Address, e.Family, e.Port, e.Host, e.Target, w.addr, w.family, f.Port(), f.URL())
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
		}
		wantStatus := "200"
		if w.family == "ipv6" {
			wantStatus = "502"
		}
		if !equalCounts(e.Status, map[string]int64{wantStatus: e.Requests}) {
			t.Errorf("endpoint %s: status %v; want all %d %s", e.Address, e.Status, e.Requests, wantStatus)
		}
	}
	v4, v6 := rep.Families["ipv4"], rep.Families["ipv6"]
	if v6.FailureRate != 1.0 || v6.Failed != v6.Requests || v6.Requests == 0 {
		t.Errorf("families.ipv6: %d of %d failed, failure_rate %v; want all, 1.0", v6.Failed, v6.Requests, v6.FailureRate)
	}
	if v4.FailureRate != 0 || v4.Failed != 0 || v4.Requests == 0 {
		t.Errorf("families.ipv4: %d of %d failed, failure_rate %v; want none, 0.0", v4.Failed, v4.Requests, v4.FailureRate)
	}
	if want := float64(v6.Requests) / 90; abs(rep.Totals.FailureRate-want) > 1e-6 {
		t.Errorf("totals.failure_rate = %v; want %v", rep.Totals.FailureRate, want)
	}
	checkFleet(t, f, rep)
}

// ---------------------------------------------------------------------------
// 4. -o FILE

func TestOutputFile(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	dir := t.TempDir()
	common := []string{"-q", "--rate", "200", "--requests", "20", "--resolve", f.Resolve(), f.URL()}

	jsonFile := filepath.Join(dir, "report.json")
	code, stdout, stderr := pinprobe(t, append([]string{"--format", "json", "-o", jsonFile}, common...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	saved, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatalf("-o wrote nothing: %v", err)
	}
	if string(saved) != stdout {
		t.Errorf("-o FILE differs from --format json on stdout:\nfile:\n%s\nstdout:\n%s", saved, stdout)
	}
	rep := decodeReport(t, saved)
	checkReport(t, rep)
	checkFleet(t, f, rep)

	f = testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	common = []string{"-q", "--rate", "200", "--requests", "20", "--resolve", f.Resolve(), f.URL()}
	textFile := filepath.Join(dir, "sub-report.json")
	code, stdout, stderr = pinprobe(t, append([]string{"-o", textFile}, common...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "pinprobe "+version) || !strings.Contains(stdout, "BY ENDPOINT") || !strings.Contains(stdout, "· 20 requests ·") {
		t.Errorf("stdout is not the text report of 20 requests:\n%s", stdout)
	}
	if strings.Contains(stdout, `"schema"`) {
		t.Errorf("the JSON report leaked to stdout with --format text:\n%s", stdout)
	}
	saved, err = os.ReadFile(textFile)
	if err != nil {
		t.Fatalf("-o with --format text wrote nothing: %v", err)
	}
	rep = decodeReport(t, saved)
	checkReport(t, rep)
	if rep.Totals.Requests != 20 {
		t.Errorf("-o file: totals.requests = %d; want 20", rep.Totals.Requests)
	}
	checkFleet(t, f, rep)
}

// ---------------------------------------------------------------------------
// 5. Interrupt through run's context

func TestInterruptThroughContext(t *testing.T) {
	const n = 15
	// Requests take 50 ms, and from the n-th on they are held until the
	// interrupt has been given, so some are certainly in flight then.
	f := testserver.StartFleet(t, testserver.FleetOptions{Each: testserver.Delayed(50 * time.Millisecond), NotifyAt: n, Hold: true},
		testserver.Lo4a, testserver.Lo6)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := goPinprobe(ctx, "-q", "--format", "json", "--duration", "30s", "--rate", "100",
		"--no-preflight", "--resolve", f.Resolve(), f.URL())

	var cancelled time.Time
	var inFlight int64
	select {
	case <-f.Reached():
		inFlight = f.InFlight()
		cancelled = time.Now()
		cancel()
		f.Release()
	case o := <-done:
		o.noPanic(t)
		t.Fatalf("run returned %d before the servers saw %d requests; stderr:\n%s", o.code, n, o.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("the servers saw only %d requests in 15s; want %d", f.Total(), n)
	}
	var o runOutcome
	select {
	case o = <-done:
		o.noPanic(t)
	case <-time.After(10 * time.Second):
		t.Fatalf("run did not return within 10s of the interrupt")
	}
	if took := time.Since(cancelled); took > 5*time.Second {
		t.Errorf("run returned %v after the interrupt; want < 5s", took)
	}
	if o.code != exitInterrupted {
		t.Fatalf("exit %d; want %d; stderr:\n%s", o.code, exitInterrupted, o.stderr)
	}
	rep := decodeReport(t, []byte(o.stdout))
	checkReport(t, rep)
	if !rep.Interrupted {
		t.Errorf("interrupted = false; want true")
	}
	if rep.DurationS > 20 {
		t.Errorf("duration_s = %v; want the time until the interrupt, not the planned 30s", rep.DurationS)
	}
	t.Logf("servers saw %d requests, %d in flight at the interrupt", f.Total(), inFlight)
	if inFlight == 0 {
		t.Errorf("no request was in flight at the interrupt; the test proves less than it should")
	}
	if rep.Totals.Requests != f.Total() || rep.Totals.Requests < n {
		t.Errorf("totals.requests = %d; servers counted %d (at least %d)", rep.Totals.Requests, f.Total(), n)
	}
	if rep.Totals.Failed != 0 {
		t.Errorf("totals.failed = %d; want 0: requests in flight at the interrupt must finish, errors %v",
			rep.Totals.Failed, rep.Totals.Errors)
	}
	checkFleet(t, f, rep)
}

// ---------------------------------------------------------------------------
// 6. SIGINT to the real binary

// subprocess is a running pinprobe binary whose stderr is watched line by line.
type subprocess struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string // stderr, line by line; closed at EOF
	exited chan error
}

func startBinary(t *testing.T, ctx context.Context, bin string, args ...string) *subprocess {
	t.Helper()
	p := &subprocess{cmd: exec.CommandContext(ctx, bin, args...), lines: make(chan string, 100), exited: make(chan error, 1)}
	p.cmd.Stdout = &p.stdout
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(p.lines)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for this line
			}
		}
	}()
	go func() {
		<-readDone // Wait closes the pipe: read it all first
		p.exited <- p.cmd.Wait()
	}()
	return p
}

func (p *subprocess) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitLine waits for a stderr line containing s.
func (p *subprocess) waitLine(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("pinprobe closed stderr without printing %q; stderr:\n%s", s, p.stderrText())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no %q on stderr before the deadline; stderr:\n%s", s, p.stderrText())
		}
	}
}

// interruptAt sends SIGINT to the process once f has seen its n-th request
// (n is f's NotifyAt: see Fleet.Reached), failing the test if the process
// exits first or ctx ends.
func (p *subprocess) interruptAt(t *testing.T, ctx context.Context, f *testserver.Fleet, n int64) {
	t.Helper()
	select {
	case <-f.Reached():
	case err := <-p.exited:
		t.Fatalf("pinprobe exited (%v) before the server saw %d requests; stderr:\n%s", err, n, p.stderrText())
	case <-ctx.Done():
		t.Fatalf("the server saw only %d requests before the deadline", f.Total())
	}
	p.interrupt(t)
}

// interrupt sends SIGINT to the process.
func (p *subprocess) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
}

// wait returns the exit code of the process, failing the test unless it
// exits within limit.
func (p *subprocess) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("pinprobe: %v", err)
		}
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		p.cmd.Process.Kill()
		t.Fatalf("pinprobe did not exit within %v; stderr:\n%s", limit, p.stderrText())
		return -1
	}
}

func TestSIGINTSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on windows")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "pinprobe")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("one SIGINT: full report, exit 130", func(t *testing.T) {
		const n = 10
		f := testserver.StartFleet(t, testserver.FleetOptions{Each: testserver.Delayed(20 * time.Millisecond), NotifyAt: n}, testserver.Lo4a)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		p := startBinary(t, ctx, bin, "--rate", "100", "--duration", "30s", "-q", "--resolve", f.Resolve(), f.URL())
		p.interruptAt(t, ctx, f, n)
		if code := p.wait(t, 5*time.Second); code != exitInterrupted {
			t.Fatalf("exit %d after SIGINT; want %d; stderr:\n%s", code, exitInterrupted, p.stderrText())
		}
		out := p.stdout.String()
		for _, w := range []string{"INTERRUPTED", "BY FAMILY", "BY ENDPOINT", "127.0.0.1"} {
			if !strings.Contains(out, w) {
				t.Errorf("stdout has no %q:\n%s", w, out)
			}
		}
		m := regexp.MustCompile(`· (\d+) requests ·`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no request count in the report header:\n%s", out)
		}
		if got, want := m[1], strconv.FormatInt(f.Total(), 10); got != want {
			t.Errorf("report counts %s requests; the server counted %s", got, want)
		}
		if !strings.Contains(p.stderrText(), "interrupted") {
			t.Errorf("stderr does not acknowledge the interrupt:\n%s", p.stderrText())
		}
	})

	t.Run("second SIGINT: exit at once", func(t *testing.T) {
		const n = 5
		// From the n-th on, requests are held until the test ends: the
		// first SIGINT must wait for them, the second must not.
		f := testserver.StartFleet(t, testserver.FleetOptions{NotifyAt: n, Hold: true}, testserver.Lo4a)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		p := startBinary(t, ctx, bin, "--rate", "100", "--duration", "30s", "--timeout", "20s", "-q",
			"--resolve", f.Resolve(), f.URL())
		p.interruptAt(t, ctx, f, n)
		p.waitLine(t, ctx, "waiting for requests in flight")
		p.interrupt(t)
		if code := p.wait(t, 5*time.Second); code != exitInterrupted {
			t.Errorf("exit %d after the second SIGINT; want %d; stderr:\n%s", code, exitInterrupted, p.stderrText())
		}
		if p.stdout.Len() != 0 {
			t.Errorf("stdout %q; want no report after the second SIGINT", p.stdout.String())
		}
	})
}

// ---------------------------------------------------------------------------
// 7. The demo

func TestDemo(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--demo", "-q", "--duration", "1s", "--rate", "60", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if len(rep.Endpoints) < 2 {
		t.Fatalf("demo has endpoints %v; want at least two", endpointAddrs(rep))
	}
	failing := rep.Endpoints[len(rep.Endpoints)-1].Address // ::1, or the last IPv4 address without IPv6
	if slices.Contains(endpointAddrs(rep), "::1") {
		failing = "::1"
	}
	for _, e := range rep.Endpoints {
		if e.Host != demo.Host {
			t.Errorf("endpoint %s: host %q; want %s", e.Address, e.Host, demo.Host)
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
			continue
		}
		if e.Address == failing {
			if !equalCounts(e.Status, map[string]int64{"502": e.Requests}) || e.FailureRate != 1 {
				t.Errorf("failing endpoint %s: status %v, errors %v, failure_rate %v; want 100%% 502",
					e.Address, e.Status, e.Errors, e.FailureRate)
			}
		} else if e.Failed != 0 || !equalCounts(e.Status, map[string]int64{"200": e.Requests}) {
			t.Errorf("healthy endpoint %s: %d failed, status %v, errors %v; want all 200", e.Address, e.Failed, e.Status, e.Errors)
		}
	}
	if failing == "::1" {
		if v4 := rep.Families["ipv4"]; v4.Failed != 0 || v4.Requests == 0 {
			t.Errorf("families.ipv4: %d of %d failed; want none", v4.Failed, v4.Requests)
		}
		if v6 := rep.Families["ipv6"]; v6.FailureRate != 1 {
			t.Errorf("families.ipv6.failure_rate = %v; want 1", v6.FailureRate)
		}
	}
	if len(rep.DNS) != 1 || rep.DNS[0].Source != "demo" || rep.DNS[0].Host != demo.Host {
		t.Errorf("dns = %+v; want one entry for %s from demo", rep.DNS, demo.Host)
	}
}

// ---------------------------------------------------------------------------
// 8. --preflight

func TestPreflight(t *testing.T) {
	t.Run("one address closed", func(t *testing.T) {
		// One port on both addresses, served on 127.0.0.1 only: the
		// 127.0.0.2 listener is closed, so a connection there is refused.
		port, lns := testserver.ListenSamePort(t, testserver.Lo4a, testserver.Lo4b)
		lns[1].Close()
		requireRefused(t, netip.AddrPortFrom(testserver.Lo4b, port))
		hits := testserver.NewHits()
		testserver.Serve(t, lns[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(r) }), nil)
		code, stdout, stderr := pinprobe(t, "--preflight", "--resolve",
			fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", port), fmt.Sprintf("http://app.test:%d/", port))
		if code != exitFail {
			t.Errorf("exit %d; want %d; stderr:\n%s", code, exitFail, stderr)
		}
		lines := strings.Split(stdout, "\n")
		var open, shut string
		for _, l := range lines {
			switch {
			case strings.Contains(l, "127.0.0.1"):
				open = l
			case strings.Contains(l, "127.0.0.2"):
				shut = l
			}
		}
		if open == "" || !strings.Contains(open, " ok ") || strings.Contains(open, "✗") {
			t.Errorf("stdout does not list 127.0.0.1 as ok:\n%s", stdout)
		}
		if shut == "" || !strings.Contains(shut, "connect_refused") || !strings.Contains(shut, "✗") {
			t.Errorf("stdout does not list 127.0.0.2 as connect_refused:\n%s", stdout)
		}
		if !strings.Contains(stdout, "1 of 2 endpoints") {
			t.Errorf("stdout does not say 1 of 2 endpoints connect:\n%s", stdout)
		}
		if n := hits.Total(); n != 0 {
			t.Errorf("--preflight sent %d HTTP requests; want none", n)
		}
	})
	t.Run("all open", func(t *testing.T) {
		f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Loopbacks()...)
		code, stdout, stderr := pinprobe(t, "--preflight", "--resolve", f.Resolve(), f.URL())
		if code != exitOK {
			t.Errorf("exit %d; want 0; stderr:\n%s", code, stderr)
		}
		for _, a := range []string{"127.0.0.1", "127.0.0.2", "::1"} {
			if !strings.Contains(stdout, "  "+a+"  ") {
				t.Errorf("stdout does not list %s:\n%s", a, stdout)
			}
		}
		if strings.Contains(stdout, "✗") || !strings.Contains(stdout, "3 of 3 endpoints") {
			t.Errorf("stdout does not show 3 of 3 endpoints connecting:\n%s", stdout)
		}
		if n := f.Total(); n != 0 {
			t.Errorf("--preflight sent %d HTTP requests; want none", n)
		}
	})
}

// ---------------------------------------------------------------------------
// 9. --help and --version

func TestHelp(t *testing.T) {
	// The long flags DESIGN.md makes the contract, as far as this release has them.
	contract := []string{"rate", "duration", "requests", "concurrency", "resolve", "dns-server", "new-conn",
		"method", "header", "body", "timeout", "cacert", "insecure", "http", "fail-status", "output", "format",
		"quiet", "preflight", "no-preflight", "demo", "help", "version"}
	shorts := []string{"-r", "-d", "-n", "-c", "-4", "-6", "-X", "-H", "-o", "-q", "-h"}
	var defined []string
	newFlagSet(&config{}).VisitAll(func(f *pflag.Flag) { defined = append(defined, f.Name) })
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--rate", "5", "--help", "http://app.test/"}} {
		code, stdout, stderr := pinprobe(t, args...)
		if code != exitOK {
			t.Errorf("pinprobe %q: exit %d; want 0", args, code)
		}
		if stderr != "" {
			t.Errorf("pinprobe %q: stderr %q; want nothing", args, stderr)
		}
		for _, name := range slices.Concat(contract, defined) {
			if !strings.Contains(stdout, "--"+name) {
				t.Errorf("pinprobe %q: help does not show --%s", args, name)
			}
		}
		for _, s := range shorts {
			if !strings.Contains(stdout, s+", --") {
				t.Errorf("pinprobe %q: help does not show %s", args, s)
			}
		}
		for _, w := range []string{"Usage:", "Exit codes", "130"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("pinprobe %q: help has no %q", args, w)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--version")
	if code != exitOK || stdout != "pinprobe "+version+"\n" || stderr != "" {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want 0, %q, nothing", code, stdout, stderr, "pinprobe "+version+"\n")
	}
}

// TestRedactArgs: every form pflag accepts for -H/--header is redacted in
// the report's command when the header is secret, and left alone otherwise.
func TestRedactArgs(t *testing.T) {
	const u = "http://app.test/"
	tests := []struct {
		args, want []string
	}{
		{[]string{"-H", "Authorization: Bearer s3cret", u}, []string{"-H", "Authorization: REDACTED", u}},
		{[]string{"--header", "Cookie: s3cret", u}, []string{"--header", "Cookie: REDACTED", u}},
		{[]string{"--header=Set-Cookie: s3cret", u}, []string{"--header=Set-Cookie: REDACTED", u}},
		{[]string{"-HProxy-Authorization: s3cret", u}, []string{"-HProxy-Authorization: REDACTED", u}},
		{[]string{"-H=X-Auth-Token: s3cret", u}, []string{"-H=X-Auth-Token: REDACTED", u}},
		{[]string{"-qH", "X-Api-Key: s3cret", u}, []string{"-qH", "X-Api-Key: REDACTED", u}},
		{[]string{"-q4HX-Client-Secret:s3cret", u}, []string{"-q4HX-Client-Secret: REDACTED", u}},
		{[]string{"-H", "authorization:s3cret", u}, []string{"-H", "authorization: REDACTED", u}},
		{[]string{"-H", "X-Trace: visible", "-XPOST", u}, []string{"-H", "X-Trace: visible", "-XPOST", u}},
		{[]string{"-X", "HEAD", "-H", "Accept: */*", u}, []string{"-X", "HEAD", "-H", "Accept: */*", u}},
		{[]string{"-XH", "-H", "Cookie: s3cret", u}, []string{"-XH", "-H", "Cookie: REDACTED", u}}, // -X's value is "H"
		{[]string{"http://user:s3cret@app.test/"}, []string{"http://user:REDACTED@app.test/"}},
	}
	for _, tt := range tests {
		c, _, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if len(c.headers.lines) == 0 && strings.Contains(strings.Join(tt.args, " "), ":") && !strings.Contains(tt.args[0], "://") {
			t.Errorf("parseArgs(%q) found no header: the case does not test a real -H form", tt.args)
		}
		got := redactArgs(tt.args)
		if !slices.Equal(got, tt.want) {
			t.Errorf("redactArgs(%q) = %q; want %q", tt.args, got, tt.want)
		}
		if strings.Contains(strings.Join(got, " "), "s3cret") {
			t.Errorf("redactArgs(%q) = %q: the secret is still there", tt.args, got)
		}
	}
}

// TestInterruptWhileResolving: Ctrl-C while DNS has not answered yet is an
// interrupt (130), not "nothing could be probed" (3).
func TestInterruptWhileResolving(t *testing.T) {
	d := testserver.StartDNS(t, nil)
	d.Silence() // the server reads the queries and never answers
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := goPinprobe(ctx, "-q", "--dns-server", d.Addr().String(), "http://slow.test/")
	select {
	case <-d.Queried():
	case o := <-done:
		o.noPanic(t)
		t.Fatalf("run returned %d before asking the DNS server; stderr:\n%s", o.code, o.stderr)
	case <-time.After(10 * time.Second):
		t.Fatal("no DNS query within 10s")
	}
	cancel()
	select {
	case o := <-done:
		o.noPanic(t)
		if o.code != exitInterrupted {
			t.Errorf("exit %d; want %d; stderr:\n%s", o.code, exitInterrupted, o.stderr)
		}
		if o.stdout != "" {
			t.Errorf("stdout %q; want nothing: no request was sent", o.stdout)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return within 5s of the interrupt")
	}
}

// TestIPLiteralURLs: an IP-literal URL is one endpoint, resolved by nobody.
func TestIPLiteralURLs(t *testing.T) {
	// One fleet per literal, each expecting the Host header of its URL.
	f4 := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1"}, testserver.Lo4a)
	f6 := testserver.StartFleet(t, testserver.FleetOptions{Host: "::1"}, testserver.Lo6)
	u4, u6 := f4.URL(), f6.URL()
	if u4 != fmt.Sprintf("http://127.0.0.1:%d/", f4.Port()) || u6 != fmt.Sprintf("http://[::1]:%d/", f6.Port()) {
		t.Fatalf("fleet URLs %s, %s; want IP-literal URLs", u4, u6)
	}
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "200", "--requests", "20", u4, u6)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Fatalf("endpoints %v; want one per literal: 127.0.0.1, ::1", got)
	}
	for i, want := range []string{u4, u6} {
		if e := rep.Endpoints[i]; e.Target != want || e.Host != strings.Trim(e.Address, "[]") {
			t.Errorf("endpoint %d: target %q host %q; want %q and its address", i, e.Target, e.Host, want)
		}
	}
	for _, d := range rep.DNS {
		if d.Source != "literal" || len(d.Addresses) != 1 || d.Addresses[0] != d.Host {
			t.Errorf("dns %+v; want source literal with the host itself", d)
		}
	}
	checkFleet(t, f4, rep, "::1")
	checkFleet(t, f6, rep, "127.0.0.1")
}
