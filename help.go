package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// helpGroups orders the flags of --help under headings.
var helpGroups = []struct {
	title string
	flags []string
}{
	{"Load", []string{"rate", "duration", "requests", "concurrency"}},
	{"Addresses", []string{"ipv4", "ipv6", "resolve", "dns-server", "re-resolve", "preflight", "no-preflight"}},
	{"Request", []string{"targets", "method", "header", "body", "timeout", "http", "new-conn", "cacert", "insecure", "no-request-id"}},
	{"Report", []string{"fail-status", "format", "brief", "output", "samples", "interval", "quiet"}},
	{"Release gate (exit 1 when breached)", []string{"max-failure-rate", "max-p99", "fail-on-verdict"}},
	{"Other", []string{"demo", "help", "version"}},
}

func writeHelp(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, `pinprobe %s: find which backend address is behind an intermittent HTTP failure.

Usage:
  pinprobe [flags] URL...    probe every A and AAAA address of each URL's host
  pinprobe --demo            probe a built-in reproduction of the incident (loopback only)
`, version)
	for _, g := range helpGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.flags {
			f := fs.Lookup(name)
			left := "      --" + f.Name
			if f.Shorthand != "" {
				left = "  -" + f.Shorthand + ", --" + f.Name
			}
			varname, usage := pflag.UnquoteUsage(f)
			if f.Value.Type() != "bool" && varname != "" {
				left += " " + varname
			}
			if f.Value.Type() != "bool" && f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
				usage += " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(w, "%-30s %s\n", left, wrap(usage, 70, strings.Repeat(" ", 31)))
		}
	}
	fmt.Fprint(w, `
Exit codes: 0 finished, 1 a check failed (--preflight), 2 bad usage or input,
3 no address to probe, 130 interrupted (the report is still printed).
`)
}

// wrap breaks s into lines of at most width runes, indenting all but the first.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
