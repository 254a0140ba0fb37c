package main

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/merge"
	"github.com/pinprobe/pinprobe/internal/render"
)

// compareCommand is `pinprobe compare BEFORE AFTER`: per family and
// endpoint, what changed between two saved reports, judged with exact tests.
func compareCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &compareConfig{}
	fs := newCompareFlagSet(c)
	if err := parseFileCommand(fs, args, "compare: ", &c.help, &c.files, c.validate); err != nil {
		return err
	}
	if c.help {
		compareHelp.write(stdout, fs)
		return nil
	}
	reps, err := readReports(ctx, c.files, stdin)
	if err != nil {
		return err
	}
	// One run on both sides shows no change whatever happened: a gate
	// that would pass unproven. What is one run, merge decides.
	if err := merge.SameRun(reps, []string{shownName(c.files[0]), shownName(c.files[1])}); err != nil {
		var same *merge.SameRunError
		if errors.As(err, &same) {
			return usagef("compare %s: BEFORE and AFTER must be two runs (one run on both sides shows no change, whatever happened)", same.Words())
		}
		return usagef("compare: %s", err)
	}
	cmp := compare.ReportsWith(reps[0], reps[1], compare.Options{Match: c.match.value, MaxLatencyIncrease: c.maxIncrease.tol})
	cmp.Before.File, cmp.After.File = c.files[0], c.files[1]
	ro := renderOptions(stdout)
	ro.Brief = c.brief
	renderer, err := render.CompareForFormat(c.format.value, ro)
	if err != nil {
		return usagef("%s", err)
	}
	werr := emit(stdout, func(w io.Writer) error { return renderer(w, cmp) },
		c.output, func(w io.Writer) error { return compare.JSON(w, cmp) }, sayer(stderr))
	var regressed error
	switch {
	case c.failOnRegression && cmp.Regressed():
		regressed = errors.New("regression: " + cmp.Headline())
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
	brief            bool
	output           string
	match            choiceValue
	maxIncrease      toleranceValue
	failOnRegression bool
	help             bool
	files            []string
}

// newCompareFlagSet declares the compare command's flags, each filling its
// field of c; compareHelp orders them for --help.
func newCompareFlagSet(c *compareConfig) *pflag.FlagSet {
	fs := newCommandFlagSet("pinprobe compare")
	c.format = choiceValue{value: "text", choices: documentFormats}
	fs.Var(&c.format, "format", "comparison `FORMAT` on stdout: text, json (pinprobe.compare/v1), markdown or html")
	fs.BoolVar(&c.brief, "brief", false, "a comparison of one screen, in text or Markdown (JSON stays whole): the conclusion, the runs, the families, the endpoints and instances that changed, the failures that appeared or grew")
	fs.StringVarP(&c.output, "output", "o", "", "also write the JSON comparison to `FILE`")
	c.match = choiceValue{value: compare.MatchEndpoint, choices: []string{compare.MatchEndpoint, compare.MatchHost}}
	fs.Var(&c.match, "match", "how endpoints are matched, by `MODE`: endpoint (the same URL and address) or host (URLs that differ only in their port are one URL, and reports that probed a URL in common are compared even on other addresses)")
	c.maxIncrease = toleranceValue{tol: compare.DefaultTolerance}
	fs.Var(&c.maxIncrease, "max-latency-increase", "the largest move of a p50 or p99 that is no change: a share of its value before, a duration, or both (a change must exceed both), e.g. 20%, 5ms, 20%,5ms; 0 counts every significant move (repeatable)")
	fs.BoolVar(&c.failOnRegression, "fail-on-regression", false, "exit 1 when any endpoint, instance, family or the total got significantly worse or slower, or when nothing was compared (no endpoint in common)")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

// compareHelp is `pinprobe compare --help`: its text, then its flags under headings.
var compareHelp = commandHelp{"compare", `pinprobe compare: what changed between two saved JSON reports.

Usage:
  pinprobe compare [flags] BEFORE AFTER   (- reads one from standard input)

Endpoints are matched by URL and address (--match host: ignoring the port);
added and removed ones are listed. Every endpoint, instance, family and the
total is compared: failure rates by Fisher's exact test with Wilson intervals,
latency at the median (Mann-Whitney) and the 99th percentile (Fisher's exact
test of the slowest 1% of both runs together), with 95% intervals, and the
statuses that appeared, vanished or changed share. Significant means below
0.001 split over every test made; a latency change must also pass
--max-latency-increase. Reports with nothing in common are said to be, and
fail the gate. One run on both sides (a file given twice, a copy, a merged
report and one of its inputs) is refused. The conclusion comes first.
`, []flagGroup{
	{"Output", []string{"format", "brief", "output"}},
	{"Matching and latency", []string{"match", "max-latency-increase"}},
	{"Gate", []string{"fail-on-regression"}},
	{"Other", []string{"help"}},
}}

// validate checks that two reports are given, and that -o can be written.
func (c *compareConfig) validate() error {
	if len(c.files) != 2 {
		return usagef("compare: want two reports, BEFORE and AFTER; got %d", len(c.files))
	}
	return checkOutput(c.output)
}

// toleranceValue is --max-latency-increase: a percentage, a duration or
// both ("20%,5ms"), given once or over several occurrences of the flag
// (each kind at most once); "0" counts every significant change. The
// first occurrence replaces the default whole: what is not given is 0.
type toleranceValue struct {
	tol          compare.Tolerance
	set          bool
	ratio, floor bool // given
	zero         bool // "0" given
}

func (v *toleranceValue) String() string { return v.tol.String() }

func (v *toleranceValue) Set(s string) error {
	if !v.set {
		v.tol, v.set = compare.Tolerance{}, true
	}
	const want = "want a share of the percentile before (20%), a duration (5ms), both (20%,5ms) or 0"
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "0":
			if v.ratio || v.floor || v.zero {
				return errors.New("0 given beside another increase; " + want)
			}
			v.zero = true
		case strings.HasSuffix(part, "%"):
			r, err := strconv.ParseFloat(strings.TrimSuffix(part, "%"), 64)
			switch {
			case err != nil || !(r >= 0 && r <= 10000):
				return errors.New(want + "; a share from 0% to 10000%")
			case v.ratio || v.zero:
				return errors.New("a share given twice; " + want)
			}
			v.tol.Ratio, v.ratio = r/100, true
		default:
			d, err := time.ParseDuration(part)
			switch {
			case err != nil || d < 0 || d > time.Hour:
				return errors.New(want + "; a duration from 0 to 1h")
			case v.floor || v.zero:
				return errors.New("a duration given twice; " + want)
			}
			v.tol.MS, v.floor = float64(d)/float64(time.Millisecond), true
		}
	}
	return nil
}

func (v *toleranceValue) Type() string { return "INCREASE" }
