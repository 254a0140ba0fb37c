package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"pinprobe/report"
	"pinprobe/report/judge"
)

// reportHelp orders the report command's flags.
var reportHelp = []flagGroup{
	{"Report", []string{"format", "brief", "output"}},
	{"Release gate (exit 1 when breached)", []string{"max-failure-rate", "max-p99", "fail-on-verdict"}},
	{"Other", []string{"help"}},
}

// reportCommand is `pinprobe report FILE...`: read saved JSON reports ("-"
// is standard input), merge them exactly when there are several, judge the
// release gate on the result, and render it like a probe run.
func reportCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var o outputFlags
	var help bool
	fs := pflag.NewFlagSet("pinprobe report", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	o.add(fs)
	fs.BoolVarP(&help, "help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			help = true
		} else {
			return usagef("report: %s", flagError(err, fs))
		}
	}
	if help {
		fmt.Fprintf(stdout, `pinprobe report: re-render saved JSON reports, merging several into one.

Usage:
  pinprobe report [flags] FILE...   (- reads standard input)

Several files are merged exactly: counts added, latency histograms merged from
their encoded form, timelines aligned on wall time, the verdict recomputed on
the merged counts; the merged report names its inputs. Use it to combine N
pinprobe processes (regions, machines, pods) into one report.
`)
		writeFlags(stdout, fs, reportHelp)
		fmt.Fprint(stdout, exitCodesHelp)
		return nil
	}
	files := fs.Args()
	if len(files) == 0 {
		return usagef("report: no file given: pinprobe report FILE... (- for standard input)")
	}
	if err := o.validate(); err != nil {
		return err
	}
	reps, err := readReports(ctx, files, stdin)
	if err != nil {
		return err
	}
	rep := reps[0]
	if len(reps) > 1 {
		if rep, err = report.Merge(reps, files); err != nil {
			return usagef("%s", err)
		}
		// A merged report was made by this command; its inputs keep theirs.
		rep.Command = append([]string{"pinprobe", "report"}, redactArgs(args)...)
		rep.Verdict = judge.Judge(rep, judge.TestAlpha)
	}
	say := sayer(stderr)
	return o.write(rep, stdout, say)
}
