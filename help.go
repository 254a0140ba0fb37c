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

// exitCodesHelp ends every command's --help.
const exitCodesHelp = `
Exit codes: 0 done; 1 a release gate or check failed; 2 bad usage or input;
3 nothing could be probed; 4 the report could not be written; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP: the report of what was sent is still printed;
report and compare stop reading and write nothing), or report of a saved run
that was. When several apply, 4 comes before 1, and 1 before 130: a gate
breached before Ctrl-C is still breached. A closed stdout is no error.
`

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
