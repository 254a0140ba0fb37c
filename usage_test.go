package main

// Usage: what pinprobe refuses before it sends anything (malformed URLs,
// flag values, request parts, input files and mistyped commands: exit 2
// with one line), --help and the help command, --version and the version
// command, and the exit codes each command lists.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestBadInput: every malformed URL, flag value or input file is a usage
// error: exit 2, nothing on stdout, one stderr line naming the flag and the
// value.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("this is not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	const u = "http://app.test/"
	tests := []struct {
		name string
		args []string
		want []string // substrings of the one stderr line: the flag and the value
	}{
		{"malformed URL", []string{"http://[::1"}, []string{"URL", `"http://[::1"`}},
		{"unsupported scheme", []string{"ftp://app.test/file"}, []string{`"ftp://app.test/file"`, `scheme "ftp"`}},
		{"URL without scheme", []string{"app.test/path"}, []string{`"app.test/path"`, "scheme"}},
		{"URL without host", []string{"http:///path"}, []string{`"http:///path"`, "host"}},
		{"URL port out of range", []string{"http://app.test:99999/"}, []string{`"http://app.test:99999/"`, "99999"}},
		{"brief and detail", []string{"--brief", "--detail", u}, []string{"--brief", "--detail"}},
		{"rate zero", []string{"--rate", "0", u}, []string{"--rate", `"0"`}},
		{"rate negative", []string{"--rate", "-5", u}, []string{"--rate", `"-5"`}},
		{"rate not a number", []string{"--rate", "abc", u}, []string{"--rate", `"abc"`}},
		{"rate short flag", []string{"-r", "0", u}, []string{"--rate", `"0"`}},
		{"rate max unbounded", []string{"--rate", "max", "--duration", "0", u}, []string{"--rate max", "--duration"}},
		{"duration negative", []string{"--duration", "-1s", u}, []string{"--duration", "-1s"}},
		{"duration without unit", []string{"--duration", "5", u}, []string{"--duration", `"5"`}},
		{"requests negative", []string{"--requests", "-1", u}, []string{"--requests", "-1"}},
		{"concurrency zero", []string{"--concurrency", "0", u}, []string{"--concurrency", "0"}},
		{"timeout zero", []string{"--timeout", "0", u}, []string{"--timeout", "0"}},
		{"pace grain too coarse", []string{"--pace-grain", "1s", u}, []string{"--pace-grain", "1s", "100ms"}},
		{"pace grain negative", []string{"--pace-grain", "-5ms", u}, []string{"--pace-grain", "-5ms"}},
		{"pace grain with rate max", []string{"--pace-grain", "10ms", "--rate", "max", "-d", "1s", u}, []string{"--pace-grain", "--rate max"}},
		{"resolve no port", []string{"--resolve", "app.test", u}, []string{"--resolve", `"app.test"`}},
		{"resolve no address", []string{"--resolve", "app.test:80", u}, []string{"--resolve", `"app.test:80"`}},
		{"resolve empty address", []string{"--resolve", "app.test:80:", u}, []string{"--resolve", `"app.test:80:"`}},
		{"resolve not an IP", []string{"--resolve", "app.test:80:backend1", u}, []string{"--resolve", "backend1"}},
		{"resolve one bad IP in list", []string{"--resolve", "app.test:80:127.0.0.1,300.1.1.1", u}, []string{"--resolve", "300.1.1.1"}},
		{"resolve port zero", []string{"--resolve", "app.test:0:127.0.0.1", u}, []string{"--resolve", `"app.test:0:127.0.0.1"`}},
		{"resolve port too big", []string{"--resolve", "app.test:70000:127.0.0.1", u}, []string{"--resolve", "70000"}},
		{"resolve port not a number", []string{"--resolve", "app.test:http:127.0.0.1", u}, []string{"--resolve", `"app.test:http:127.0.0.1"`}},
		{"resolve no host", []string{"--resolve", ":80:127.0.0.1", u}, []string{"--resolve", `":80:127.0.0.1"`}},
		{"resolve unclosed bracket", []string{"--resolve", "[::1:80:127.0.0.1", u}, []string{"--resolve", `"[::1:80:127.0.0.1"`}},
		{"resolve zoned address", []string{"--resolve", "app.test:80:fe80::1%eth0", u}, []string{"--resolve", "fe80::1%eth0"}},
		{"cacert missing", []string{"--cacert", missing, u}, []string{"--cacert", missing, "no such file"}},
		{"cacert not PEM", []string{"--cacert", notPEM, u}, []string{"--cacert", notPEM, "PEM"}},
		{"cacert with insecure", []string{"--cacert", notPEM, "--insecure", u}, []string{"--cacert", "--insecure"}},
		{"format xml", []string{"--format", "xml", u}, []string{"--format", `"xml"`}},
		{"http 3", []string{"--http", "3", u}, []string{"--http", `"3"`}},
		{"-4 and -6", []string{"-4", "-6", u}, []string{"-4", "-6"}},
		{"fail-status 7xx", []string{"--fail-status", "7xx", u}, []string{"--fail-status", "7xx"}},
		{"fail-status abc", []string{"--fail-status", "abc", u}, []string{"--fail-status", "abc"}},
		{"fail-status bad item in list", []string{"--fail-status", "5xx,abc", u}, []string{"--fail-status", "abc"}},
		{"fail-status reversed range", []string{"--fail-status", "503-500", u}, []string{"--fail-status", "503-500"}},
		{"fail-status too small", []string{"--fail-status", "99", u}, []string{"--fail-status", "99"}},
		{"dns-server bogus", []string{"--dns-server", "bogus", u}, []string{"--dns-server", `"bogus"`}},
		{"dns-server port too big", []string{"--dns-server", "127.0.0.1:99999", u}, []string{"--dns-server", "127.0.0.1:99999"}},
		{"header without colon", []string{"--header", "NoColon", u}, []string{"--header", "NoColon"}},
		// A secret header's name alone holds no secret: said as given,
		// not as if a value had been redacted.
		{"secret header without value", []string{"-H", "Authorization", u}, []string{`--header "Authorization": want`}},
		{"header short flag", []string{"-H", "X-Trace 1", u}, []string{"--header", "X-Trace 1"}},
		{"header empty name", []string{"-H", ": value", u}, []string{"--header", ": value"}},
		{"header Content-Length", []string{"-H", "Content-Length: 5", u}, []string{"--header", "Content-Length", "--body"}},
		{"header Transfer-Encoding", []string{"-H", "transfer-encoding: chunked", u}, []string{"--header", "Transfer-Encoding"}},
		{"method with space", []string{"--method", "GET X", u}, []string{"--method", "GET X"}},
		{"body file missing", []string{"--body", "@" + missing, u}, []string{"--body", missing}},
		{"output named as HTML", []string{"-o", filepath.Join(dir, "r.html"), u}, []string{"--output", "r.html", "--format html"}},
		{"output named as Markdown", []string{"--output", filepath.Join(dir, "r.md"), u}, []string{"--output", "r.md", "--format markdown"}},
		{"output in missing directory", []string{"-o", filepath.Join(missing, "r.json"), u}, []string{"--output", missing}},
		{"preflight both ways", []string{"--preflight", "--no-preflight", u}, []string{"--preflight", "--no-preflight"}},
		{"demo with a URL", []string{"--demo", u}, []string{"--demo", u}},
		{"no URL", nil, []string{"no URL"}},
		{"no URL, only flags", []string{"-q", "--rate", "5"}, []string{"no URL"}},
		{"unknown flag", []string{"--bogus", u}, []string{"--bogus"}},
		{"unknown short flag", []string{"-Z", u}, []string{"Z"}},
		{"flag without value", []string{u, "--rate"}, []string{"--rate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := pinprobe(t, tt.args...)
			if code != exitUsage {
				t.Errorf("pinprobe %q: exit %d; want %d (stderr %q)", tt.args, code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("pinprobe %q: stdout %q; want nothing", tt.args, stdout)
			}
			if !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("pinprobe %q: stderr %q; want exactly one line", tt.args, stderr)
			}
			if !strings.HasPrefix(stderr, "pinprobe: ") {
				t.Errorf("pinprobe %q: stderr %q; want it to start with \"pinprobe: \"", tt.args, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("pinprobe %q: stderr %q; want it to name %q", tt.args, stderr, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(missing, "r.json")); err == nil {
		t.Errorf("a rejected -o left its file behind")
	}
}

// Header names, values and methods net/http would refuse are usage errors,
// not failed requests blamed on the backend.
func TestInvalidRequestPartsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-H", "Bad(Name): v"},
		{"-H", "X-A: v\x01"},
		{"-X", "GET /x"},
		{"-c", "10001"},
		{"--samples", "1001"},
	} {
		code, stdout, stderr := pinprobe(t, append(args, "http://127.0.0.1:1/")...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, args[0]) && !strings.Contains(stderr, "--") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the flag", args, code, stdout, stderr)
		}
	}
}

// TestInputsAreCapped: inputs must be regular files (or -) and are read
// with a cap, so /dev/zero cannot exhaust the machine.
func TestInputsAreCapped(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, make([]byte, maxCACert+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--body", "@/dev/zero", "http://a.test/"}, "not a regular file"},
		{[]string{"--cacert", "/dev/zero", "https://a.test/"}, "not a regular file"},
		{[]string{"--targets", "/dev/zero"}, "not a regular file"},
		{[]string{"--cacert", big, "https://a.test/"}, "larger than the 1 MiB"},
	} {
		code, _, stderr := pinprobe(t, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("pinprobe %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	// Standard input is capped too, and a signal stops the read.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan int)
	go func() {
		var out, errb strings.Builder
		done <- runWith(ctx, []string{"--body", "@-", "http://a.test/"}, pr, &out, &errb)
	}()
	go pw.Write(make([]byte, 1024)) // some input, then nothing: the read waits
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Errorf("interrupted while reading stdin: exit %d; want %d", code, exitInterrupted)
	}
}

// TestHelp: --help (-h, also among other flags) shows every flag of the
// contract and the exit codes on stdout.
func TestHelp(t *testing.T) {
	// The long flags DESIGN.md makes the contract, as far as this release has them.
	contract := []string{"rate", "duration", "requests", "concurrency", "resolve", "dns-server", "new-conn",
		"method", "header", "body", "timeout", "cacert", "insecure", "http", "fail-status", "output", "format",
		"quiet", "preflight", "no-preflight", "demo", "help", "version"}
	shorts := []string{"-r", "-d", "-n", "-c", "-4", "-6", "-X", "-H", "-o", "-q", "-h"}
	var defined []string
	newFlagSet(&config{}).VisitAll(func(f *pflag.Flag) { defined = append(defined, f.Name) })
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--rate", "5", "--help", "http://app.test/"}} {
		code, stdout, stderr := pinprobe(t, args...)
		if code != exitOK {
			t.Errorf("pinprobe %q: exit %d; want 0", args, code)
		}
		if stderr != "" {
			t.Errorf("pinprobe %q: stderr %q; want nothing", args, stderr)
		}
		for _, name := range slices.Concat(contract, defined) {
			if !strings.Contains(stdout, "--"+name) {
				t.Errorf("pinprobe %q: help does not show --%s", args, name)
			}
		}
		for _, s := range shorts {
			if !strings.Contains(stdout, s+", --") {
				t.Errorf("pinprobe %q: help does not show %s", args, s)
			}
		}
		for _, w := range []string{"Usage:", "Exit codes", "130"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("pinprobe %q: help has no %q", args, w)
			}
		}
	}
}

// TestVersion: --version and the version command print the version alone.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, stderr := pinprobe(t, args...)
		want := "pinprobe " + version + " " + built + "\n"
		if code != exitOK || stdout != want || stderr != "" {
			t.Errorf("pinprobe %q: exit %d, stdout %q, stderr %q; want 0, %q, nothing", args, code, stdout, stderr, want)
		}
	}
	if code, stdout, stderr := pinprobe(t, "version", "x"); code != exitUsage || stdout != "" || !strings.Contains(stderr, `version: takes no argument; got "x"`) {
		t.Errorf("pinprobe version x: exit %d, stdout %q, stderr %q; want 2 naming the argument", code, stdout, stderr)
	}
}

// TestHelpCommand: `pinprobe help [COMMAND]` is that command's --help, or
// pinprobe's own; a mistyped command gets the one it probably meant.
func TestHelpCommand(t *testing.T) {
	for _, tt := range []struct{ help, same []string }{
		{[]string{"help"}, []string{"--help"}},
		{[]string{"help", "report"}, []string{"report", "--help"}},
		{[]string{"help", "compare"}, []string{"compare", "-h"}},
		{[]string{"help", "version"}, []string{"version", "-h"}},
		{[]string{"help", "help"}, []string{"-h"}},
	} {
		code, got, stderr := pinprobe(t, tt.help...)
		_, want, _ := pinprobe(t, tt.same...)
		if code != exitOK || stderr != "" || got != want || !strings.Contains(got, "Usage:") {
			t.Errorf("pinprobe %q: exit %d, stderr %q, %d bytes; want 0 and the help of pinprobe %q (%d bytes)", tt.help, code, stderr, len(got), tt.same, len(want))
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "compre"}, `help: unknown command "compre"; did you mean "compare"?`},
		{[]string{"help", "bogus"}, `help: unknown command "bogus": pinprobe help [report|compare|logs|watch|version]`},
		{[]string{"help", "report", "compare"}, "help: want one command at most"},
	} {
		code, stdout, stderr := pinprobe(t, tt.args...)
		if code != exitUsage || stdout != "" || stderr != "pinprobe: "+tt.want+"\n" && !strings.Contains(stderr, tt.want) {
			t.Errorf("pinprobe %q: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestUnknownCommandSuggestsTheNearest: a first word that is a typo of a
// command is said to be one, not a URL without a scheme; a word near no
// command is still a URL that needs its scheme.
func TestUnknownCommandSuggestsTheNearest(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"compre", "a", "b"}, `unknown command "compre"; did you mean "compare"?`},
		{[]string{"comapre", "a", "b"}, `unknown command "comapre"; did you mean "compare"?`},
		{[]string{"reprot", "a.json"}, `unknown command "reprot"; did you mean "report"?`},
		{[]string{"reports", "--format", "html", "a.json"}, `unknown command "reports"; did you mean "report"?`},
		{[]string{"Compare", "a", "b"}, `unknown command "Compare"; did you mean "compare"?`},
		{[]string{"hlep"}, `unknown command "hlep"; did you mean "help"?`},
		{[]string{"verison"}, `unknown command "verison"; did you mean "version"?`},
		{[]string{"localhost"}, `URL "localhost" has no scheme`},
		{[]string{"app.test"}, `URL "app.test" has no scheme`},
		{[]string{"-q", "compre", "http://a.test/"}, `URL "compre" has no scheme`}, // after a flag, it is the probe's
	} {
		refused(t, tt.want, tt.args...)
	}
}

// commandHelps is the --help of every command, by the arguments that show it.
func commandHelps(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, args := range [][]string{{"--help"}, {"report", "--help"}, {"compare", "--help"}, {"logs", "--help"}, {"version", "--help"}} {
		code, stdout, stderr := pinprobe(t, args...)
		if code != exitOK || stdout == "" {
			t.Fatalf("pinprobe %q: exit %d, stderr %q", args, code, stderr)
		}
		out[strings.Join(args, " ")] = stdout
	}
	return out
}

// TestHelpFits: every line of every command's --help fits 80 columns, and
// a flag's usage is set off from the flag and its placeholder by two
// spaces at least ("--max-failure-rate RATE release gate" read as one),
// or starts on the next line, at its column, where the flag and its
// placeholder are too long for two spaces ("--max-latency-increase
// INCREASE").
func TestHelpFits(t *testing.T) {
	flagLine := regexp.MustCompile(`^  (-[a-z0-9], |    )--[a-z0-9-]+`)
	alone := regexp.MustCompile(`^  (-[a-z0-9], |    )--[a-z0-9-]+( [A-Z][A-Z:]*)?$`)
	usageBelow := strings.Repeat(" ", flagUsageCol)
	for args, help := range commandHelps(t) {
		lines := strings.Split(help, "\n")
		for i, line := range lines {
			if n := utf8.RuneCountInString(line); n > helpWidth {
				t.Errorf("pinprobe %s: line %d is %d columns (at most %d):\n%s", args, i+1, n, helpWidth, line)
			}
			below := i+1 < len(lines) && strings.HasPrefix(lines[i+1], usageBelow) && lines[i+1][flagUsageCol] != ' '
			if alone.MatchString(line) && below {
				continue
			}
			if flagLine.MatchString(line) && len(line) > flagUsageCol &&
				(line[flagUsageCol-2:flagUsageCol] != "  " || line[flagUsageCol] == ' ') {
				t.Errorf("pinprobe %s: line %d has no two spaces before its usage at column %d:\n%s", args, i+1, flagUsageCol, line)
			}
		}
	}
}

// commandFlagSets is the flag set of every command.
func commandFlagSets() map[string]*pflag.FlagSet {
	return map[string]*pflag.FlagSet{
		"probe":   newFlagSet(&config{}),
		"report":  newReportFlagSet(&reportConfig{}),
		"compare": newCompareFlagSet(&compareConfig{}),
	}
}

// TestHelpPlaceholders: every flag that takes a value shows what the value
// is in capitals (--duration DURATION, --samples N, --client KIND), never
// a Go type or one of the values (--duration duration, --samples int,
// --client auto).
func TestHelpPlaceholders(t *testing.T) {
	placeholder := regexp.MustCompile(`^("[A-Z]+: [A-Z]+"|[A-Z]+(:[A-Z]+)*)$`)
	for cmd, fs := range commandFlagSets() {
		fs.VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if f.Value.Type() == "bool" {
				return
			}
			if !placeholder.MatchString(name) {
				t.Errorf("%s --%s: placeholder %q; want a word in capitals that says what the value is", cmd, f.Name, name)
			}
		})
	}
}

// TestDurationFlagsSuggestTheirUnit: a duration given without its unit is
// refused with the value in the unit that flag takes (--max-p99 800 is
// "800ms", --duration 5 is "5s"), and any other refusal shows values of
// that flag; every value suggested is one the flag accepts. A failure
// rate over 1 is suggested as a percentage, a request rate with its unit
// as the number alone.
func TestDurationFlagsSuggestTheirUnit(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-p99", "800", "http://a.test/"}, `--max-p99 "800": a duration needs its unit, e.g. "800ms"`},
		{[]string{"report", "--max-p99", "800", "r.json"}, `report: --max-p99 "800": a duration needs its unit, e.g. "800ms"`},
		{[]string{"-d", "5", "http://a.test/"}, `--duration "5": a duration needs its unit, e.g. "5s"`},
		{[]string{"--timeout", "2.5", "http://a.test/"}, `--timeout "2.5": a duration needs its unit, e.g. "2.5s"`},
		{[]string{"--max-p99", "soon", "http://a.test/"}, `--max-p99 "soon": must be a duration like "800ms" or "1.5s"`},
		{[]string{"--max-failure-rate", "5", "http://a.test/"}, `--max-failure-rate "5": want a rate from 0 to 1 (0% to 100%), e.g. "5%" for 5 in a hundred`},
		{[]string{"--max-failure-rate", "500", "http://a.test/"}, `--max-failure-rate "500": want a rate from 0 to 1 (0% to 100%)`},
		{[]string{"-r", "50/s", "http://a.test/"}, `--rate "50/s": requests per second are the number alone, e.g. "50"`},
		{[]string{"-r", "2.5 req/s", "http://a.test/"}, `--rate "2.5 req/s": requests per second are the number alone, e.g. "2.5"`},
		{[]string{"-r", "0/s", "http://a.test/"}, `--rate "0/s": want requests per second from 0.001 to 10000000, or "max"`},
	} {
		code, _, stderr := pinprobe(t, tt.args...)
		if code != exitUsage || stderr != "pinprobe: "+tt.want+"\n" {
			t.Errorf("pinprobe %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	suggested := regexp.MustCompile(`"([^"]+)"`)
	for cmd, fs := range commandFlagSets() {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "duration" {
				t.Errorf("%s --%s: pflag's duration flag, whose refusal suggests \"30s\" or \"5m\" whatever the flag; declare it with durationVarP", cmd, f.Name)
			}
			v, ok := f.Value.(*durationValue)
			if !ok {
				return
			}
			for _, bad := range []string{"800", "soon"} {
				err := v.Set(bad)
				if err == nil {
					t.Errorf("%s --%s %s: accepted", cmd, f.Name, bad)
					continue
				}
				for _, m := range suggested.FindAllStringSubmatch(err.Error(), -1) {
					if err := (&durationValue{d: new(time.Duration)}).Set(m[1]); err != nil {
						t.Errorf("%s --%s %s suggests %q, which is no duration: %v", cmd, f.Name, bad, m[1], err)
					}
				}
			}
		})
	}
}

// TestCountFlagsSuggestANumber: a whole-number flag refuses another value
// with what it counts and a value it takes: the number meant where one was
// written another way (1e6, 10k, 1,000), else the flag's example; every
// value suggested is one the flag accepts, and no flag uses pflag's int
// types, whose refusal says only "must be an integer".
func TestCountFlagsSuggestANumber(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "1e6", "http://a.test/"}, `--requests "1e6": want a whole number of requests, e.g. "1000000"`},
		{[]string{"-n", "10k", "http://a.test/"}, `--requests "10k": want a whole number of requests, e.g. "10000"`},
		{[]string{"-c", "1,000", "http://a.test/"}, `--concurrency "1,000": want a whole number of requests in flight, e.g. "1000"`},
		{[]string{"--samples", "2.0", "http://a.test/"}, `--samples "2.0": want a whole number of samples, e.g. "2"`},
		{[]string{"--samples", "2.5", "http://a.test/"}, `--samples "2.5": want a whole number of samples, e.g. "5"`},
		{[]string{"-c", "many", "http://a.test/"}, `--concurrency "many": want a whole number of requests in flight, e.g. "50"`},
		{[]string{"-n", "99999999999999999999", "http://a.test/"}, `--requests "99999999999999999999": too large: want a whole number of requests, e.g. "1000"`},
	} {
		code, _, stderr := pinprobe(t, tt.args...)
		if code != exitUsage || stderr != "pinprobe: "+tt.want+"\n" {
			t.Errorf("pinprobe %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	suggested := regexp.MustCompile(`"([^"]+)"`)
	for cmd, fs := range commandFlagSets() {
		fs.VisitAll(func(f *pflag.Flag) {
			switch v := f.Value.(type) {
			case *countValue[int]:
				checkCountSuggestions(t, cmd+" --"+f.Name, v, suggested)
			case *countValue[int64]:
				checkCountSuggestions(t, cmd+" --"+f.Name, v, suggested)
			default:
				if ty := f.Value.Type(); strings.HasPrefix(ty, "int") || strings.HasPrefix(ty, "uint") {
					t.Errorf("%s --%s: pflag's %s flag, whose refusal says only \"must be an integer\"; declare it with countVarP", cmd, f.Name, ty)
				}
			}
		})
	}
}

// checkCountSuggestions fails t when a refusal of v suggests a value v refuses.
func checkCountSuggestions(t *testing.T, flag string, v pflag.Value, suggested *regexp.Regexp) {
	t.Helper()
	for _, bad := range []string{"x", "1e3", "2k", "1.5", "99999999999999999999"} {
		err := v.Set(bad)
		if err == nil {
			t.Errorf("%s %s: accepted", flag, bad)
			continue
		}
		m := suggested.FindStringSubmatch(err.Error())
		if m == nil {
			t.Errorf("%s %s: %q suggests no value", flag, bad, err)
			continue
		}
		if err := v.Set(m[1]); err != nil {
			t.Errorf("%s %s suggests %q, which it refuses: %v", flag, bad, m[1], err)
		}
	}
}

// TestExitCodesPerCommand: each command's --help lists exactly the exit
// codes of commandExits, and each of them is reached here. (TestMain checks
// that no run of the whole suite returns a code its command does not list.)
func TestExitCodesPerCommand(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to make a write fail")
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	closed := testserver.ClosedPort(t, testserver.Lo4a)
	refused := []string{"--resolve", fmt.Sprintf("app.test:%d:127.0.0.1", closed), fmt.Sprintf("http://app.test:%d/", closed)}
	up := []string{"--resolve", f.Resolve(), f.URL()}
	dir := t.TempDir()
	other := writeIn(t, dir, "other.json", goldenSaved(t)) // no endpoint in common with demoReport
	demo, err := os.ReadFile(demoReport)
	if err != nil {
		t.Fatal(err)
	}
	// Another run that counted the same: compare refuses one run twice.
	demoAgain := writeIn(t, dir, "demo-again.json", otherRun(t, demo, "0a0a0a0a"))
	oneLog := filepath.Join(dir, "access.log") // one nginx combined line, not of the run
	if err := os.WriteFile(oneLog, []byte(`127.0.0.1 - - [16/Jun/2026:20:43:00 +0000] "GET / HTTP/1.1" 200 5 "-" "pinprobe/0.1.0"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const interrupt = "interrupt" // run with a cancelled context, standard input never ending
	scenarios := map[string][][]string{
		"probe": {
			slices.Concat([]string{"-q", "--preflight"}, up),                    // 0
			slices.Concat([]string{"-q", "--preflight"}, refused),               // 1
			{"--rate", "0", "http://a.test/"},                                   // 2
			slices.Concat([]string{"-q", "-n", "5"}, refused),                   // 3
			slices.Concat([]string{"-q", "--preflight", "-o", "/dev/full"}, up), // 4
			{interrupt, "--body", "@-", "http://a.test/"},                       // 130
		},
		"report": {
			{"report", demoReport},
			{"report", "--max-failure-rate", "0", demoReport},
			{"report"},
			{"report", "-o", "/dev/full", demoReport},
			{interrupt, "report", "-"},
		},
		"compare": {
			{"compare", demoReport, demoAgain},
			{"compare", "--fail-on-regression", demoReport, other},
			{"compare", demoReport},
			{"compare", "-o", "/dev/full", demoReport, demoAgain},
			{interrupt, "compare", demoReport, "-"},
		},
		"logs": {
			{"logs", demoReport, oneLog},
			{"logs", demoReport},
			{"logs", "-o", "/dev/full", demoReport, oneLog},
			{interrupt, "logs", demoReport, "-"},
		},
		"watch": {
			slices.Concat([]string{"watch", "-d", "500ms", "--listen", "127.0.0.1:0"}, up), // 0
			{"watch", "-n", "5", "http://a.test/"},                                         // 2
		},
		"help":    {{"help"}, {"help", "bogus"}},
		"version": {{"version"}, {"version", "bogus"}},
	}
	helps := commandHelps(t)
	for cmd, runs := range scenarios {
		var want, got []int
		for _, e := range commandExits[cmd].codes {
			want = append(want, e.code)
		}
		for _, args := range runs {
			var code int
			if args[0] == interrupt {
				args = args[1:]
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				pr, pw := io.Pipe()
				code = runWith(ctx, args, pr, io.Discard, io.Discard)
				pw.Close()
				exitsSeen.add(args, code)
			} else {
				code, _, _ = pinprobe(t, args...)
			}
			got = append(got, code)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the scenarios exit %v; want %v, the codes it lists", cmd, got, want)
		}
		help, ok := helps[strings.TrimPrefix(cmd+" --help", "probe ")]
		if !ok {
			continue // help and version have no --help of their own
		}
		_, list, _ := strings.Cut(help, "\nExit codes:\n")
		var listed []int
		for _, line := range strings.Split(list, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
				n, err := strconv.Atoi(f[0])
				if err != nil {
					t.Fatalf("%s --help: exit code line %q", cmd, line)
				}
				listed = append(listed, n)
			}
		}
		if !slices.Equal(listed, want) {
			t.Errorf("%s --help lists exit codes %v; want %v", cmd, listed, want)
		}
	}
}

// TestUnknownFlagSuggestsTheNearest: a typo gets the flag it probably meant.
func TestUnknownFlagSuggestsTheNearest(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"--duraton", "did you mean --duration?"},
		{"--rat", "did you mean --rate?"},
		{"--durtaion", "did you mean --duration?"}, // two letters swapped are one edit
		{"--max-p9", "did you mean --max-p99?"},
		{"--xyz", ""},
	} {
		code, _, stderr := pinprobe(t, tt.arg, "1", "http://a.test/")
		if code != exitUsage {
			t.Errorf("%s: exit %d; want 2", tt.arg, code)
		}
		if tt.want != "" && !strings.Contains(stderr, tt.want) || tt.want == "" && strings.Contains(stderr, "did you mean") {
			t.Errorf("%s: stderr %q; want %q", tt.arg, stderr, tt.want)
		}
	}
}

// TestUsageErrorsShowNoSecret: a usage error ends up in CI logs, so none
// may quote a credential, whatever is wrong with the URL or the header.
func TestUsageErrorsShowNoSecret(t *testing.T) {
	for _, args := range [][]string{
		{"https://user:hunter22@app.test:99999/?token=t0k3n"},
		{"user:hunter22@app.test/?token=t0k3n"},
		{"https://user:hunter22@/?token=t0k3n"},
		{"gopher://user:hunter22@app.test/?token=t0k3n"},
		{"https://user:hunter22@[::1/?token=t0k3n"},
		{"https://hunter22@app.test:0/"},
		{"-H", "Authorization Bearer hunter22", "http://app.test/"},
		{"-H", "X-Auth=hunter22", "http://app.test/"},
		{"--header=Proxy-Authorization;hunter22", "http://app.test/"},
		{"-H", "Bearer hunter22", "http://app.test/"},
		{"-H", "X-Api-Key: hunter22\r\nX: y", "http://app.test/"},
		{"--demo", "https://u:hunter22@app.test/?auth=t0k3n"},
		{"--rate", "abc", "https://u:hunter22@app.test/?session=t0k3n"},
	} {
		code, stdout, stderr := pinprobe(t, args...)
		if code != exitUsage {
			t.Errorf("pinprobe %q: exit %d; want 2", args, code)
		}
		for _, secret := range []string{"hunter22", "t0k3n"} {
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("pinprobe %q: %q shows %q", args, stderr, secret)
			}
		}
	}
}

// TestClientFlag: each request path runs the demo to the same verdict; a
// fast path cannot speak HTTP/2.
func TestClientFlag(t *testing.T) {
	t.Parallel()
	check.Long(t, "seconds of live traffic")
	for _, client := range []string{"auto", "fast", "std"} {
		rep, _, _ := probeReport(t, "--demo", "-d", "1s", "-r", "90", "--client", client)
		if rep.Verdict.Status != "concentrated" {
			t.Errorf("--client %s: verdict %s; want concentrated", client, rep.Verdict.Status)
		}
	}
	if code, _, stderr := pinprobe(t, "--client", "fast", "--http", "2", "http://a.test/"); code != exitUsage || !strings.Contains(stderr, "--client fast") {
		t.Errorf("--client fast --http 2: exit %d, %q; want a usage error", code, stderr)
	}
}

// TestPlanLineBeforeTheLoad: before the load, pinprobe says its plan in a
// line (render.PlanLine) and warns when some endpoints will get no request.
func TestPlanLineBeforeTheLoad(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a, testserver.Lo4b)
	code, _, stderr := pinprobe(t, "--format", "json", "--no-preflight", "-r", "10", "-n", "1", "--resolve", f.Resolve(), f.URL())
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "pinprobe: 10 requests/s in total (5 per endpoint); for 30 s; at most 1 request over 2 endpoints of app.test: 127.0.0.1, 127.0.0.2"
	warn := ". Warning: 1 request in all, and 1 of the 2 endpoints will get none, so they will not be judged: raise -r or -d"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, warn) {
		t.Errorf("stderr lacks the plan %q… and its warning %q:\n%s", want, warn, stderr)
	}
}
