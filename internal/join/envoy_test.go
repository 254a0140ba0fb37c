package join

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/accesslog"
)

// TestEnvoy: the simulated incident as an Istio ingress gateway logs it
// (its default text format: the client's address and port, the upstream
// host, the response flags), the gateway's clock 0.8 s behind; then as
// Envoy's default format at the edge, which logs no client port, the
// client only in X-Forwarded-For, and IDs of Envoy's own in place of the
// run's: placed by the clients given and time, not taken for another
// client's.
func TestEnvoy(t *testing.T) {
	const offset = -800 * time.Millisecond
	for _, tt := range []struct {
		name string
		line func(r simRequest, client string, port uint16, i int) string
		by   func(l Lines) int64
		// clients are given (--client): a log without the run's IDs
		// nor ports cannot learn them.
		clients bool
	}{
		{"Istio", func(r simRequest, client string, port uint16, i int) string {
			flags, details, host, id := "-", "via_upstream", r.backend, r.id()
			if i >= 100000 {
				id = fmt.Sprintf("84961386-6d84-929d-98bd-%012x", i)
			}
			if r.failed {
				flags, details = "UF", "upstream_reset_before_response_started{connection_failure}"
			}
			return fmt.Sprintf(`[%s] "GET /sign HTTP/1.1" %d %s %s - "-" 0 7 20 - "-" "pinprobe/0.1.0" "%s" "sign.example.com" "%s" outbound|443||sign - 10.0.45.184:443 %s - default`,
				r.at.Add(offset).UTC().Format("2006-01-02T15:04:05.000Z"), r.status(), flags, details, id, host,
				netip.AddrPortFrom(netip.MustParseAddr(client), port))
		}, func(l Lines) int64 { return l.ByRequestID }, false},
		{"default, Envoy's IDs", func(r simRequest, client string, _ uint16, i int) string {
			flags := "-"
			if r.failed {
				flags = "UF"
			}
			return fmt.Sprintf(`[%s] "GET /sign HTTP/1.1" %d %s 0 7 20 - "%s" "pinprobe/0.1.0" "84961386-6d84-929d-98bd-%012x" "sign.example.com" "%s"`,
				r.at.Add(offset).UTC().Format("2006-01-02T15:04:05.000Z"), r.status(), flags, client, i, r.backend)
		}, func(l Lines) int64 { return l.ByWindow }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reqs := simRun()
			rep := simReport(reqs)
			log := mixedLog(reqs, 3, "10.0.0.5:443", tt.line)
			o := Options{}
			if tt.clients {
				o = runClients
			}
			j := joinLog(t, rep, log, o, accesslog.Options{})
			failed := failures(reqs, all)
			if j.Lines.Run != int64(len(reqs)) || tt.by(j.Lines) != int64(len(reqs)) || j.Lines.OtherClients != int64((len(reqs)+2)/3) {
				t.Errorf("lines %+v; want all %d of the run placed, %d of another client", j.Lines, len(reqs), (len(reqs)+2)/3)
			}
			// Envoy's reason, where the format logs its flags, in words.
			want := fmt.Sprintf("All %d 502s were routed to %s (IPv6).", failed, deadBackend)
			if strings.Contains(log, " UF ") {
				want = strings.TrimSuffix(want, ".") + "; the gateway says: it could not connect to the backend (UF)."
			}
			if j.Conclusion != want {
				t.Errorf("conclusion %q; want %q", j.Conclusion, want)
			}
			if len(j.Backends) == 0 {
				t.Fatalf("no backend")
			}
			if b := j.Backends[0]; b.Name != deadBackend || b.Reasons["UF"] != failed || j.ReasonWords["UF"] != "it could not connect to the backend" {
				t.Errorf("first backend %+v; want %s, all %d UF, said in words", b, deadBackend, failed)
			}
			if j.Offset.MS < -1000 || j.Offset.MS > -600 {
				t.Errorf("offset %+v; want about -800 ms", j.Offset)
			}
		})
	}
}
