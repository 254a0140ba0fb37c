package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"pinprobe/report/compare"
	"pinprobe/report/render"
)

// compareCommand is `pinprobe compare BEFORE AFTER`: per family and
// endpoint, what changed between two saved reports, judged with exact tests.
func compareCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, fs, err := parseCompareArgs(args)
	if err != nil {
		return err
	}
	if c.help {
		writeCompareHelp(stdout, fs)
		return nil
	}
	reps, err := readReports(ctx, c.files, stdin)
	if err != nil {
		return err
	}
	cmp := compare.Compare(reps[0], reps[1])
	cmp.Before.File, cmp.After.File = c.files[0], c.files[1]
	renderer, err := render.CompareForFormat(c.format.value, renderOptions(stdout))
	if err != nil {
		return usagef("%s", err)
	}
	werr := emit(stdout, func(w io.Writer) error { return renderer(w, cmp) },
		c.output, func(w io.Writer) error { return compare.CompareJSON(w, cmp) }, sayer(stderr))
	var regressed error
	switch {
	case c.failOnRegression && cmp.Regressed():
		regressed = errors.New("regression: " + strings.TrimPrefix(cmp.Conclusion, "regression: "))
	case c.failOnRegression && cmp.FailsGate():
		// A gate that compared nothing does not pass.
		regressed = errors.New("regression gate not passed: nothing was compared: " + cmp.Conclusion)
	}
	return outcome(werr, regressed, false)
}

// compareConfig is the compare command's options: everything `pinprobe
// compare [flags] BEFORE AFTER` says.
type compareConfig struct {
	format           choiceValue
	output           string
	failOnRegression bool
	help             bool
	files            []string
}

// newCompareFlagSet declares the compare command's flags, each filling its
// field of c; compareHelp orders them for --help.
func newCompareFlagSet(c *compareConfig) *pflag.FlagSet {
	fs := newCommandFlagSet("pinprobe compare")
	c.format = choiceValue{value: "text", choices: []string{"text", "json", "markdown"}}
	fs.Var(&c.format, "format", "comparison `FORMAT` on stdout: text, json (pinprobe.compare/v1) or markdown")
	fs.StringVarP(&c.output, "output", "o", "", "also write the JSON comparison to `FILE`")
	fs.BoolVar(&c.failOnRegression, "fail-on-regression", false, "exit 1 when any endpoint or family got significantly worse, or when the reports have no endpoint in common")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

// compareHelp orders the compare command's flags.
var compareHelp = []flagGroup{
	{"Output", []string{"format", "output"}},
	{"Gate", []string{"fail-on-regression"}},
	{"Other", []string{"help"}},
}

// writeCompareHelp is `pinprobe compare --help`.
func writeCompareHelp(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, `pinprobe compare: what changed between two saved JSON reports.

Usage:
  pinprobe compare [flags] BEFORE AFTER   (- reads one from standard input)

Endpoints are matched by URL and address; added and removed ones are listed.
Failure rates are compared with Fisher's exact test and Wilson intervals
(significant below 0.001, split over every test made), with p50/p99 and the
statuses that appeared, vanished or changed share. The conclusion comes first.
`)
	writeFlags(w, fs, compareHelp)
	writeExitCodes(w, "compare")
}

// parseCompareArgs fills a compareConfig from the command line and
// validates it.
func parseCompareArgs(args []string) (*compareConfig, *pflag.FlagSet, error) {
	c := &compareConfig{}
	fs := newCompareFlagSet(c)
	if err := parseFlags(fs, args, &c.help, "compare: "); err != nil {
		return nil, fs, err
	}
	c.files = fs.Args()
	if c.help {
		return c, fs, nil
	}
	if err := c.validate(); err != nil {
		return nil, fs, err
	}
	return c, fs, nil
}

// validate checks that two reports are given, and that -o can be written.
func (c *compareConfig) validate() error {
	if len(c.files) != 2 {
		return usagef("compare: want two reports, BEFORE and AFTER; got %d", len(c.files))
	}
	if c.output != "" {
		return checkOutput(c.output)
	}
	return nil
}
