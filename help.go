// The --help plumbing every command shares: a command's flags listed under
// its headings, wrapped to 80 columns, and the exit codes that end each help.

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

// commandHelp is a command's --help: its text, its flags under headings,
// then its exit codes (commandExits).
type commandHelp struct {
	command string
	text    string
	groups  []flagGroup
}

// write writes the help of the command whose flags fs declares.
func (h commandHelp) write(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, h.text)
	writeFlags(w, fs, h.groups)
	writeExitCodes(w, h.command)
}

// exitDoc is an exit code a command can return, and what it means there.
type exitDoc struct {
	code int
	what string
}

// commandExits are the exit codes each command can return, in the words
// that end its --help, with the order they take when several apply. The
// tests hold every command to its list: each code is reached, and no run
// of the test suite returns another.
var commandExits = map[string]struct {
	codes []exitDoc
	order string
}{
	"probe": {[]exitDoc{
		{exitOK, "done"},
		{exitFail, "a release gate failed (breached or not proven) or a --preflight check failed"},
		{exitUsage, "bad usage or input"},
		{exitNoAddress, "nothing could be probed (the report says why)"},
		{exitWrite, "the report could not be written"},
		{exitInterrupted, "interrupted (Ctrl-C, SIGTERM or SIGHUP): the report of what was sent is still printed; a second signal prints it at once, the requests still in flight counted as abandoned; a third quits without it"},
	}, "When several apply, 4 comes before 3, 3 before 1, and 1 before 130: a gate breached before Ctrl-C is still breached. A closed stdout is no error."},
	"report": {[]exitDoc{
		{exitOK, "done"},
		{exitFail, "a release gate was breached"},
		{exitUsage, "bad usage or input"},
		{exitWrite, "the report could not be written"},
		{exitInterrupted, "interrupted while reading: nothing is written (a saved run that was interrupted is rendered, marked so, with 0)"},
	}, "When both apply, 4 comes before 1. A closed stdout is no error."},
	"compare": {[]exitDoc{
		{exitOK, "done (whatever changed, unless --fail-on-regression)"},
		{exitFail, "a regression, or no endpoint in common, under --fail-on-regression"},
		{exitUsage, "bad usage or input"},
		{exitWrite, "the comparison could not be written"},
		{exitInterrupted, "interrupted while reading: nothing is written"},
	}, "When both apply, 4 comes before 1. A closed stdout is no error."},
	"logs": {[]exitDoc{
		{exitOK, "done"},
		{exitUsage, "bad usage or input (a report or log that cannot be read)"},
		{exitWrite, "the join could not be written"},
		{exitInterrupted, "interrupted while reading: nothing is written"},
	}, "When both apply, 4 comes before 130. A closed stdout is no error."},
	"watch": {[]exitDoc{
		{exitOK, "stopped (SIGTERM, Ctrl-C or -d): a failing target never ends a watch"},
		{exitUsage, "bad usage or input, or a --listen address it cannot listen on"},
	}, "A second signal quits at once, without waiting for the requests in flight (exit 130)."},
	"help":    {[]exitDoc{{exitOK, "done"}, {exitUsage, "no such command"}}, ""},
	"version": {[]exitDoc{{exitOK, "done"}, {exitUsage, "an argument other than --help was given"}}, ""},
}

// writeExitCodes ends a command's --help: the exit codes it can return,
// one a line, and their order.
func writeExitCodes(w io.Writer, command string) {
	const col = 7 // where the meaning starts
	e := commandExits[command]
	fmt.Fprint(w, "\nExit codes:\n")
	for _, c := range e.codes {
		fmt.Fprintf(w, "  %-*d%s\n", col-2, c.code, wrap(c.what, helpWidth-col, strings.Repeat(" ", col)))
	}
	if e.order != "" {
		fmt.Fprintf(w, "%s\n", wrap(e.order, helpWidth, ""))
	}
}

// flagUsageCol is the column where a flag's usage starts in --help; a flag
// and its placeholder wider than that leave at least two spaces before it,
// or have it on the next line.
const flagUsageCol = 30

// writeFlags lists the flags of fs under the groups' headings, each with
// its usage wrapped to helpWidth.
func writeFlags(w io.Writer, fs *pflag.FlagSet, groups []flagGroup) {
	const col = flagUsageCol
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
			if len(left) > col-2 { // no two spaces before the usage: it goes below
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
