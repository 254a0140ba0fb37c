package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// fSetPipeSize is Linux's F_SETPIPE_SZ: it sets a pipe's capacity.
const fSetPipeSize = 1031

// TestThirdSIGINTWhileStdoutBlocks: after a second SIGINT the report is
// written; when its stdout is a pipe nobody reads, the write blocks, and a
// third SIGINT still quits at once (exit 130), the -o file written whole.
func TestThirdSIGINTWhileStdoutBlocks(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	const n = 5
	f := testserver.StartFleet(t, testserver.FleetOptions{NotifyAt: n, Hold: true}, testserver.Lo4a)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// A pipe of one page: the HTML report (tens of kB) fills it, and the
	// test reads only its first byte.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSize, 4096); e != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", e)
	}
	out := filepath.Join(t.TempDir(), "run.json")
	p := startBinaryTo(t, ctx, w, bin, "--rate", "100", "-n", strconv.Itoa(n), "--timeout", "20s", "-q",
		"--format", "html", "-o", out, "--resolve", f.Resolve(), f.URL())
	w.Close() // the child has its own copy
	p.interruptAt(t, ctx, f, n)
	p.waitLine(t, ctx, "interrupted: stopping")
	p.interrupt(t)
	p.waitLine(t, ctx, "interrupted again: writing the report now")
	// The report's first byte: the -o file is written, and the rest of the
	// report waits for a reader that never comes.
	first := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(r, make([]byte, 1))
		first <- err
	}()
	select {
	case err := <-first:
		if err != nil {
			t.Fatalf("reading the report's first byte: %v; stderr:\n%s", err, p.stderrText())
		}
	case <-ctx.Done():
		t.Fatalf("no report on stdout after the second SIGINT; stderr:\n%s", p.stderrText())
	}
	p.interrupt(t)
	p.waitLine(t, ctx, "interrupted a third time: quitting at once, without the report")
	if code := p.wait(t, 5*time.Second); code != exitInterrupted {
		t.Errorf("exit %d after the third SIGINT; want %d; stderr:\n%s", code, exitInterrupted, p.stderrText())
	}
	rep := readSaved(t, out)
	if tot := rep.Totals; tot.Abandoned < 1 || tot.Requests+tot.Abandoned != n {
		t.Errorf("-o: %d requests, %d abandoned; want the %d sent, the held one abandoned", tot.Requests, tot.Abandoned, n)
	}
}

// TestWatchSIGTERM: a watch stops cleanly at SIGTERM (exit 0), the way a
// service manager or Kubernetes stops it, even while its target fails.
func TestWatchSIGTERM(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	f := testserver.StartFleet(t, testserver.FleetOptions{Each: testserver.Status(502)}, testserver.Lo4a, testserver.Lo4b)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	p := startBinary(t, ctx, bin, "watch", "-r", "20", "--listen", "127.0.0.1:0", "--resolve", f.Resolve(), f.URL())
	p.waitLine(t, ctx, "suspect: every address of app.test (an outage)")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 5*time.Second); code != exitOK {
		t.Errorf("exit %d after SIGTERM; want 0; stderr:\n%s", code, p.stderrText())
	}
}
