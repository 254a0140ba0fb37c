package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
)

// maxVantageFile bounds the file --vantage @FILE reads: a name and a
// newline, with room for a setup step's trailing whitespace.
const maxVantageFile = 4 << 10

// checkVantageFlag validates --vantage NAME as given (an @FILE is read and
// checked by loadVantage).
func (c *config) checkVantageFlag() error {
	if c.vantage == "" || strings.HasPrefix(c.vantage, "@") {
		return nil
	}
	if err := report.CheckVantage(c.vantage); err != nil {
		return usagef("--vantage %q: %s", c.vantage, err)
	}
	return nil
}

// loadVantage settles the run's vantage: --vantage NAME, the name in FILE
// for --vantage @FILE (its first line, without surrounding spaces, as a
// Kubernetes init step writes the node's zone), or by default the host name
// made a vantage name (report.HostVantage; none when the host has no name).
func (c *config) loadVantage(ctx context.Context, stdin io.Reader) error {
	switch {
	case strings.HasPrefix(c.vantage, "@"):
		path := c.vantage[1:]
		b, err := readInput(ctx, "--vantage", path, maxVantageFile, stdin)
		if err != nil {
			return err
		}
		name, _, _ := strings.Cut(string(b), "\n")
		name = strings.TrimSpace(name)
		if err := report.CheckVantage(name); err != nil {
			if len(name) > 2*report.MaxVantageLen {
				name = name[:2*report.MaxVantageLen] + "…"
			}
			return usagef("--vantage @%s: %q: %s", path, name, err)
		}
		c.vantage = name
	case c.vantage == "":
		if h, err := os.Hostname(); err == nil {
			c.vantage = report.HostVantage(h)
		}
	}
	return nil
}
