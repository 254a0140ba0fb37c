// The command line as a report records it (probe's and a merging report's
// Command), with secrets replaced.

package main

import (
	"strings"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// redactArgs returns args with secret header values and URL passwords
// replaced. It knows every form pflag takes -H in: "-H v", "-Hv", "-H=v",
// and grouped with other shorthands, "-qH v" or "-qHv".
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		switch {
		case a == "--header" && i+1 < len(out):
			out[i+1] = probe.RedactHeaderArg(out[i+1])
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + probe.RedactHeaderArg(strings.TrimPrefix(a, "--header="))
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			switch j := headerValueAt(a); {
			case j == len(a) && i+1 < len(out):
				out[i+1] = probe.RedactHeaderArg(out[i+1])
			case j > 0 && j < len(a):
				out[i] = a[:j] + probe.RedactHeaderArg(a[j:])
			}
		case strings.Contains(a, "://") || strings.Contains(a, "@"):
			out[i] = probe.RedactRawURL(a)
		}
	}
	return out
}

// headerValueAt returns where the value of -H starts in a group of shorthand
// flags such as "-qH", "-qHName: v" or "-H=Name: v" (len(group) when it is
// the next argument), or -1 when the group holds no -H.
func headerValueAt(group string) int {
	fs := newFlagSet(&config{})
	for k := 1; k < len(group); k++ {
		if group[k] == 'H' {
			if k+1 < len(group) && group[k+1] == '=' {
				return k + 2
			}
			return k + 1
		}
		if f := fs.ShorthandLookup(group[k : k+1]); f == nil || f.NoOptDefVal == "" {
			return -1 // not a flag, or one that takes the rest of the group as its value
		}
	}
	return -1
}
