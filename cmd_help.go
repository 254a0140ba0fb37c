package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/words"
)

// commands are the words that name a command when they come first; any
// other first word is the probe's (a URL, or a flag).
var commands = []string{"report", "compare", "logs", "watch", "help", "version"}

// helpUsage is how `pinprobe help` is called.
const helpUsage = "pinprobe help [report|compare|logs|watch|version]"

// helpOf writes each command's --help; "" is pinprobe's own.
var helpOf = map[string]func(io.Writer){
	"":        func(w io.Writer) { probeHelp.write(w, newFlagSet(&config{})) },
	"report":  func(w io.Writer) { reportHelp.write(w, newReportFlagSet(&reportConfig{})) },
	"compare": func(w io.Writer) { compareHelp.write(w, newCompareFlagSet(&compareConfig{})) },
	"logs":    func(w io.Writer) { logsHelp.write(w, newLogsFlagSet(&logsConfig{})) },
	"watch":   func(w io.Writer) { watchHelp.write(w, newWatchFlagSet(&watchConfig{}, new([]string))) },
	"version": func(w io.Writer) { versionHelp.write(w, nil) },
}

// helpCommand is `pinprobe help [COMMAND]`: the --help of COMMAND, or
// pinprobe's own.
func helpCommand(args []string, stdout io.Writer) error {
	if len(args) > 1 {
		return usagef("help: want one command at most: %s", helpUsage)
	}
	name := ""
	if len(args) == 1 && !slices.Contains([]string{"help", "-h", "--help"}, args[0]) {
		name = args[0]
	}
	if write, ok := helpOf[name]; ok {
		write(stdout)
		return nil
	}
	if near := nearestCommand(name); near != "" {
		return usagef("help: unknown command %q; did you mean %q?", name, near)
	}
	return usagef("help: unknown command %q: %s", name, helpUsage)
}

// versionCommand is `pinprobe version`, which --version is too.
func versionCommand(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		versionHelp.write(stdout, nil)
		return nil
	}
	if len(args) > 0 {
		return usagef("version: takes no argument; got %q", args[0])
	}
	writeVersion(stdout)
	return nil
}

// writeVersion is --version's line: the version, then when the commit was
// made and which Go built it.
func writeVersion(w io.Writer) {
	fmt.Fprintf(w, "pinprobe %s %s\n", version, built)
}

// unknownCommand is the error for a first word that is no URL and no
// command but a typo of one ("compre"): the probe would call it a URL
// without a scheme. A word near no command ("localhost") is left to the
// probe, whose message says what a URL needs.
func unknownCommand(args []string) error {
	if len(args) == 0 || !commandLike(args[0]) {
		return nil
	}
	if near := nearestCommand(args[0]); near != "" {
		return usagef("unknown command %q; did you mean %q?", args[0], near)
	}
	return nil
}

// commandLike reports whether s could be a mistyped command: a word of
// letters (and dashes), so no URL (no scheme, dot or colon), no address
// and no flag.
func commandLike(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r != '-' && (r >= utf8.RuneSelf || !words.IsASCIILetter(byte(r)))
	})
}

// nearestCommand returns the command closest to word when it is a likely
// typo of it (see words.Nearest); "" otherwise.
func nearestCommand(word string) string {
	return words.Nearest(strings.ToLower(word), commands)
}

// versionHelp is `pinprobe version --help`.
var versionHelp = commandHelp{"version", `pinprobe version: print pinprobe's version, as pinprobe --version does.

Usage:
  pinprobe version
`, nil}
