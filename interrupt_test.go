package main

// Interrupts: cancelling run's context while requests are in flight or
// while DNS has not answered yet, and SIGINT to the real binary.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestInterruptThroughContext: cancelling run's context stops sending,
// lets the requests in flight finish and reports everything: exit 130.
func TestInterruptThroughContext(t *testing.T) {
	t.Parallel()
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
	o := within(t, 10*time.Second, done, "run did not return after the interrupt")
	o.noPanic(t)
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

// TestInterruptTwice: a second interrupt while a request hangs in flight
// writes the report at once: every request sent is in it, the ones that
// finished counted as usual and the one still in flight as abandoned, on
// its own endpoint; exit 130.
func TestInterruptTwice(t *testing.T) {
	const n = 6
	// -n 6: the 6th request is the last sent, and it is held until the
	// test ends, so when the servers have seen it every request has been
	// sent, and it cannot finish.
	f := testserver.StartFleet(t, testserver.FleetOptions{NotifyAt: n, Hold: true}, testserver.Lo4a, testserver.Lo6)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	abandon := make(chan struct{})
	done := goPinprobe(withAbandon(ctx, abandon), "-q", "--format", "json", "--rate", "100", "-n", strconv.Itoa(n),
		"--timeout", "30s", "--no-preflight", "--resolve", f.Resolve(), f.URL())
	select {
	case <-f.Reached():
	case o := <-done:
		o.noPanic(t)
		t.Fatalf("run returned %d before the servers saw %d requests; stderr:\n%s", o.code, n, o.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("the servers saw only %d requests in 15s; want %d", f.Total(), n)
	}
	cancel()       // the first Ctrl-C: wait for the requests in flight
	close(abandon) // the second: not any more
	o := within(t, 5*time.Second, done, "run did not return after the second interrupt (the request in flight has 30s)")
	o.noPanic(t)
	if o.code != exitInterrupted {
		t.Fatalf("exit %d; want %d; stderr:\n%s", o.code, exitInterrupted, o.stderr)
	}
	rep := decodeReport(t, []byte(o.stdout))
	checkReport(t, rep)
	if !rep.Interrupted {
		t.Errorf("interrupted = false; want true")
	}
	tot := rep.Totals
	if tot.Abandoned < 1 || tot.Requests+tot.Abandoned != n || tot.Requests != tot.OK+tot.Failed {
		t.Errorf("totals: %d requests (%d ok, %d failed), %d abandoned; want the %d sent, at least the held one abandoned",
			tot.Requests, tot.OK, tot.Failed, tot.Abandoned, n)
	}
	hits := f.Hits()
	for _, e := range rep.Endpoints {
		if e.Requests+e.Abandoned != hits[e.Address] {
			t.Errorf("%s: %d requests and %d abandoned; the server saw %d", e.Address, e.Requests, e.Abandoned, hits[e.Address])
		}
	}
	held := 0
	for _, b := range f.Backends() {
		if b.InFlight() > 0 {
			held++
		}
	}
	if held != 1 {
		t.Errorf("%d servers hold a request; want 1", held)
	}
	if !strings.Contains(strings.Join(rep.Verdict.Notes, " "), "abandoned") {
		t.Errorf("no note says what was abandoned: %q", rep.Verdict.Notes)
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
	o := within(t, 5*time.Second, done, "run did not return after the interrupt")
	o.noPanic(t)
	if o.code != exitInterrupted {
		t.Errorf("exit %d; want %d; stderr:\n%s", o.code, exitInterrupted, o.stderr)
	}
	if o.stdout != "" {
		t.Errorf("stdout %q; want nothing: no request was sent", o.stdout)
	}
}

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
	return startBinaryTo(t, ctx, nil, bin, args...)
}

// startBinaryTo is startBinary writing stdout to out; nil = to p.stdout.
func startBinaryTo(t *testing.T, ctx context.Context, out *os.File, bin string, args ...string) *subprocess {
	t.Helper()
	p := &subprocess{cmd: exec.CommandContext(ctx, bin, args...), lines: make(chan string, 100), exited: make(chan error, 1)}
	p.cmd.Stdout = &p.stdout
	if out != nil {
		p.cmd.Stdout = out
	}
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

// TestSIGINTSubprocess: SIGINT to the real binary; one gives the full
// report and exit 130, a second exits at once.
func TestSIGINTSubprocess(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on windows")
	}
	bin := buildPinprobe(t)

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
		for _, w := range []string{"INTERRUPTED", "BY ADDRESS FAMILY", "BY ENDPOINT", "127.0.0.1"} {
			if !strings.Contains(out, w) {
				t.Errorf("stdout has no %q:\n%s", w, out)
			}
		}
		m := regexp.MustCompile(`· (\d+) requests, \d+ dropped`).FindStringSubmatch(out)
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

	// A closed terminal (SIGHUP) or a service manager (SIGTERM) stops the
	// run like Ctrl-C: the full report, to stdout and to -o, and exit 130.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String()+": full report and -o file, exit 130", func(t *testing.T) {
			const n = 10
			f := testserver.StartFleet(t, testserver.FleetOptions{Each: testserver.Delayed(20 * time.Millisecond), NotifyAt: n}, testserver.Lo4a)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			out := filepath.Join(t.TempDir(), "run.json")
			p := startBinary(t, ctx, bin, "--rate", "100", "--duration", "30s", "-q", "-o", out, "--resolve", f.Resolve(), f.URL())
			select {
			case <-f.Reached():
			case <-ctx.Done():
				t.Fatal("the server saw too few requests")
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, 5*time.Second); code != exitInterrupted {
				t.Fatalf("exit %d after %s; want %d; stderr:\n%s", code, sig, exitInterrupted, p.stderrText())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("no -o file after %s: %v", sig, err)
			}
			rep := decodeReport(t, data)
			if !rep.Interrupted || rep.Totals.Requests != f.Total() {
				t.Errorf("-o after %s: interrupted %v, %d requests; want interrupted, the server's %d", sig, rep.Interrupted, rep.Totals.Requests, f.Total())
			}
		})
	}

	// report and compare stop reading at a signal: 130, nothing written,
	// and no word of requests in flight. The signal is sent again, later,
	// until it reaches the process reading standard input (one before main
	// kills it; one while compare reads its first file is said of that).
	for _, args := range [][]string{{"report", "-"}, {"compare", "--fail-on-regression", demoReport, "-"}} {
		t.Run(strings.Join(args, " ")+": exit 130", func(t *testing.T) {
			for try := 1; ; try++ {
				cmd := exec.Command(bin, args...)
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				io.WriteString(stdin, `{"schema": `) // and then nothing: the read waits
				time.Sleep(time.Duration(try) * 200 * time.Millisecond)
				cmd.Process.Signal(os.Interrupt)
				cmd.Wait()
				stdin.Close()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && try < 5 {
					continue // the signal came before main: again, later
				}
				if strings.Contains(stderr.String(), "interrupted while reading "+demoReport) && try < 5 {
					continue // the signal came while compare read its first file: again, later
				}
				if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || stdout.Len() != 0 {
					t.Errorf("exit %d (%s), stdout %q; want %d and nothing written", code, cmd.ProcessState, stdout.String(), exitInterrupted)
				}
				if got := stderr.String(); strings.Contains(got, "in flight") || !strings.Contains(got, "interrupted while reading standard input") {
					t.Errorf("stderr %q; want the read's interrupt said, and no requests in flight", got)
				}
				return
			}
		})
	}

	t.Run("second SIGINT: the report now, with the requests in flight abandoned", func(t *testing.T) {
		const n = 5
		// -n 5, and the 5th request is held until the test ends: the first
		// SIGINT must wait for it, the second must not.
		f := testserver.StartFleet(t, testserver.FleetOptions{NotifyAt: n, Hold: true}, testserver.Lo4a)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		out := filepath.Join(t.TempDir(), "run.json")
		p := startBinary(t, ctx, bin, "--rate", "100", "-n", strconv.Itoa(n), "--timeout", "20s", "-q", "-o", out,
			"--resolve", f.Resolve(), f.URL())
		p.interruptAt(t, ctx, f, n)
		p.waitLine(t, ctx, "interrupted: stopping; requests in flight get up to --timeout to finish (Ctrl-C again to write the report now")
		p.interrupt(t)
		p.waitLine(t, ctx, "interrupted again: writing the report now")
		if code := p.wait(t, 5*time.Second); code != exitInterrupted {
			t.Errorf("exit %d after the second SIGINT; want %d; stderr:\n%s", code, exitInterrupted, p.stderrText())
		}
		rep := readSaved(t, out)
		if tot := rep.Totals; !rep.Interrupted || tot.Abandoned < 1 || tot.Requests+tot.Abandoned != n {
			t.Errorf("-o: interrupted %v, %d requests, %d abandoned; want interrupted, the %d sent, the held one abandoned",
				rep.Interrupted, tot.Requests, tot.Abandoned, n)
		}
		text := p.stdout.String()
		want := fmt.Sprintf("%d requests, 0 dropped, %d abandoned", rep.Totals.Requests, rep.Totals.Abandoned)
		for _, w := range []string{"INTERRUPTED", want, "abandoned: sent, and still in flight when a second interrupt"} {
			if !strings.Contains(strings.Join(strings.Fields(text), " "), w) {
				t.Errorf("stdout has no %q:\n%s", w, text)
			}
		}
	})
}

// TestInterruptWhileReadingReports: a signal while report or compare reads
// its input is an interrupt (130, nothing written), not a release gate's
// exit 1, which compare --fail-on-regression would read as a regression.
func TestInterruptWhileReadingReports(t *testing.T) {
	for _, args := range [][]string{
		{"report", "-"},
		{"report", "--max-failure-rate", "1%", demoReport, "-"},
		{"compare", "--fail-on-regression", demoReport, "-"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			pr, pw := io.Pipe() // some input, then nothing: the read waits
			defer pw.Close()
			go pw.Write([]byte(`{"schema": `))
			done := make(chan int, 1)
			var stdout, stderr bytes.Buffer
			go func() { done <- runWith(ctx, args, pr, &stdout, &stderr) }()
			cancel()
			code := within(t, 5*time.Second, done, "run did not return after the interrupt")
			if code != exitInterrupted || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q; want %d and nothing written", code, stdout.String(), exitInterrupted)
			}
			if got := stderr.String(); !strings.Contains(got, "interrupted while reading ") || strings.Count(got, "\n") != 1 {
				t.Errorf("stderr %q; want one line saying the read was interrupted", got)
			}
		})
	}
}

// TestHandleInterrupts: the signals one after another, while stderr
// blocks (a pipe nobody reads): the probe cancels at the first, stops
// waiting at the second and quits with 130 at the third; report quits at
// the second. No step waits for stderr.
func TestHandleInterrupts(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		probe bool
	}{
		{[]string{"-q", "http://a.test/"}, true},
		{[]string{"report", "-"}, false},
	} {
		t.Run(tt.args[0], func(t *testing.T) {
			sigs := make(chan os.Signal) // unbuffered: a send is taken by the handler
			cancelled, abandon, exited := make(chan struct{}), make(chan struct{}), make(chan int, 1)
			_, blocked := io.Pipe()
			defer blocked.Close()
			go handleInterrupts(sigs, tt.args, func() { close(cancelled) }, abandon, blocked, func(code int) { exited <- code })
			step := func(what string, done <-chan struct{}) {
				t.Helper()
				select {
				case sigs <- os.Interrupt:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: the signal was not taken within 5s", what)
				}
				if done != nil {
					within(t, 5*time.Second, done, what+": not done")
				}
			}
			step("first signal", cancelled)
			if tt.probe {
				step("second signal", abandon)
			}
			at := time.Now()
			step("last signal", nil)
			if code := within(t, 5*time.Second, exited, "no exit after the last signal"); code != exitInterrupted {
				t.Errorf("exit %d; want %d", code, exitInterrupted)
			}
			if took := time.Since(at); took > 2*noticeWait+time.Second {
				t.Errorf("exit %v after the last signal; want at most about %v", took, noticeWait)
			}
		})
	}
}

// TestInterruptNotice: what the first signal is answered with fits the
// command: only the probe and the watch have requests in flight to wait
// for, and only the probe a report to write at the second.
func TestInterruptNotice(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		inFlight bool
	}{
		{[]string{"--demo"}, true},
		{[]string{"-q", "http://a.test/"}, true},
		{[]string{"report", "-"}, false},
		{[]string{"compare", "a.json", "b.json"}, false},
		{[]string{"watch", "http://a.test/"}, true},
	} {
		got := interruptNotice(tt.args)
		if strings.Contains(got, "in flight") != tt.inFlight || !strings.HasPrefix(got, "interrupted: stopping") {
			t.Errorf("pinprobe %q: notice %q; want requests in flight mentioned: %v", tt.args, got, tt.inFlight)
		}
		// The probe's second signal writes the report, and only the third
		// quits without one; the others' second quits.
		steps := interruptSteps(tt.args)
		watch := commandOf(tt.args) == "watch" // it writes no report: its second signal quits
		if want := map[bool]int{true: 3, false: 2}[tt.inFlight && !watch]; len(steps) != want {
			t.Errorf("pinprobe %q: %d steps %q; want %d", tt.args, len(steps), steps, want)
		}
		if tt.inFlight && !watch && (!strings.Contains(steps[1], "writing the report now") || !strings.Contains(steps[2], "without the report")) {
			t.Errorf("pinprobe %q: steps %q; want the report written at the second, none at the third", tt.args, steps)
		}
	}
}

// TestExitPrecedence: a breached release gate is exit 1 even when the run
// was interrupted (its failures are real), and an interrupted run that
// breached nothing is 130. `report` of a saved run that was interrupted
// exited 130 too, though it rendered the report whole: it exits 0 now (1
// when a gate is breached), and the report still says INTERRUPTED, in
// every format.
func TestExitPrecedence(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(demoReport)
	if err != nil {
		t.Fatal(err)
	}
	interrupted := filepath.Join(t.TempDir(), "interrupted.json")
	if err := os.WriteFile(interrupted, bytes.Replace(data, []byte(`"interrupted": false`), []byte(`"interrupted": true`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"report", interrupted}, exitOK},
		{[]string{"report", "--max-failure-rate", "1%", interrupted}, exitFail},
		{[]string{"report", "--fail-on-verdict", interrupted}, exitFail},
		{[]string{"report", "--max-failure-rate", "100%", interrupted}, exitOK},
	} {
		if code, _, stderr := pinprobe(t, tt.args...); code != tt.want {
			t.Errorf("pinprobe %q: exit %d; want %d; stderr:\n%s", tt.args, code, tt.want, stderr)
		}
	}
	for format, mark := range map[string]string{"text": "INTERRUPTED after ", "markdown": "**Interrupted after ", "html": "<strong>Interrupted after ", "json": `"interrupted": true`} {
		code, stdout, stderr := pinprobe(t, "report", "--format", format, interrupted)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, mark) {
			t.Errorf("report --format %s of an interrupted run: exit %d, stderr %q, %q in it %v; want 0, nothing on stderr, the mark", format, code, stderr, mark, strings.Contains(stdout, mark))
		}
	}

	// The probe, interrupted after n requests of which every other failed.
	// Each run has a fleet of its own: a fleet says once that it saw n
	// requests, and the second run, waiting on the first one's word, was
	// interrupted before it had sent any (once in a full -race run).
	const n = 20
	for _, tt := range []struct {
		gate string
		want int
	}{
		{"1%", exitFail},
		{"100%", exitInterrupted},
	} {
		f := testserver.StartFleet(t, testserver.FleetOptions{NotifyAt: n, Each: testserver.Every(2, fx503)}, testserver.Lo4a)
		ctx, cancel := context.WithCancel(t.Context())
		done := goPinprobe(ctx, "-q", "--format", "json", "--rate", "200", "--duration", "30s", "--max-failure-rate", tt.gate,
			"--no-preflight", "--resolve", f.Resolve(), f.URL())
		select {
		case <-f.Reached():
		case <-time.After(15 * time.Second):
			t.Fatalf("the server saw only %d requests in 15s", f.Total())
		}
		// The n requests the fleet saw were sent: the interrupted run waits
		// for them, so the gate sees their failures.
		cancel()
		o := <-done
		o.noPanic(t)
		if !json.Valid([]byte(o.stdout)) {
			t.Fatalf("probe interrupted, --max-failure-rate %s: exit %d, no report on stdout (%d bytes); stderr:\n%s", tt.gate, o.code, len(o.stdout), o.stderr)
		}
		if rep := decodeReport(t, []byte(o.stdout)); o.code != tt.want || !rep.Interrupted || rep.Totals.Requests < n {
			t.Errorf("probe interrupted, --max-failure-rate %s: exit %d, interrupted %v, %d requests; want %d, true, the %d the fleet saw or more; stderr:\n%s",
				tt.gate, o.code, rep.Interrupted, rep.Totals.Requests, tt.want, n, o.stderr)
		}
	}
}
