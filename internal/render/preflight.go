package render

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// PreflightOptions say how Preflight lists the checks.
type PreflightOptions struct {
	All      bool // list every endpoint (--preflight), not only the failing ones
	Verified bool // certificates were verified (no --insecure)
	Stopping bool // the load will not be sent (see PreflightStop)
}

// Preflight writes the per-address connection checks. With All set it lists
// every endpoint; otherwise a clean check is summed up in one line and only
// failures are listed.
func Preflight(w io.Writer, eps []*probe.Endpoint, checks []probe.Check, o PreflightOptions) error {
	all, verified := o.All, o.Verified
	t := &textWriter{errWriter: errWriter{w: w}, width: 1 << 20}
	failed := 0
	for _, c := range checks {
		if c.Err != nil {
			failed++
		}
	}
	if !all && failed == 0 {
		if len(checks) == 1 {
			t.printf("pinprobe: preflight: the endpoint connects%s\n", tlsNote(eps, verified))
		} else {
			t.printf("pinprobe: preflight: all %d endpoints connect%s\n", len(checks), tlsNote(eps, verified))
		}
		return t.err
	}
	if all {
		t.printf("PREFLIGHT  %d of %d endpoint%s connect%s\n", len(checks)-failed, len(checks), words.Plural(len(checks)), tlsNote(eps, verified))
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

func tlsNote(eps []*probe.Endpoint, verified bool) string {
	for _, ep := range eps {
		if ep.Target.TLS() && verified {
			return " (TCP and TLS, certificate verified against the host name)"
		}
		if ep.Target.TLS() {
			return " (TCP and TLS, certificate NOT verified: --insecure)"
		}
	}
	return " (TCP)"
}

// PreflightStop says why a run cannot work when every endpoint failed its
// preflight, and the flag or fix that helps: "every endpoint fails TLS
// verification (x509: certificate signed by unknown authority): give the CA
// with --cacert FILE, or skip verification with --insecure". It returns ""
// when some endpoint connected.
func PreflightStop(eps []*probe.Endpoint, checks []probe.Check, timeout time.Duration) string {
	if len(checks) == 0 {
		return ""
	}
	classes := map[probe.ErrorClass]int{}
	for _, c := range checks {
		if c.Err == nil {
			return ""
		}
		classes[c.Class]++
	}
	first := checks[0]
	if len(classes) > 1 {
		return fmt.Sprintf("every endpoint fails its preflight, for different reasons (the first: %s): nothing can be probed", first.Err)
	}
	port := eps[first.Endpoint].Target.Port()
	msg := first.Err.Error()
	allV6 := true
	for _, ep := range eps {
		allV6 = allV6 && ep.Family() == probe.IPv6
	}
	switch first.Class {
	case probe.ClassTLS:
		var (
			unknown x509.UnknownAuthorityError
			host    x509.HostnameError
			invalid x509.CertificateInvalidError
		)
		switch {
		case errors.As(first.Err, &unknown):
			return "every endpoint fails TLS verification (" + msg + "): give the CA that signed the certificate with --cacert FILE, or skip verification with --insecure"
		case errors.As(first.Err, &host):
			return "every endpoint's certificate is for another name (" + msg + "): check the URL's host name; --insecure skips verification"
		case errors.As(first.Err, &invalid) && invalid.Reason == x509.Expired:
			return "every endpoint's certificate is out of date (" + msg + "): check the server's certificate and this machine's clock; --insecure skips verification"
		}
		return "every endpoint fails the TLS handshake (" + msg + "): check that the port speaks TLS and --http; --insecure skips certificate verification"
	case probe.ClassConnectRefused:
		return fmt.Sprintf("every address refuses connections on port %d: nothing listens there; check the URL's port", port)
	case probe.ClassNetworkUnreachable:
		if allV6 {
			return "every address is unreachable: this machine has no route to IPv6 (" + msg + "); probe IPv4 with -4, or run from a network with IPv6"
		}
		return "every address is unreachable (" + msg + "): check this machine's network, VPN or routes"
	case probe.ClassConnectTimeout:
		return fmt.Sprintf("no address accepted a connection within --timeout %s: a firewall may drop the packets, or port %d is wrong", timeout, port)
	case probe.ClassReset, probe.ClassEOF:
		return fmt.Sprintf("every address closes the connection at once (%s): check the scheme (https on a plain HTTP port?) and port %d", msg, port)
	}
	return "every endpoint fails its preflight (" + msg + "): nothing can be probed"
}

func dur(d time.Duration) string {
	return words.Latency(float64(d)/float64(time.Millisecond), 1)
}

// PreflightRevision is the revision of pinprobe.preflight/v1 written, by
// the rule of report.Revision: 2 added "revision".
const PreflightRevision = 2

// PreflightJSON writes the checks as a pinprobe.preflight/v1 document.
func PreflightJSON(w io.Writer, checks []report.PreflightCheck) error {
	doc := struct {
		Schema   string                  `json:"schema"`
		Revision int                     `json:"revision"`
		Checks   []report.PreflightCheck `json:"checks"`
	}{Schema: "pinprobe.preflight/v1", Revision: PreflightRevision, Checks: checks}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write preflight: %w", err)
	}
	return nil
}
