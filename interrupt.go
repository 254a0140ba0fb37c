// Interrupts: what Ctrl-C, SIGTERM and SIGHUP do, one after another.

package main

import (
	"context"
	"io"
	"os"
	"time"
)

// interruptSteps are the lines pinprobe says at each signal, in order, for
// the command args run; at the last it quits at once. The probe stops
// sending at the first and waits for its requests in flight; at the second
// it writes the report now, the requests still in flight counted as
// abandoned; at the third it quits without a report. report, compare and
// logs stop reading at the first and write nothing, and quit at the second;
// the watch stops sending at the first (exit 0) and quits at the second.
func interruptSteps(args []string) []string {
	switch commandOf(args) {
	case "probe":
		return []string{
			"interrupted: stopping; requests in flight get up to --timeout to finish (Ctrl-C again to write the report now, without waiting for them)",
			"interrupted again: writing the report now, of the requests that finished; those still in flight are counted as abandoned (Ctrl-C a third time to quit without a report)",
			"interrupted a third time: quitting at once, without the report (an -o file already written stays as it is)",
		}
	case "watch":
		return []string{
			"interrupted: stopping the watch; requests in flight get up to --timeout to finish (Ctrl-C again to quit at once)",
			"interrupted twice: quitting at once",
		}
	}
	return []string{
		"interrupted: stopping, nothing written (Ctrl-C again to quit at once)",
		"interrupted twice: quitting at once",
	}
}

// interruptNotice is what pinprobe says at the first signal.
func interruptNotice(args []string) string { return interruptSteps(args)[0] }

// handleInterrupts answers the signals on sigs as interruptSteps says: the
// first cancels, the second closes abandon (see withAbandon), the last
// exits 130. Its lines go through notices, so a stderr that blocks never
// holds up a signal; it returns once it has called exit (or sigs closed).
func handleInterrupts(sigs <-chan os.Signal, args []string, cancel context.CancelFunc, abandon chan<- struct{}, stderr io.Writer, exit func(int)) {
	steps := interruptSteps(args)
	say := newNotices(stderr)
	for i := 0; ; i++ {
		if _, ok := <-sigs; !ok {
			return
		}
		switch {
		case i == len(steps)-1:
			say.last(steps[i], noticeWait)
			exit(exitInterrupted)
			return
		case i == 0:
			cancel()
		case i == 1:
			close(abandon)
		}
		say.line(steps[i])
	}
}

// noticeWait is how long the line of the last signal may take to be
// written before pinprobe quits without it.
const noticeWait = 200 * time.Millisecond

// notices writes lines to stderr on a goroutine of its own: whoever says
// one never waits for the write.
type notices struct {
	lines chan notice
}

// notice is one line, and a channel closed once it is written (nil when
// nobody waits for that).
type notice struct {
	text    string
	written chan struct{}
}

func newNotices(w io.Writer) *notices {
	n := &notices{lines: make(chan notice, 4)}
	say := sayer(w)
	go func() {
		for l := range n.lines {
			say("%s", l.text)
			if l.written != nil {
				close(l.written)
			}
		}
	}()
	return n
}

// line queues text; it is let go when 4 lines wait already (a stderr that
// blocks).
func (n *notices) line(text string) {
	select {
	case n.lines <- notice{text: text}:
	default:
	}
}

// last queues text and waits until it is written, at most limit.
func (n *notices) last(text string, limit time.Duration) {
	l := notice{text: text, written: make(chan struct{})}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case n.lines <- l:
	case <-t.C:
		return
	}
	select {
	case <-l.written:
	case <-t.C:
	}
}

// abandonKey is the context key of the channel that the second signal
// closes (see withAbandon).
type abandonKey struct{}

// withAbandon returns ctx carrying abandon: a channel closed at the second
// signal, when the probe is to stop waiting for its requests in flight
// and write its report now. ctx itself ends at the first.
func withAbandon(ctx context.Context, abandon <-chan struct{}) context.Context {
	return context.WithValue(ctx, abandonKey{}, abandon)
}

// abandonOf is the channel withAbandon put in ctx; nil (never closed) when
// there is none.
func abandonOf(ctx context.Context) <-chan struct{} {
	c, _ := ctx.Value(abandonKey{}).(<-chan struct{})
	return c
}
