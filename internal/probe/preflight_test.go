package probe

import (
	"crypto/tls"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestPreflight checks endpoints of several kinds at once: a TCP connect
// for each, plus a verified TLS handshake for https, and no HTTP request.
func TestPreflight(t *testing.T) {
	t.Parallel()
	pki := testserver.NewPKI(t)
	tlsSrv := newSeen()
	tlsPort := testserver.ServeSamePort(t, tlsSrv, pki.ServerConfig(testHost), testserver.Lo4a, testserver.Lo6)
	plainSrv := newSeen()
	plainPort := testserver.ServeSamePort(t, plainSrv, nil, testserver.Lo4b)
	refused := testserver.ClosedPort(t, testserver.Lo4a)

	type want struct {
		class     ErrorClass
		alpn      string
		handshake bool // a TLS handshake happened (and took time)
	}
	tests := []struct {
		url  string
		addr netip.Addr
		http HTTPVersion
		want want
	}{
		{hostURL("https", tlsPort), testserver.Lo4a, HTTPAuto, want{alpn: "h2", handshake: true}},
		{hostURL("https", tlsPort), testserver.Lo6, HTTPAuto, want{alpn: "h2", handshake: true}},
		{hostURL("https", tlsPort), testserver.Lo4a, HTTP1, want{alpn: "http/1.1", handshake: true}},
		{hostURL("https", tlsPort), testserver.Lo6, HTTP2, want{alpn: "h2", handshake: true}},
		{"https://other.pinprobe.test:" + strconv.Itoa(int(tlsPort)) + "/", testserver.Lo4a, HTTPAuto, want{class: ClassTLS, handshake: true}},
		{hostURL("http", plainPort), testserver.Lo4b, HTTPAuto, want{}},
		{hostURL("http", refused), testserver.Lo4a, HTTPAuto, want{class: ClassConnectRefused}},
	}
	for _, trust := range []struct {
		name  string
		roots *tls.Config
	}{{"trusted", &tls.Config{RootCAs: pki.Pool}}, {"untrusted", nil}} {
		t.Run(trust.name, func(t *testing.T) {
			// One call per --http setting, every endpoint in each.
			for _, hv := range []HTTPVersion{HTTPAuto, HTTP1, HTTP2} {
				var eps []*Endpoint
				var wants []want
				for _, tt := range tests {
					if tt.http != hv {
						continue
					}
					ep := endpoint(t, 10+len(eps), tt.url, tt.addr)
					eps = append(eps, ep)
					w := tt.want
					if trust.roots == nil && ep.Target.TLS() && w.class == "" {
						w = want{class: ClassTLS, handshake: true}
					}
					wants = append(wants, w)
				}
				checks := Preflight(t.Context(), eps, ConnOptions{TLS: trust.roots, HTTP: hv, Timeout: 10 * time.Second})
				if len(checks) != len(eps) {
					t.Fatalf("%d checks for %d endpoints", len(checks), len(eps))
				}
				for i, c := range checks {
					ep, w := eps[i], wants[i]
					name := ep.String() + " --http " + string(hv)
					if c.Endpoint != ep.ID {
						t.Errorf("%s: check %d is for endpoint %d; want %d", name, i, c.Endpoint, ep.ID)
					}
					if c.Class != w.class || (c.Err == nil) != (w.class == "") {
						t.Errorf("%s: class %q (%v); want %q", name, c.Class, c.Err, w.class)
					}
					if c.Connect <= 0 {
						t.Errorf("%s: Connect = %v; want > 0", name, c.Connect)
					}
					if w.class == "" || w.class == ClassTLS {
						if !c.Local.IsValid() || c.Local.Addr().Is4() != ep.Addr.Is4() {
							t.Errorf("%s: Local = %v; want an address of the pinned family", name, c.Local)
						}
					}
					if w.handshake != (c.Handshake > 0) {
						t.Errorf("%s: Handshake = %v; want a handshake: %v", name, c.Handshake, w.handshake)
					}
					if c.ALPN != w.alpn {
						t.Errorf("%s: ALPN %q; want %q", name, c.ALPN, w.alpn)
					}
				}
			}
		})
	}
	if n := tlsSrv.snap().reqs + plainSrv.snap().reqs; n != 0 {
		t.Errorf("preflight sent %d HTTP requests; want none", n)
	}
}

// TestPreflightTimeouts: a connect that gets no answer and a TLS handshake
// that gets none both time out as connect_timeout, within the timeout.
func TestPreflightTimeouts(t *testing.T) {
	t.Parallel()
	blackhole := testserver.FullBacklog(t)
	silent := testserver.SilentListener(t, testserver.Lo4a).Port()
	eps := []*Endpoint{
		endpoint(t, 0, hostURL("http", blackhole), testserver.Lo4a),
		endpoint(t, 1, hostURL("https", silent), testserver.Lo4a),
	}
	const timeout = 300 * time.Millisecond
	start := time.Now()
	checks := Preflight(t.Context(), eps, ConnOptions{Timeout: timeout})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Preflight took %v with a %v timeout", took, timeout)
	}
	for i, c := range checks {
		if c.Class != ClassConnectTimeout || c.Err == nil {
			t.Errorf("%s: class %q (%v); want connect_timeout", eps[i], c.Class, c.Err)
		}
	}
	if checks[0].Connect < timeout || checks[0].Handshake != 0 {
		t.Errorf("%s: Connect %v, Handshake %v; want the connect to take the timeout", eps[0], checks[0].Connect, checks[0].Handshake)
	}
	if checks[1].Handshake <= 0 || !checks[1].Local.IsValid() {
		t.Errorf("%s: Handshake %v, Local %v; want a connection and a handshake that timed out", eps[1], checks[1].Handshake, checks[1].Local)
	}
}
