package render

import (
	"io"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// PreflightOptions say how Preflight lists the checks.
type PreflightOptions struct {
	All      bool // list every endpoint (--preflight), not only the failing ones
	Verified bool // certificates were verified (no --insecure)
	Stopping bool // the load will not be sent (see session.PreflightStop)
}

// Preflight writes the per-address connection checks. With All set it lists
// every endpoint; otherwise a clean check is summed up in one line and only
// failures are listed.
func Preflight(w io.Writer, checks []report.PreflightCheck, o PreflightOptions) error {
	all, verified := o.All, o.Verified
	t := &textWriter{errWriter: errWriter{w: w}, width: 1 << 20}
	failed := 0
	for _, c := range checks {
		if !c.OK {
			failed++
		}
	}
	if !all && failed == 0 {
		if len(checks) == 1 {
			t.printf("pinprobe: preflight: the endpoint connects%s\n", tlsNote(checks, verified))
		} else {
			t.printf("pinprobe: preflight: all %d endpoints connect%s\n", len(checks), tlsNote(checks, verified))
		}
		return t.err
	}
	if all {
		t.printf("PREFLIGHT  %d of %d endpoint%s connect%s\n", len(checks)-failed, len(checks), words.Plural(len(checks)), tlsNote(checks, verified))
	} else {
		verb := "fail"
		if failed == 1 {
			verb = "fails"
		}
		then := "probed anyway"
		if o.Stopping {
			then = "not probed"
		}
		t.printf("pinprobe: preflight: %d of %d endpoint%s %s to connect (%s):\n", failed, len(checks), words.Plural(len(checks)), verb, then)
	}
	var rows [][]string
	var failing []bool
	for _, c := range checks {
		if !all && c.OK {
			continue
		}
		row := []string{"", c.Target, c.Address, c.Family}
		if !c.OK {
			row[0] = failMark
			row = append(row, c.Class, c.Error)
		} else {
			detail := "tcp " + ms(c.ConnectMS)
			if c.TLS() {
				detail += ", tls " + ms(c.TLSMS)
				if c.ALPN != "" {
					detail += ", alpn " + c.ALPN
				}
			}
			row = append(row, "ok", detail)
		}
		rows = append(rows, row)
		failing = append(failing, !c.OK)
	}
	t.table(textTable{cols: []textCol{{}, {}, {}, {}, {}, {}}, rows: rows, failing: failing})
	return t.err
}

func tlsNote(checks []report.PreflightCheck, verified bool) string {
	for _, c := range checks {
		if c.TLS() && verified {
			return " (TCP and TLS, certificate verified against the host name)"
		}
		if c.TLS() {
			return " (TCP and TLS, certificate NOT verified: --insecure)"
		}
	}
	return " (TCP)"
}

func ms(v float64) string { return words.Latency(v, 1) }
