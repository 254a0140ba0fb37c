package main

import (
	"context"
	"io"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/merge"
)

// reportCommand is `pinprobe report FILE...`: read saved JSON reports ("-"
// is standard input), or the reports framed in pods' logs, merge them
// exactly when there are several, judge the release gate on the result, and
// render it like a probe run.
func reportCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &reportConfig{}
	fs := newReportFlagSet(c)
	if err := parseFileCommand(fs, args, "report: ", &c.help, &c.files, c.validate); err != nil {
		return err
	}
	if c.help {
		reportHelp.write(stdout, fs)
		return nil
	}
	reps, names, err := readReportInputs(ctx, c.files, stdin)
	if err != nil {
		return err
	}
	rep := reps[0]
	if len(reps) > 1 {
		if rep, err = merge.Merge(reps, names); err != nil {
			return usagef("%s", err)
		}
		// A merged report was made by this command; its inputs keep theirs.
		rep.Command = append([]string{"pinprobe", "report"}, redactArgs(args)...)
		rep.Verdict = judge.Judge(rep, judge.Once())
	} else {
		// A saved verdict is never trusted: the report is judged again,
		// at the level it was judged at.
		rep.Verdict = judge.Judge(rep, judge.LevelOf(rep))
	}
	// A saved run that was interrupted is rendered as it is, marked so in
	// the report; re-rendering it whole is no interruption of this command.
	return c.write(rep, false, stdout, sayer(stderr))
}

// reportConfig is the report command's options: everything `pinprobe
// report [flags] FILE...` says.
type reportConfig struct {
	outputFlags
	help  bool
	files []string
}

// newReportFlagSet declares the report command's flags, each filling its
// field of c; reportHelp orders them for --help.
func newReportFlagSet(c *reportConfig) *pflag.FlagSet {
	fs := newCommandFlagSet("pinprobe report")
	c.outputFlags.add(fs)
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

// reportHelp is `pinprobe report --help`: its text, then its flags under headings.
var reportHelp = commandHelp{"report", `pinprobe report: re-render saved JSON reports, merging several into one.

Usage:
  pinprobe report [flags] FILE...   (- reads standard input)

Several files are merged exactly: counts added, latency histograms merged from
their encoded form, timelines aligned on wall time, the verdict recomputed on
the merged counts; the merged report names its inputs. Use it to combine N
pinprobe processes (regions, machines, pods) into one report.

A FILE that is not a JSON report is read as a log: every report a run wrote
into it with --format log-lines (pinprobe-report/v1 lines, each under 16 KiB)
is picked out of the other lines, and named by its pod where the lines carry
kubectl logs --prefix's [pod/NAME/CONTAINER]:
  kubectl logs -l job-name=pinprobe --prefix --tail=-1 | pinprobe report -
A frame cut short, garbled or missing a line is refused, naming the line and
the pod; at most 1000 reports are read, each framed in at most 4 MiB.
`, []flagGroup{
	{"Report", []string{"format", "brief", "detail", "output"}},
	{"Release gate (exit 1 unless every check passes, proven)", []string{"max-failure-rate", "max-p99", "fail-on-verdict", "confidence"}},
	{"Other", []string{"help"}},
}}

// validate checks that a file is given, and the output flags.
func (c *reportConfig) validate() error {
	if len(c.files) == 0 {
		return usagef("report: no file given: pinprobe report FILE... (- for standard input)")
	}
	return c.outputFlags.validate()
}
