package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/words"
)

// --start-at: several pinprobe processes started apart (the pods of a Job,
// scheduled and pulled one by one) send their load from one moment, so
// their runs share their time and a merge compares their vantages over all
// of it.
const (
	maxStartAhead = 24 * time.Hour // a later time is a typo
	maxStartLate  = time.Hour      // an older one is a stale manifest or file
	maxStartDelay = time.Hour      // the +DURATION of TIME+DURATION
	maxStartFile  = 4 << 10        // --start-at @FILE: one line
)

// parseStartAt reads a --start-at value, TIME or TIME+DURATION (TIME in
// RFC 3339, DURATION at most maxStartDelay: "the Job's creation and a
// minute"), and refuses a time more than maxStartAhead after now or more
// than maxStartLate before it. The error names neither the flag nor the
// value; the caller does.
func parseStartAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		i := strings.LastIndexByte(s, '+')
		if i < 0 {
			return time.Time{}, errors.New("want a time in RFC 3339, e.g. 2026-12-05T17:00:00Z, optionally +DURATION, e.g. 2026-12-05T17:00:00Z+90s")
		}
		t, terr := time.Parse(time.RFC3339Nano, s[:i])
		d, derr := time.ParseDuration(s[i+1:])
		switch {
		case terr != nil:
			return time.Time{}, errors.New("want a time in RFC 3339 before the +, e.g. 2026-12-05T17:00:00Z+90s")
		case derr != nil || d < 0 || d > maxStartDelay:
			return time.Time{}, fmt.Errorf("want a DURATION after the + from 0 to %s, e.g. 90s", hours(maxStartDelay))
		}
		at = t.Add(d)
	}
	switch {
	case at.Sub(now) > maxStartAhead:
		return time.Time{}, fmt.Errorf("%s ahead; at most %s ahead is waited for", words.RunLength(at.Sub(now).Round(time.Minute)), hours(maxStartAhead))
	case now.Sub(at) > maxStartLate:
		return time.Time{}, fmt.Errorf("%s past; a start more than %s past is refused (a stale manifest or file?)", words.RunLength(now.Sub(at).Round(time.Minute)), hours(maxStartLate))
	}
	return at, nil
}

// hours says a whole number of hours as a flag takes it: "24h".
func hours(d time.Duration) string { return strings.TrimSuffix(d.String(), "0m0s") }

// checkStartAt validates --start-at TIME as given (an @FILE is read and
// checked by loadStartAt).
func (c *config) checkStartAt(now time.Time) error {
	switch {
	case c.startAtFlag == "":
		return nil
	case c.preflight:
		return usagef("--start-at %s waits to send the load; --preflight sends none", c.startAtFlag)
	case strings.HasPrefix(c.startAtFlag, "@"):
		return nil
	}
	at, err := parseStartAt(c.startAtFlag, now)
	if err != nil {
		return usagef("--start-at %q: %s", c.startAtFlag, err)
	}
	c.startAt = at
	return nil
}

// loadStartAt reads --start-at @FILE: its first line, as a Kubernetes init
// step writes the Job's creation and a lead.
func (c *config) loadStartAt(ctx context.Context, stdin io.Reader) error {
	path, ok := strings.CutPrefix(c.startAtFlag, "@")
	if !ok {
		return nil
	}
	b, err := readInput(ctx, "--start-at", path, maxStartFile, stdin)
	if err != nil {
		return err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	at, err := parseStartAt(line, time.Now())
	if err != nil {
		if len(line) > 64 {
			line = line[:64] + "…"
		}
		return usagef("--start-at @%s: %q: %s", path, line, err)
	}
	c.startAt = at
	return nil
}

// waitStart waits for --start-at, saying so on stderr; a start already
// past is said with how late, and the load starts at once. Only ctx ends
// the wait early.
func (c *config) waitStart(ctx context.Context, say func(string, ...any)) error {
	if c.startAt.IsZero() {
		return nil
	}
	at := c.startAt.UTC().Format("15:04:05.000Z")
	d := time.Until(c.startAt)
	if d <= 0 {
		say("--start-at %s passed %s ago: starting now", at, (-d).Round(time.Millisecond))
		return nil
	}
	say("waiting %s for --start-at %s", d.Round(time.Millisecond), at)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return &exitError{code: exitInterrupted, err: errors.New("interrupted while waiting for --start-at: no request was sent")}
	case <-t.C:
		return nil
	}
}
