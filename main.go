// Pinprobe finds which backend address is behind an intermittent HTTP
// failure: it probes every A and AAAA address of each host, each connection
// pinned to one address, and reports by family, address, connection and
// instance. This package is the commands (one file each, owning its flags),
// their dispatch and exit codes; `pinprobe help` and docs/usage.md say
// every command, flag and exit code, README.md how to start.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"syscall"
)

// Exit codes: the contract of README.md.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitNoAddress   = 3
	exitWrite       = 4
	exitInterrupted = 130
)

// gcPercent is the collector's target unless GOGC says otherwise: the
// engine allocates next to nothing per request, so collections are few
// either way, and the heap that a run of many endpoints peaks at (the
// report built after the load) grows to 1.5 times its live size instead of
// twice (BENCHMARKS.md, Memory).
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	// A closed terminal (SIGHUP) stops the run like Ctrl-C: the report of
	// what was sent is still written (to -o, and to stdout if it is open).
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A reader that stops reading (a pager quit early, "| head") must not
	// kill the run: Go dies of SIGPIPE on a write to a closed stdout or
	// stderr unless the signal is handled. Ignored, such a write returns
	// EPIPE, and pinprobe stops printing there (see emit): -o is written
	// first, and the exit code is the run's.
	signal.Ignore(syscall.SIGPIPE)
	abandon := make(chan struct{})
	go handleInterrupts(sigs, os.Args[1:], cancel, abandon, os.Stderr, os.Exit)
	os.Exit(run(withAbandon(ctx, abandon), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it dispatches to a subcommand, which writes its
// report to stdout and everything else to stderr, and returns the exit code.
// Cancelling ctx is an interrupt; closing the channel of withAbandon in it
// is a second one.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, os.Stdin, stdout, stderr)
}

// runWith is run reading standard input from stdin.
func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	switch commandOf(args) {
	case "report":
		err = reportCommand(ctx, args[1:], stdin, stdout, stderr)
	case "compare":
		err = compareCommand(ctx, args[1:], stdin, stdout, stderr)
	case "help":
		err = helpCommand(args[1:], stdout)
	case "version":
		err = versionCommand(args[1:], stdout)
	case "logs":
		err = logsCommand(ctx, args[1:], stdin, stdout, stderr)
	case "watch":
		err = watchCommand(ctx, args[1:], stdin, stdout, stderr)
	default:
		if err = unknownCommand(args); err == nil {
			err = probeCommand(ctx, args, stdin, stdout, stderr)
		}
	}
	code := exitCode(err)
	var ee *exitError
	if err != nil && !(errors.As(err, &ee) && ee.quiet) {
		sayer(stderr)("%s", err)
	}
	return code
}

// commandOf names the command args run: one of commands when the first
// word is one, "probe" otherwise.
func commandOf(args []string) string {
	if len(args) > 0 && slices.Contains(commands, args[0]) {
		return args[0]
	}
	return "probe"
}

// exitError is an error with its exit code. A quiet one has been reported
// already (the report says it); run prints nothing more.
type exitError struct {
	code  int
	err   error
	quiet bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is bad input: exit 2 with its one line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// writeError is a report that could not be written: exit 4.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// exitCode maps an outcome to its exit code; the one place that does.
func exitCode(err error) int {
	var (
		ue *usageError
		we *writeError
		ee *exitError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &we):
		return exitWrite
	}
	return exitFail
}
