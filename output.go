// The output flags that probe and report share (--format, -o, --brief,
// --detail and the release gate), and how a report is written: rendered on
// stdout, its JSON to -o. compare, whose formats differ, uses checkOutput
// and writeFile.

package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// outputFlags are the flags of every command that writes a report: where it
// goes, in what format, and the release gate it is judged against.
type outputFlags struct {
	format         choiceValue
	output         string
	maxFailureRate string
	maxP99         time.Duration
	failOnVerdict  bool
	confidence     string
	brief          bool
	detail         bool
	limits         report.Limits // filled by validate
}

func (o *outputFlags) add(fs *pflag.FlagSet) {
	o.format = choiceValue{value: "text", choices: render.Formats}
	fs.Var(&o.format, "format", "report `FORMAT` on stdout: "+strings.Join(render.Formats, ", ")+" (log-lines: the JSON report gzipped in pinprobe-report/v1 lines under 16 KiB, for a container's log, which pinprobe report reads back from the log)")
	fs.StringVarP(&o.output, "output", "o", "", "also write the JSON report to `FILE`")
	fs.BoolVar(&o.brief, "brief", false, "a report of one screen, in text, Markdown or HTML (JSON stays whole): the verdict, who answered, families and suspects, one failed request of each suspect, the log queries that find them")
	fs.BoolVar(&o.detail, "detail", false, "the text report whole: the verdict's confidence intervals and p-values, and every block (by default the text leaves out what repeats its tables or says little in a short run); Markdown, HTML and JSON are always whole")
	fs.StringVar(&o.maxFailureRate, "max-failure-rate", "", "release gate: exit 1 unless every endpoint, family and the total is shown to fail less often than `RATE` (0.1% or 0.001): a few requests that did not fail prove nothing")
	durationVarP(fs, &o.maxP99, "max-p99", "", 0, "ms", [2]string{"800ms", "1.5s"}, "release gate: exit 1 unless every endpoint, family and the total is shown to have a p99 latency within `DURATION` (299 requests at least, at 95%)")
	fs.BoolVar(&o.failOnVerdict, "fail-on-verdict", false, "release gate: exit 1 if the verdict names a suspect (no backend may stand out); the report says how large a fault of one address the run would have seen")
	fs.StringVar(&o.confidence, "confidence", "95%", "release gate: a check passes only when proven at `LEVEL`: the upper confidence bound of the failure rate or p99 within the limit; otherwise it is not proven, and fails (50% to 99.99%)")
}

// validate checks the output flags and fills limits.
func (o *outputFlags) validate() error {
	o.limits = report.NoLimits
	if o.brief && o.detail {
		return usagef("--brief and --detail: choose one (one screen, or the whole text report)")
	}
	if o.maxFailureRate != "" {
		r, err := report.ParseRate(o.maxFailureRate)
		if err != nil {
			hint := ""
			if v := o.maxFailureRate; bareNumber.MatchString(v) {
				if f, _ := strconv.ParseFloat(v, 64); f <= 100 { // "5" meant as 5%
					hint = fmt.Sprintf(", e.g. %q for %s in a hundred", v+"%", v)
				}
			}
			return usagef("--max-failure-rate %q: %s%s", o.maxFailureRate, err, hint)
		}
		o.limits.MaxFailureRate = r
	}
	if o.maxP99 < 0 {
		return usagef("--max-p99 %s: must not be negative", o.maxP99)
	}
	o.limits.MaxP99 = o.maxP99
	o.limits.FailOnVerdict = o.failOnVerdict
	c, err := report.ParseRate(o.confidence)
	if err != nil || c < 0.5 || c > 0.9999 {
		return usagef("--confidence %q: want a level from 50%% to 99.99%%, e.g. 95%% or 0.99", o.confidence)
	}
	o.limits.Confidence = c
	return checkOutput(o.output)
}

// documentFormats are the --format values of compare and logs.
var documentFormats = []string{"text", "json", "markdown", "html"}

// checkOutput refuses an -o FILE whose name promises another format than
// the JSON that -o writes, and one that cannot be written ("": no -o).
func checkOutput(path string) error {
	if path == "" {
		return nil
	}
	if f := formatOfExt[strings.ToLower(filepath.Ext(path))]; f != "" && f != "json" {
		return usagef("--output %s: -o always writes JSON; for %s use --format %s > %s (and -o FILE.json to keep the JSON too)",
			path, f, f, path)
	}
	return checkWritable(path)
}

// formatOfExt is the report format a file name's extension promises:
// "-o report.html" that silently held JSON would be found out only when
// someone opens it.
var formatOfExt = map[string]string{".json": "json", ".html": "html", ".htm": "html",
	".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text"}

// checkWritable fails now, rather than after the run, when -o cannot be
// written: the file must be open for writing (it is created and removed
// again when it did not exist), and a temporary file must be creatable
// beside it, as writeFile will create one.
func checkWritable(path string) error {
	fail := func(err error) error { return usagef("--output %s: %s", path, bareErr(err)) }
	target, inPlace, err := outputTarget(path)
	if err != nil {
		return fail(err)
	}
	_, statErr := os.Stat(target)
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	f.Close()
	if os.IsNotExist(statErr) {
		os.Remove(target)
	}
	if inPlace {
		return nil
	}
	tmp, err := createTemp(target)
	if err != nil {
		return fail(err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// bareErr drops the path an *os.PathError or *os.LinkError repeats (a
// temporary file's, or the one the caller names already).
func bareErr(err error) error {
	var (
		pe *os.PathError
		le *os.LinkError
	)
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// write judges rep against the release gate, writes its JSON to -o and
// renders it on stdout (see emit), and returns the outcome; interrupted is
// whether this command was cut short, not whether rep says so.
func (o *outputFlags) write(rep *report.Report, interrupted bool, stdout io.Writer, say func(string, ...any)) error {
	rep.Thresholds = report.CheckLimits(rep, o.limits)
	ro := renderOptions(stdout)
	ro.Brief, ro.Detail = o.brief, o.detail
	renderer, err := render.ForFormat(o.format.value, ro)
	if err != nil { // validated by the flag; kept for safety
		return usagef("%s", err)
	}
	werr := emit(stdout, func(w io.Writer) error { return renderer(w, rep) },
		o.output, func(w io.Writer) error { return report.JSON(w, rep) }, say)
	var gate error
	if report.Breached(rep.Thresholds) {
		gate = errors.New("release gate " + report.GateSummary(rep.Thresholds))
	}
	return outcome(werr, gate, interrupted)
}

// outcome is the exit of a command that wrote its report, ordered when
// several apply: unwritten (4, said already), then failed (1), then
// interrupted (130): a gate breached before Ctrl-C stays breached.
func outcome(werr, failed error, interrupted bool) error {
	switch {
	case werr != nil:
		return &exitError{code: exitWrite, err: werr, quiet: true}
	case failed != nil:
		if ee := (*exitError)(nil); errors.As(failed, &ee) {
			return failed // a failure that has said itself
		}
		return &exitError{code: exitFail, err: failed}
	case interrupted:
		return &exitError{code: exitInterrupted, err: errors.New("interrupted"), quiet: true}
	}
	return nil
}

// emit writes a report's JSON to -o first (the evidence), then print on
// stdout. A stdout whose reader is gone ("| head") stops the printing and
// is no error (without -o a line says what was lost); any other failure is
// said on stderr and returned as a writeError.
func emit(stdout io.Writer, print func(io.Writer) error, output string, save func(io.Writer) error, say func(string, ...any)) error {
	var werr error
	if output != "" {
		if err := writeFile(output, save); err != nil {
			werr = &writeError{err}
			say("%s", err)
		}
	}
	if err := print(stdout); err != nil {
		switch {
		case !closedPipe(err):
			werr = &writeError{err}
			say("%s", err)
		case output == "":
			say("stdout was closed before the report was printed whole (-o FILE keeps it whole, as JSON)")
		}
	}
	return werr
}

// closedPipe reports whether err is a write to a pipe whose reader has
// gone: what a write to stdout or stderr returns once the reader stopped
// reading (main ignores SIGPIPE, which would otherwise kill pinprobe).
func closedPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// writeFile writes path with write, naming -o in its errors. A regular
// file (or a new one) is replaced whole or not at all: write fills a
// temporary file beside it, which is synced and renamed over path, so a
// full disk, a failed write or a crash leaves the previous file as it was.
// Anything else (/dev/stdout, a FIFO) is written in place.
func writeFile(path string, write func(io.Writer) error) error {
	fail := func(err error) error { return fmt.Errorf("--output %s: %w", path, bareErr(err)) }
	target, inPlace, err := outputTarget(path)
	if err != nil {
		return fail(err)
	}
	if inPlace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err == nil {
			err = write(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fail(err)
		}
		return nil
	}
	f, err := createTemp(target)
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	// The rename is durable once the directory is synced; a file system
	// that cannot sync a directory has written the file all the same.
	if d, err := os.Open(filepath.Dir(target)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// outputTarget is the file writeFile replaces for path: path itself, or
// where its symbolic link points, so that the link stays; inPlace when path
// exists and is not a regular file, which cannot be replaced.
func outputTarget(path string) (target string, inPlace bool, err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return path, true, nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", false, err
		}
		return target, false, nil
	}
	return path, false, nil
}

// createTemp creates a new file beside target, hidden and named after it,
// with target's permissions when it exists and the umask's otherwise, as
// os.Create would give.
func createTemp(target string) (*os.File, error) {
	perm := os.FileMode(0o666) // less the umask
	fi, statErr := os.Stat(target)
	if statErr == nil {
		perm = fi.Mode().Perm()
	}
	dir, base := filepath.Split(target)
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if os.IsExist(err) {
			continue
		}
		if err == nil && statErr == nil {
			if err = f.Chmod(perm); err != nil { // exactly the file's, whatever the umask
				f.Close()
				os.Remove(name)
				return nil, err
			}
		}
		return f, err
	}
	return nil, fmt.Errorf("no temporary file beside %s", base)
}
