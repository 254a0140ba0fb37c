package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestParseStartAt: --start-at takes an RFC 3339 time and an optional
// +DURATION after it, and refuses a time far ahead (a typo) or long past (a
// stale manifest or file).
func TestParseStartAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 17, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-12-05T17:01:30Z", now.Add(90 * time.Second), ""},
		{"2026-12-05T17:00:00Z+90s", now.Add(90 * time.Second), ""},
		{" 2026-12-05T18:00:00+01:00+1m \n", now.Add(time.Minute), ""},
		{"2026-12-05T16:59:00.5Z", now.Add(-59500 * time.Millisecond), ""},
		{"2026-12-05T16:30:00Z", now.Add(-30 * time.Minute), ""},
		{"17:00", time.Time{}, "want a time in RFC 3339"},
		{"2026-12-05 17:00:00+90s", time.Time{}, "before the +"},
		{"2026-12-05T17:00:00Z+-5s", time.Time{}, "from 0 to 1h"},
		{"2026-12-05T17:00:00Z+2h", time.Time{}, "from 0 to 1h"},
		{"2026-12-07T17:00:00Z", time.Time{}, "48h ahead; at most 24h ahead"},
		{"2026-12-05T15:00:00Z", time.Time{}, "2h past; a start more than 1h past is refused"},
	} {
		got, err := parseStartAt(tt.in, now)
		switch {
		case tt.err == "" && (err != nil || !got.Equal(tt.want)):
			t.Errorf("parseStartAt(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseStartAt(%q): error %v; want one with %q", tt.in, err, tt.err)
		}
	}
}

// TestStartAt: the first request waits for --start-at; a time already
// past starts at once and says how late; @FILE reads the time as a
// Kubernetes init step writes it; a bad time is one line naming the flag
// (exit 2); Ctrl-C during the wait sends nothing (exit 130).
func TestStartAt(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	probe := func(at string) (int, string, string) {
		return pinprobe(t, "-q", "-n", "20", "--rate", "400", "--no-preflight", "--format", "json", "--start-at", at, "--resolve", f.Resolve(), f.URL())
	}
	at := time.Now().Add(1200 * time.Millisecond).UTC()
	code, stdout, stderr := probe(at.Format(time.RFC3339Nano))
	if code != exitOK || !strings.Contains(stderr, "waiting ") || !strings.Contains(stderr, "for --start-at "+at.Format("15:04:05.000Z")) {
		t.Fatalf("--start-at 1.2s ahead: exit %d, stderr %q; want the wait said", code, stderr)
	}
	// The report's times are to the millisecond.
	if rep := decodeReport(t, []byte(stdout)); rep.StartedAt.Before(at.Truncate(time.Millisecond)) {
		t.Errorf("started at %s, before --start-at %s", rep.StartedAt.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
	}

	// @FILE, as the Job's init step writes it: the Job's creation and a
	// lead, here long past.
	file := filepath.Join(t.TempDir(), "start-at")
	created := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	if err := os.WriteFile(file, []byte(created+"+60s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = probe("@" + file)
	if code != exitOK || !strings.Contains(stderr, "passed 9m") || !strings.Contains(stderr, "ago: starting now") {
		t.Errorf("--start-at @FILE 9 minutes past: exit %d, stderr %q; want a start at once, saying how late", code, stderr)
	}

	for _, tt := range []struct{ at, want string }{
		{"tomorrow", `--start-at "tomorrow": want a time in RFC 3339`},
		{time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339), "past; a start more than 1h past is refused"},
		{"@/nonexistent/start-at", "--start-at /nonexistent/start-at: no such file"},
	} {
		code, stdout, stderr := probe(tt.at)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("--start-at %s: exit %d, stderr %q; want exit 2, one line with %q", tt.at, code, stderr, tt.want)
		}
	}
	if code, _, stderr := pinprobe(t, "--preflight", "--start-at", "2026-12-05T17:00:00Z", f.URL()); code != exitUsage || !strings.Contains(stderr, "--preflight sends none") {
		t.Errorf("--preflight --start-at: exit %d, %q; want 2", code, stderr)
	}

	// Interrupted while waiting: nothing sent.
	hits := func() (n int64) {
		for _, h := range f.Hits() {
			n += h
		}
		return n
	}
	before := hits()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	later := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	code = runWith(ctx, []string{"-q", "-n", "20", "--no-preflight", "--start-at", later, "--resolve", f.Resolve(), f.URL()}, strings.NewReader(""), &out, &errb)
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted while waiting for --start-at: no request was sent") || hits() != before {
		t.Errorf("Ctrl-C during the wait: exit %d, %d requests served, stderr %q; want 130, none sent", code, hits()-before, errb.String())
	}
}
