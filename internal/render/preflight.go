package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// PreflightOptions say how Preflight lists the checks.
type PreflightOptions struct {
	Verified bool // certificates were verified (no --insecure)
	Stopping bool // the load will not be sent (see session.PreflightStop)
	Width    int  // stderr's width in columns; 0 means DefaultWidth
	Quiet    bool // nothing when every check passed (-q), unless unverified
}

// Preflight writes the per-address connection checks before a run, on
// standard error: a clean check summed up in one line, else the failures
// listed, each fitted to the width.
func Preflight(w io.Writer, checks []report.PreflightCheck, o PreflightOptions) error {
	t := newTextWriter(w, Options{Width: o.Width})
	failed, note := failedChecks(checks), tlsNote(checks, o.Verified)
	switch {
	case failed == 0 && o.Quiet && !strings.Contains(note, "NOT"):
		return nil
	case failed == 0 && len(checks) == 1:
		t.printf("pinprobe: preflight: the endpoint connects%s\n", note)
		return t.err
	case failed == 0:
		t.printf("pinprobe: preflight: all %d endpoints connect%s\n", len(checks), note)
		return t.err
	}
	t.printf("pinprobe: preflight: %d of %d endpoint%s %s to connect (%s):\n", failed, len(checks), words.Plural(len(checks)),
		words.Agree(failed, "fails", "fail"), map[bool]string{true: "not probed", false: "probed anyway"}[o.Stopping])
	// A list under the log line of the failing rows of checkTable (their
	// target, address, family, class and error; the target only when
	// there are several), each wrapped to the width.
	first := 1
	if slices.ContainsFunc(checks, func(c report.PreflightCheck) bool { return c.Target != checks[0].Target }) {
		first = 0
	}
	var l List
	for _, row := range checkTable(checks).Rows {
		if row.Failing {
			l.Items = append(l.Items, Item{Failing: true, Text: strings.Join(row.Cells[first:5], " · ")})
		}
	}
	t.pageList(l)
	return t.err
}

// PreflightDoc returns the writer of --preflight's checks in a --format
// (text, markdown or html; JSON is report.PreflightJSON): how many
// endpoints connect, and each one's result.
func PreflightDoc(format string, o Options, po PreflightOptions) (func(io.Writer, []report.PreflightCheck) error, error) {
	return forFormat(format, o, func(checks []report.PreflightCheck) *Page {
		failed := failedChecks(checks)
		return &Page{Title: "pinprobe preflight", Bad: failed > 0, Sections: []Section{{Blocks: []Block{checkTable(checks)}}},
			Lead: Para{Lead: "PREFLIGHT", Text: fmt.Sprintf("%d of %d endpoint%s connect%s", len(checks)-failed, len(checks), words.Plural(len(checks)), tlsNote(checks, po.Verified))}}
	}, nil)
}

// failedChecks counts the checks that did not pass.
func failedChecks(checks []report.PreflightCheck) int {
	return len(slices.DeleteFunc(slices.Clone(checks), func(c report.PreflightCheck) bool { return c.OK }))
}

// checkTable is one row per check: ok and its timings, or its error class
// and error (on a terminal, the error in a line under the row: it is
// longer than any width leaves a column).
func checkTable(checks []report.PreflightCheck) Table {
	tb := Table{Marks: true, Cols: []Col{{Head: "Target"}, {Head: "Address"}, {Head: "Family"}, {Head: "Result"},
		{Head: "Detail", Only: documents}, {Head: "Detail", Only: FormatText}}}
	for _, c := range checks {
		row := Row{Failing: !c.OK, Cells: []string{c.Target, c.Address, words.FamilyName(c.Family)}}
		if d := checkDetail(c); c.OK {
			row.Cells = append(row.Cells, "ok", d, d)
		} else {
			row.Cells = append(row.Cells, c.Class, c.Error, "")
			row.Note = c.Error
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// checkDetail says a passed check's times: "tcp 0.21ms, tls 1.2ms, alpn h2".
func checkDetail(c report.PreflightCheck) string {
	detail := "tcp " + words.Latency(c.ConnectMS, 1)
	if c.TLS() {
		detail += ", tls " + words.Latency(c.TLSMS, 1)
		if c.ALPN != "" {
			detail += ", alpn " + c.ALPN
		}
	}
	return detail
}

// tlsNote says what the checks checked: TCP, and TLS when any is https.
func tlsNote(checks []report.PreflightCheck, verified bool) string {
	switch tls := slices.ContainsFunc(checks, func(c report.PreflightCheck) bool { return c.TLS() }); {
	case tls && verified:
		return " (TCP and TLS, certificate verified against the host name)"
	case tls:
		return " (TCP and TLS, certificate NOT verified: --insecure)"
	}
	return " (TCP)"
}
