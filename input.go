package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pinprobe/pinprobe/internal/report"
)

// Caps on what pinprobe reads from files, so a wrong path (/dev/zero, a
// log that keeps growing) cannot exhaust the machine. --help states them.
const (
	maxBody    = 16 << 20  // --body @FILE
	maxCACert  = 1 << 20   // --cacert
	maxTargets = 4 << 20   // --targets
	maxReport  = 256 << 20 // a saved report read by report or compare
)

// errInterrupted is a signal that arrived while pinprobe read its input
// (exit 130: see exitCode).
var errInterrupted = errors.New("interrupted")

// readInput reads path — a regular file, or "-" for standard input — for
// the flag or argument named what, refusing anything larger than limit
// bytes. Reading standard input stops when ctx ends.
func readInput(ctx context.Context, what, path string, limit int64, stdin io.Reader) ([]byte, error) {
	f, _, err := openInput(what, path, stdin, false, giveFile, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(ctx, what, path, f, limit)
}

// giveFile ends the refusal of an input that is no regular file.
const giveFile = " (give a file, or - for standard input)"

// openInput opens the file name for what ("read log"), or stdin for "-",
// with its size (-1 for standard input). Anything but a regular file (or,
// when pipes, a FIFO) is refused, with hint, as is a file over limit bytes.
func openInput(what, name string, stdin io.Reader, pipes bool, hint string, limit int64) (io.ReadCloser, int64, error) {
	if name == "-" {
		return io.NopCloser(stdin), -1, nil
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, 0, usagef("%s %s: %s", what, name, bareErr(err))
	}
	if !fi.Mode().IsRegular() && !(pipes && fi.Mode()&os.ModeNamedPipe != 0) {
		return nil, 0, usagef("%s %s: not a regular file%s", what, name, hint)
	}
	if fi.Size() > limit {
		return nil, 0, tooLarge(what, name, fi.Size(), limit)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, usagef("%s %s: %s", what, name, bareErr(err))
	}
	return f, fi.Size(), nil
}

// readCapped reads r, the input name, to its end, refusing more than
// limit bytes, until ctx ends.
func readCapped(ctx context.Context, what, name string, r io.Reader, limit int64) ([]byte, error) {
	b, err := untilDone(ctx, func() ([]byte, error) { return io.ReadAll(io.LimitReader(r, limit+1)) })
	switch {
	case errors.Is(err, errInterrupted):
		return nil, err
	case err != nil:
		return nil, usagef("%s %s: %s", what, shownName(name), bareErr(err))
	case int64(len(b)) > limit:
		return nil, usagef("%s %s: larger than the %s pinprobe reads", what, shownName(name), byteSize(limit))
	}
	return b, nil
}

// tooLarge refuses the input name of size bytes, over limit.
func tooLarge(what, name string, size, limit int64) error {
	return usagef("%s %s: %s is larger than the %s pinprobe reads", what, name, byteSize(size), byteSize(limit))
}

// byteSize formats a size in bytes as "16 MiB", "512 KiB" or "80 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// interruptedReading is the error of a signal that arrived while name
// was read: exit 130, nothing written.
func interruptedReading(name string) error {
	return fmt.Errorf("%w while reading %s: nothing written", errInterrupted, name)
}

// shownName is how a message names an input file: "standard input" for -.
func shownName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// readReports reads saved reports, each refused with its name and the
// reason when it is not a pinprobe report, is of a newer schema or breaks
// the report's invariants. At most one of them may be standard input.
func readReports(ctx context.Context, files []string, stdin io.Reader) ([]*report.Report, error) {
	stdinUsed := false
	var reps []*report.Report
	for _, name := range files {
		r, size, err := openReport(name, stdin, &stdinUsed, maxReport)
		if err != nil {
			return nil, err
		}
		rep, err := parseReport(ctx, name, r, size)
		r.Close()
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// openReport opens a report's file of at most limit bytes, or standard
// input for "-" (at most once: *stdinUsed), with its size (-1 for
// standard input).
func openReport(name string, stdin io.Reader, stdinUsed *bool, limit int64) (io.ReadCloser, int64, error) {
	if name == "-" && *stdinUsed {
		return nil, 0, usagef("- (standard input) is given twice")
	}
	*stdinUsed = *stdinUsed || name == "-"
	return openInput("read report", name, stdin, false, "", limit)
}

// parseReport reads the saved JSON report of file name from r, size bytes
// long (-1: unknown), and parses it.
func parseReport(ctx context.Context, name string, r io.Reader, size int64) (*report.Report, error) {
	shown := shownName(name)
	if size > maxReport {
		return nil, tooLarge("read report", name, size, maxReport)
	}
	data, err := readCapped(ctx, "read report", name, r, maxReport)
	if errors.Is(err, errInterrupted) {
		return nil, interruptedReading(shown)
	}
	if err != nil {
		return nil, err
	}
	rep, err := report.Parse(data, shown)
	if err != nil {
		return nil, usagef("%s", err)
	}
	return rep, nil
}

// readReportInputs reads what `pinprobe report` is given: each file (or
// "-") a saved JSON report, or a stream of lines (the logs of pods, with
// other lines among them) holding framed reports (report.ReadFrames), each
// named by its pod where `kubectl logs --prefix` says it. A file that is
// neither is refused with its name, as is one whose frames are broken.
func readReportInputs(ctx context.Context, files []string, stdin io.Reader) ([]*report.Report, []string, error) {
	stdinUsed := false
	var (
		reps  []*report.Report
		names []string
	)
	for _, name := range files {
		shown := shownName(name)
		r, size, err := openReport(name, stdin, &stdinUsed, math.MaxInt64) // a stream of frames may be longer
		if err != nil {
			return nil, nil, err
		}
		defer r.Close()
		br := bufio.NewReaderSize(r, 64<<10)
		isJSON, err := untilDone(ctx, func() (bool, error) { return startsJSON(br) })
		switch {
		case errors.Is(err, errInterrupted):
			return nil, nil, interruptedReading(shown)
		case err != nil:
			return nil, nil, usagef("read report %s: %s", shown, bareErr(err))
		}
		if isJSON {
			rep, err := parseReport(ctx, name, br, size)
			if err != nil {
				return nil, nil, err
			}
			reps, names = append(reps, rep), append(names, name)
			continue
		}
		frames, err := untilDone(ctx, func() ([]report.Frame, error) { return report.ReadFrames(br, shown) })
		switch {
		case errors.Is(err, errInterrupted):
			return nil, nil, interruptedReading(shown)
		case err != nil:
			return nil, nil, usagef("%s", err)
		case len(frames) == 0:
			return nil, nil, usagef("read report %s: not a pinprobe JSON report, and no %s line in it (a pod's log holds one with --format log-lines)", shown, report.FrameTag)
		case len(reps)+len(frames) > report.MaxFrames:
			return nil, nil, usagef("read report %s: more than %d reports in all; pinprobe report merges at most %d from streams", shown, report.MaxFrames, report.MaxFrames)
		}
		for _, f := range frames {
			reps, names = append(reps, f.Report), append(names, f.Name)
		}
	}
	return reps, names, nil
}

// startsJSON reports whether br's first byte after white space opens a
// JSON object: a saved report rather than a stream of lines.
func startsJSON(br *bufio.Reader) (bool, error) {
	for {
		b, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b == '{', br.UnreadByte()
	}
}

// untilDone runs read, which may block on standard input, until it
// returns or ctx ends (errInterrupted; read is left to finish on its own).
func untilDone[T any](ctx context.Context, read func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := read()
		done <- result{v, err}
	}()
	select {
	case <-ctx.Done():
		var zero T
		return zero, errInterrupted
	case res := <-done:
		return res.v, res.err
	}
}
