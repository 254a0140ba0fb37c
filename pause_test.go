package main

// A process stopped mid-run (Ctrl-Z, SIGSTOP) does not burst at the server
// when it runs again: the requests due while it was stopped are reported
// as a pause, not sent at once.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestStoppedProcessDoesNotBurst stops the real binary with SIGSTOP for
// 2 s of a 4 s run at 200 req/s and lets it go on with SIGCONT: the report
// has one pause of about 2 s and the 400 or so requests due in it, which
// with the requests sent make the 800 planned; the server never gets more
// than about the rate in any quarter of a second; the text report says
// PAUSED near its top.
func TestStoppedProcessDoesNotBurst(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGSTOP on windows")
	}
	bin := buildPinprobe(t)
	const rate, run, stop = 200, 4 * time.Second, 2 * time.Second
	f := testserver.StartFleet(t, testserver.FleetOptions{NotifyAt: rate}, testserver.Lo4a)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out := filepath.Join(t.TempDir(), "run.json")
	p := startBinary(t, ctx, bin, "--rate", "200", "--duration", run.String(), "-q", "--no-preflight", "-o", out, "--resolve", f.Resolve(), f.URL())
	select {
	case <-f.Reached(): // about a second into the run
	case <-ctx.Done():
		t.Fatalf("the server saw %d requests; want %d", f.Total(), rate)
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-time.After(stop):
	case <-ctx.Done():
		t.Fatal("the test's deadline passed")
	}
	resumed := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, p.stderrText())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, decodeReport(t, data))
	var rep struct {
		Pauses []struct {
			At        string  `json:"at"`
			DurationS float64 `json:"duration_s"`
			Requests  int64   `json:"requests"`
		} `json:"pauses"`
		Totals struct {
			Requests int64 `json:"requests"`
			Dropped  int64 `json:"dropped"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Pauses) != 1 {
		t.Fatalf("pauses %+v; want the one of the %v stop", rep.Pauses, stop)
	}
	pause := rep.Pauses[0]
	if d := time.Duration(pause.DurationS * float64(time.Second)); d < stop-200*time.Millisecond || d > stop+time.Second {
		t.Errorf("pause of %v; want about the %v the process was stopped", d, stop)
	}
	if want := int64(rate * stop.Seconds()); pause.Requests < want*8/10 || pause.Requests > want*13/10 {
		t.Errorf("pause of %d requests; want about the %d due in %v", pause.Requests, want, stop)
	}
	if planned, got := int64(rate*run.Seconds()), rep.Totals.Requests+rep.Totals.Dropped+pause.Requests; got < planned*97/100 || got > planned {
		t.Errorf("%d sent, %d dropped, %d in the pause; want the %d planned", rep.Totals.Requests, rep.Totals.Dropped, pause.Requests, planned)
	}
	if rep.Totals.Requests != f.Total() {
		t.Errorf("%d requests in the report; the server counted %d", rep.Totals.Requests, f.Total())
	}
	// No burst: after the stop, no quarter of a second holds more than
	// twice the rate's 50 requests.
	arrivals := f.Backends()[0].Arrivals()
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	worst := 0
	for i, a := range arrivals {
		if a.Before(resumed) {
			continue
		}
		n, _ := slices.BinarySearchFunc(arrivals, a.Add(250*time.Millisecond), func(x, y time.Time) int { return x.Compare(y) })
		worst = max(worst, n-i)
	}
	if worst > 100 {
		t.Errorf("%d requests reached the server within 250 ms after the stop; want no burst (about 50 at 200 req/s)", worst)
	}
	lines := strings.Split(p.stdout.String(), "\n")
	if i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "PAUSED ") }); i < 0 || i > 4 {
		t.Errorf("no PAUSED line near the top of the text report:\n%s", strings.Join(lines[:min(10, len(lines))], "\n"))
	}
}
