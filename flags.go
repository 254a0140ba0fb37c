// The flag plumbing every command shares: its FlagSet, parsing it, and
// pflag's errors reworded (with a did-you-mean for an unknown flag or command).

package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/words"
)

// newCommandFlagSet is an empty FlagSet for the command name: it returns
// its errors rather than printing them or exiting (run reports them), and
// lists flags in the order they are declared.
func newCommandFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args with fs, whose flags fill a command's config.
// pflag's ErrHelp (-h or --help when fs declares no such flag) sets *help;
// any other rejection is a usage error in flagError's words after prefix,
// the subcommand's "report: " (or "" for the probe).
func parseFlags(fs *pflag.FlagSet, args []string, help *bool, prefix string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			*help = true
			return nil
		}
		return usagef("%s%s", prefix, flagError(err, fs))
	}
	return nil
}

// parseFileCommand parses the arguments of a command that takes files
// (report, compare, logs): its flags into their config, the rest into
// *files, and, unless help was asked for, validates the config.
func parseFileCommand(fs *pflag.FlagSet, args []string, prefix string, help *bool, files *[]string, validate func() error) error {
	if err := parseFlags(fs, args, help, prefix); err != nil {
		return err
	}
	*files = fs.Args()
	if *help {
		return nil
	}
	return validate()
}

// pflagInvalid matches pflag's `invalid argument "V" for "-x, --name" flag: cause`.
var pflagInvalid = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (.*)$`)

// flagError rewrites pflag's message for a rejected value as `--name "V":
// cause`, and suggests the nearest flag for an unknown one.
func flagError(err error, fs *pflag.FlagSet) string {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if near := nearestFlag(fs, name); near != "" {
			return err.Error() + " (did you mean --" + near + "?)"
		}
	}
	if m := pflagInvalid.FindStringSubmatch(err.Error()); m != nil {
		cause := strings.TrimPrefix(m[3], "strconv.ParseInt: parsing "+strconv.Quote(m[1])+": ")
		cause = strings.TrimPrefix(cause, "time: ")
		value := m[1]
		if m[2] == "--header" { // the value may be a credential
			value = probe.RedactHeaderArg(value)
			cause = strings.ReplaceAll(cause, m[1], value)
		}
		return fmt.Sprintf("%s %q: %s", m[2], value, cause)
	}
	return err.Error()
}

// nearestFlag returns the long flag of fs closest to name, when it is a
// likely typo of it (see words.Nearest); "" otherwise.
func nearestFlag(fs *pflag.FlagSet, name string) string {
	name, _, _ = strings.Cut(name, "=")
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return words.Nearest(name, names)
}
