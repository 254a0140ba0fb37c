package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// helpWidth is the width --help fits in.
const helpWidth = 80

// flagGroup is a heading of --help and the flags under it.
type flagGroup struct {
	title string
	flags []string
}

// probeHelp orders the probe command's flags under headings.
var probeHelp = []flagGroup{
	{"Load", []string{"rate", "duration", "requests", "concurrency", "until-verdict"}},
	{"Addresses", []string{"ipv4", "ipv6", "resolve", "dns-server", "re-resolve", "preflight", "no-preflight"}},
	{"Request", []string{"targets", "method", "header", "body", "timeout", "http", "client", "cacert", "insecure", "no-request-id"}},
	{"Connections", []string{"conn-requests", "conn-age", "new-conn"}},
	{"Report", []string{"fail-status", "group-by", "format", "brief", "output", "samples", "interval", "quiet"}},
	{"Release gate (exit 1 when breached)", []string{"max-failure-rate", "max-p99", "fail-on-verdict"}},
	{"Other", []string{"demo", "help", "version"}},
}

// exitCodesHelp ends every command's --help.
const exitCodesHelp = `
Exit codes: 0 done; 1 a release gate or check failed; 2 bad usage or input;
3 nothing could be probed; 4 the report could not be written; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP: the report of what was sent is still printed).
`

func writeHelp(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, `pinprobe %s: find which backend address is behind an intermittent HTTP
failure.

Usage:
  pinprobe [flags] URL...          probe every A and AAAA address of each host
  pinprobe --demo                  probe a built-in reproduction of the incident
  pinprobe report [flags] FILE...  re-render (and merge) saved JSON reports
  pinprobe compare BEFORE AFTER    what changed between two saved reports
`, version)
	writeFlags(w, fs, probeHelp)
	fmt.Fprint(w, exitCodesHelp)
}

// writeFlags lists the flags of fs under the groups' headings, each with
// its usage wrapped to helpWidth.
func writeFlags(w io.Writer, fs *pflag.FlagSet, groups []flagGroup) {
	const col = 30 // where the usage starts
	for _, g := range groups {
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
			indent := strings.Repeat(" ", col)
			if len(left) >= col {
				fmt.Fprintf(w, "%s\n%s%s\n", left, indent, wrap(usage, helpWidth-col, indent))
				continue
			}
			fmt.Fprintf(w, "%-*s%s\n", col, left, wrap(usage, helpWidth-col, indent))
		}
	}
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
