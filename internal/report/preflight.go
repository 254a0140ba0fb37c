package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// PreflightSchema names the preflight's document: the checks of
// pinprobe --preflight --format json, and of a report's preflight.
const PreflightSchema = "pinprobe.preflight/v1"

// PreflightRevision is the revision of pinprobe.preflight/v1 written, by
// the rule of Revision: 2 added "revision".
const PreflightRevision = 2

// Preflight is the pinprobe.preflight/v1 document.
type Preflight struct {
	Schema   string           `json:"schema"`
	Revision int              `json:"revision"`
	Checks   []PreflightCheck `json:"checks"`
}

// PreflightCheck is one endpoint's check before the load: a TCP connect
// and, for https, a TLS handshake verified as the probe would; no HTTP
// request. It is also what pinprobe.preflight/v1 lists.
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

// TLS reports whether the check's target is https: its check was a TLS
// handshake too.
func (c *PreflightCheck) TLS() bool { return strings.HasPrefix(c.Target, "https://") }

// PreflightJSON writes checks as a pinprobe.preflight/v1 document.
func PreflightJSON(w io.Writer, checks []PreflightCheck) error {
	doc := Preflight{Schema: PreflightSchema, Revision: PreflightRevision, Checks: checks}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write preflight: %w", err)
	}
	return nil
}
