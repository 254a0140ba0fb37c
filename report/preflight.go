package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"pinprobe/probe"
)

// Preflight writes the per-address connection checks. With all set it lists
// every endpoint; otherwise a clean check is summed up in one line and only
// failures are listed.
func Preflight(w io.Writer, eps []*probe.Endpoint, checks []probe.Check, all bool) error {
	t := &textWriter{errWriter: errWriter{w: w}, width: 1 << 20}
	failed := 0
	for _, c := range checks {
		if c.Err != nil {
			failed++
		}
	}
	if !all && failed == 0 {
		if len(checks) == 1 {
			t.printf("pinprobe: preflight: the endpoint connects%s\n", tlsNote(eps))
		} else {
			t.printf("pinprobe: preflight: all %d endpoints connect%s\n", len(checks), tlsNote(eps))
		}
		return t.err
	}
	if all {
		t.printf("PREFLIGHT  %d of %d endpoint%s connect%s\n", len(checks)-failed, len(checks), Plural(len(checks)), tlsNote(eps))
	} else {
		verb := "fail"
		if failed == 1 {
			verb = "fails"
		}
		t.printf("pinprobe: preflight: %d of %d endpoint%s %s to connect (probed anyway):\n", failed, len(checks), Plural(len(checks)), verb)
	}
	var rows [][]string
	var failing []bool
	for i, c := range checks {
		ep := eps[i]
		if !all && c.Err == nil {
			continue
		}
		row := []string{"", ep.Target.String(), ep.Addr.String(), string(ep.Family())}
		if c.Err != nil {
			row[0] = failMark
			row = append(row, string(c.Class), c.Err.Error())
		} else {
			detail := "tcp " + dur(c.Connect)
			if ep.Target.TLS() {
				detail += ", tls " + dur(c.Handshake)
				if c.ALPN != "" {
					detail += ", alpn " + c.ALPN
				}
			}
			row = append(row, "ok", detail)
		}
		rows = append(rows, row)
		failing = append(failing, c.Err != nil)
	}
	t.table(textTable{cols: []textCol{{}, {}, {}, {}, {}, {}}, rows: rows, failing: failing})
	return t.err
}

func tlsNote(eps []*probe.Endpoint) string {
	for _, ep := range eps {
		if ep.Target.TLS() {
			return " (TCP and TLS, certificate verified against the host name)"
		}
	}
	return " (TCP)"
}

// Plural returns "s" unless n is 1: fmt.Sprintf("%d endpoint%s", n, Plural(n)).
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func dur(d time.Duration) string {
	return latency(float64(d)/float64(time.Millisecond), 1)
}

// PreflightCheck is one endpoint's preflight in the JSON document.
type PreflightCheck struct {
	Target    string  `json:"target"`
	Address   string  `json:"address"`
	Port      uint16  `json:"port"`
	Family    string  `json:"family"`
	OK        bool    `json:"ok"`
	ConnectMS float64 `json:"connect_ms"`
	TLSMS     float64 `json:"tls_ms"`
	ALPN      string  `json:"alpn,omitempty"`
	Local     string  `json:"local,omitempty"`
	Error     string  `json:"error,omitempty"`
	Class     string  `json:"class,omitempty"`
}

// PreflightJSON writes the checks as a pinprobe.preflight/v1 document.
func PreflightJSON(w io.Writer, eps []*probe.Endpoint, checks []probe.Check) error {
	doc := struct {
		Schema string           `json:"schema"`
		Checks []PreflightCheck `json:"checks"`
	}{Schema: "pinprobe.preflight/v1", Checks: []PreflightCheck{}}
	for i, c := range checks {
		ep := eps[i]
		pc := PreflightCheck{
			Target: ep.Target.String(), Address: ep.Addr.String(), Port: ep.Target.Port(), Family: string(ep.Family()),
			OK: c.Err == nil, ConnectMS: ms(c.Connect), TLSMS: ms(c.Handshake), ALPN: c.ALPN,
		}
		if c.Local.IsValid() {
			pc.Local = c.Local.String()
		}
		if c.Err != nil {
			pc.Error, pc.Class = c.Err.Error(), string(c.Class)
		}
		doc.Checks = append(doc.Checks, pc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write preflight: %w", err)
	}
	return nil
}
