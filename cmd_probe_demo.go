package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pinprobe/pinprobe/internal/demo"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// demoAccessLog is the demo gateway's access log, in a directory of its
// own, and what --demo says of it at the end: the run joined with it (the
// backend that failed) and the command that joins them.
type demoAccessLog struct {
	dir  string
	path string
	f    *os.File
	say  func(string, ...any)
	// stderr takes the command, on a line of its own as it is: a note is
	// wrapped to the terminal at word boundaries, which cut the command
	// between a flag and its value and inside its quoted format, so it
	// could not be pasted; a terminal soft-wraps a long line, which pastes
	// whole.
	stderr io.Writer
}

// newDemoAccessLog makes the log's directory (newDemoDir) and file; a demo
// without one still runs, saying so.
func newDemoAccessLog(say func(string, ...any), stderr io.Writer) *demoAccessLog {
	d := &demoAccessLog{say: say, stderr: stderr}
	dir, err := newDemoDir()
	if err != nil {
		say("demo: no access log written: %s", err)
		return d
	}
	d.dir, d.path = dir, filepath.Join(dir, "access.log")
	if d.f, err = os.Create(d.path); err != nil {
		say("demo: no access log written: %s", err)
		d.path = ""
	}
	return d
}

// writer is where the gateway writes its log; nil when there is none.
func (d *demoAccessLog) writer() io.Writer {
	if d.f == nil {
		return nil
	}
	return d.f
}

func (d *demoAccessLog) close() {
	if d.f != nil {
		d.f.Close()
	}
}

// join joins rep with the log through `pinprobe logs`'s own code, run on
// the command it then prints, and says what it found. The command names a
// copy of the report beside the log, written here: the file -o names may
// be standard output, a pipe, or a write that failed.
func (d *demoAccessLog) join(ctx context.Context, rep *report.Report) {
	if d.f == nil {
		return
	}
	if err := d.f.Sync(); err != nil {
		d.say("demo: access log: %s", err)
		return
	}
	saved := filepath.Join(d.dir, "report.json")
	if err := writeFile(saved, func(w io.Writer) error { return report.JSON(w, rep) }); err != nil {
		d.say("demo: %s", err)
		return
	}
	// The command the demo prints, run as `pinprobe logs` runs it.
	c := &logsConfig{}
	if err := parseFileCommand(newLogsFlagSet(c), demoJoinArgs(saved, d.path), "logs: ", &c.help, &c.files, c.validate); err != nil {
		d.say("demo: %s", err)
		return
	}
	doc, err := c.join(ctx, strings.NewReader(""))
	if err != nil {
		d.say("demo: access log: %s", err)
		return
	}
	d.say("demo: the gateway wrote its access log (nginx format, with $upstream_addr) to %s; joined with the run, it says:", d.path)
	d.say("demo:   %s", doc.Conclusion)
	d.say("demo: see it all with the command below; the demo's files stay in %s until the next demo replaces them:", d.dir)
	fmt.Fprintln(d.stderr, clearLine(d.stderr)+demoJoinCommand(selfCommand(), saved, d.path))
}

// demoJoinCommand is the command that joins the demo's report, saved at
// report, with its access log at log, pinprobe run as self: one line, each
// argument quoted for a POSIX shell.
func demoJoinCommand(self, report, log string) string {
	args := demoJoinArgs(report, log)
	for i, a := range args {
		args[i] = words.ShellQuote(a)
	}
	return self + " logs " + strings.Join(args, " ")
}

// selfCommand is how a person runs this pinprobe again: "go run ." when it
// runs through go run (from its checkout, where the README runs it), the
// name it was invoked by when a shell found it on PATH, else the path it
// was invoked by, quoted for a shell.
func selfCommand() string {
	if exe, err := os.Executable(); err == nil && goRunBinary(exe) {
		return "go run ."
	}
	if arg0 := os.Args[0]; !strings.Contains(arg0, "/") {
		return arg0
	}
	return words.ShellQuote(os.Args[0])
}

// goRunBinary reports whether exe is a binary go run built: in the go
// command's build cache (a directory named by a hash and "-d", Go 1.24 on)
// or in an exe directory of its temporary build directory.
func goRunBinary(exe string) bool {
	dir := filepath.Dir(exe)
	return cachedExe.MatchString(filepath.Base(dir)) ||
		filepath.Base(dir) == "exe" && strings.Contains(filepath.ToSlash(dir), "/go-build")
}

// cachedExe is the name of the build cache's directory of an executable.
var cachedExe = regexp.MustCompile(`^[0-9a-f]{64}-d$`)

// demoJoinArgs are the arguments of `pinprobe logs` that join the demo's
// report, saved at report, with its access log at log.
func demoJoinArgs(report, log string) []string {
	return []string{"--log-format", demo.LogFormat, report, log}
}
