package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"pinprobe/report/compare"
	"pinprobe/report/render"
	"strings"

	"github.com/spf13/pflag"
)

var compareHelp = []flagGroup{
	{"Output", []string{"format", "output"}},
	{"Gate", []string{"fail-on-regression"}},
	{"Other", []string{"help"}},
}

// compareCommand is `pinprobe compare BEFORE AFTER`: per family and
// endpoint, what changed between two saved reports, judged with exact tests.
func compareCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var help, failOnRegression bool
	var output string
	format := choiceValue{value: "text", choices: []string{"text", "json", "markdown"}}
	fs := pflag.NewFlagSet("pinprobe compare", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	fs.Var(&format, "format", "comparison `FORMAT` on stdout: text, json (pinprobe.compare/v1) or markdown")
	fs.StringVarP(&output, "output", "o", "", "also write the JSON comparison to `FILE`")
	fs.BoolVar(&failOnRegression, "fail-on-regression", false, "exit 1 when any endpoint or family got significantly worse")
	fs.BoolVarP(&help, "help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			help = true
		} else {
			return usagef("compare: %s", flagError(err, fs))
		}
	}
	if help {
		fmt.Fprintf(stdout, `pinprobe compare: what changed between two saved JSON reports.

Usage:
  pinprobe compare [flags] BEFORE AFTER   (- reads one of them from standard input)

Endpoints are matched by URL and address; added and removed ones are listed.
Failure rates are compared with Fisher's exact test and Wilson intervals
(significant below 0.001, split over every test made), with p50/p99 and the
statuses that appeared, vanished or changed share. The conclusion comes first.
`)
		writeFlags(stdout, fs, compareHelp)
		fmt.Fprint(stdout, exitCodesHelp)
		return nil
	}
	files := fs.Args()
	if len(files) != 2 {
		return usagef("compare: want two reports, BEFORE and AFTER; got %d", len(files))
	}
	if output != "" {
		if err := checkOutput(output); err != nil {
			return err
		}
	}
	reps, err := readReports(ctx, files, stdin)
	if err != nil {
		return err
	}
	c := compare.Compare(reps[0], reps[1])
	c.Before.File, c.After.File = files[0], files[1]
	render, err := render.CompareForFormat(format.value, renderOptions(stdout))
	if err != nil {
		return usagef("%s", err)
	}
	say := sayer(stderr)
	var werr error
	if err := render(stdout, c); err != nil {
		werr = &writeError{err}
		say("%s", err)
	}
	if output != "" {
		if err := writeFile(output, func(w io.Writer) error { return compare.CompareJSON(w, c) }); err != nil {
			werr = &writeError{err}
			say("%s", err)
		}
	}
	switch {
	case werr != nil:
		return &exitError{code: exitWrite, err: werr, quiet: true}
	case failOnRegression && c.Regressed():
		return &exitError{code: exitFail, err: errors.New("regression: " + strings.TrimPrefix(c.Conclusion, "regression: "))}
	}
	return nil
}
