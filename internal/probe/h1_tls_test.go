package probe

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestH1TLS dials 127.0.0.1 and [::1] with the target's host name as SNI and
// as the name the certificate must carry (it has no IP SANs), checks reuse,
// the negotiated protocol, the dial phases and what the server saw, and that
// a server choosing h2 by ALPN is reported before anything is sent.
func TestH1TLS(t *testing.T) {
	pki := testserver.NewPKI(t)
	trust := &tls.Config{RootCAs: pki.Pool}
	h1Only := &tls.Config{Certificates: []tls.Certificate{pki.Leaf(testHost)}, NextProtos: []string{"http/1.1"}}

	t.Run("verified, pinned, reused", func(t *testing.T) {
		s := newSeen()
		port := testserver.ServeSamePort(t, s, h1Only, testserver.Lo4a, testserver.Lo6)
		for _, a := range []netip.Addr{testserver.Lo4a, testserver.Lo6} {
			tmpl, d := h1Target(t, hostURL("https", port), a, "GET", nil, ConnOptions{Timeout: 5 * time.Second, TLS: trust}, []string{"h2", "http/1.1"})
			c, err := d.dial(t.Context(), time.Time{})
			if err != nil {
				t.Fatalf("dial %s: %v", a, err)
			}
			if c.alpn != "http/1.1" || c.connect <= 0 || c.tls <= 0 || c.remote != netip.AddrPortFrom(a, port) || c.local.Addr() != a {
				t.Errorf("dial %s: got alpn %q, connect %v, tls %v, remote %v, local %v; want http/1.1, > 0, > 0, %v, on %v",
					a, c.alpn, c.connect, c.tls, c.remote, c.local, netip.AddrPortFrom(a, port), a)
			}
			resp := newH1Response(BodyPrefix)
			for i := range 3 {
				start := time.Now()
				if err := c.roundTrip(tmpl, "", false, start.Add(5*time.Second), resp); err != nil {
					t.Fatalf("%s request %d: %v", a, i+1, err)
				}
				res := Result{Start: start}
				c.result(&res, resp)
				wantPhases := i == 0
				if res.Status != 200 || string(resp.body) != "ok\n" || res.Reused != (i > 0) || (res.TLS > 0) != wantPhases || (res.Connect > 0) != wantPhases || res.TTFB <= 0 {
					t.Errorf("%s request %d: got status %d, body %q, reused %v, connect %v, tls %v, ttfb %v; want 200, ok, %v, phases only on the first, ttfb > 0",
						a, i+1, res.Status, resp.body, res.Reused, res.Connect, res.TLS, res.TTFB, i > 0)
				}
			}
			c.close()
		}
		got := s.snap()
		want := fmt.Sprint(map[netip.Addr]int{testserver.Lo4a: 3, testserver.Lo6: 3}, map[string]int{testHost: 6}, map[int]int{1: 6})
		if fmt.Sprint(got.addrs, got.sni, got.proto) != want {
			t.Errorf("server saw addrs, SNI, protocol %v %v %v; want %s", got.addrs, got.sni, got.proto, want)
		}
	})

	t.Run("ALPN", func(t *testing.T) {
		s := newSeen()
		port := testserver.ServeSamePort(t, s, pki.ServerConfig(testHost), testserver.Lo4a) // offers h2 first
		tests := []struct {
			alpn    []string
			wantH2  bool
			wantReq int
		}{
			{[]string{"h2", "http/1.1"}, true, 0},
			{[]string{"http/1.1"}, false, 1},
			{nil, false, 1},
		}
		for _, tc := range tests {
			s.reset()
			tmpl, d := h1Target(t, hostURL("https", port), testserver.Lo4a, "GET", nil, ConnOptions{Timeout: 5 * time.Second, TLS: trust}, tc.alpn)
			c, err := d.dial(t.Context(), time.Time{})
			if got := errors.Is(err, errH2Negotiated); got != tc.wantH2 {
				t.Errorf("ALPN %q: dial error %v; want errH2Negotiated %v", tc.alpn, err, tc.wantH2)
			}
			if err == nil {
				if err := c.roundTrip(tmpl, "", true, time.Now().Add(5*time.Second), newH1Response(0)); err != nil {
					t.Errorf("ALPN %q: %v", tc.alpn, err)
				}
				c.close()
			}
			if got := s.snap(); got.reqs != tc.wantReq {
				t.Errorf("ALPN %q: server saw %d requests; want %d", tc.alpn, got.reqs, tc.wantReq)
			}
		}
	})

	t.Run("stale after the server closes", func(t *testing.T) {
		port, lns := testserver.ListenSamePort(t, testserver.Lo4a)
		srv := testserver.Serve(t, lns[0], newSeen(), h1Only)
		tmpl, d := h1Target(t, hostURL("https", port), testserver.Lo4a, "GET", nil, ConnOptions{Timeout: 5 * time.Second, TLS: trust}, nil)
		c, err := d.dial(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		if err := c.roundTrip(tmpl, "", false, time.Now().Add(5*time.Second), newH1Response(0)); err != nil {
			t.Fatal(err)
		}
		if c.stale(c.idleSince.Add(time.Hour)) {
			t.Fatalf("live TLS connection found stale")
		}
		srv.CloseClientConnections()
		waitFor(t, "stale", func() bool { return c.stale(c.idleSince.Add(time.Hour)) })
	})

	silent := testserver.SilentListener(t, testserver.Lo4a).Port() // a handshake that never ends
	s := newSeen()
	port := testserver.ServeSamePort(t, s, h1Only, testserver.Lo4a)
	failures := []struct {
		name     string
		url      string
		o        ConnOptions
		deadline time.Duration // the request's, from the dial's start; 0 for none
		want     ErrorClass
		minTime  time.Duration
	}{
		{"certificate for another name", "https://other.pinprobe.test:" + strconv.Itoa(int(port)) + "/", ConnOptions{Timeout: 5 * time.Second, TLS: trust}, 0, ClassTLS, 0},
		{"untrusted CA", hostURL("https", port), ConnOptions{Timeout: 5 * time.Second}, 0, ClassTLS, 0},
		{"handshake never answered", hostURL("https", silent), ConnOptions{Timeout: 300 * time.Millisecond, TLS: trust}, 0, ClassConnectTimeout, 300 * time.Millisecond},
		{"handshake outlives the request deadline", hostURL("https", silent), ConnOptions{Timeout: time.Minute, TLS: trust}, 300 * time.Millisecond, ClassConnectTimeout, 300 * time.Millisecond},
		{"connection refused", hostURL("http", testserver.ClosedPort(t, testserver.Lo4a)), ConnOptions{Timeout: 5 * time.Second}, 0, ClassConnectRefused, 0},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			s.reset()
			ep := endpoints(t, tc.url, testserver.Lo4a)[0]
			start := time.Now()
			var deadline time.Time
			if tc.deadline > 0 {
				deadline = start.Add(tc.deadline)
			}
			c, err := newH1Dialer(ep, tc.o, []string{"http/1.1"}).dial(t.Context(), deadline)
			elapsed := time.Since(start)
			if err == nil {
				c.close()
			}
			if got := Classify(err); got != tc.want {
				t.Errorf("dial: got class %q (err %v); want %q", got, err, tc.want)
			}
			if elapsed < tc.minTime || elapsed > tc.minTime+3*time.Second {
				t.Errorf("dial took %v; want between %v and %v", elapsed, tc.minTime, tc.minTime+3*time.Second)
			}
			if got := s.snap(); got.reqs != 0 {
				t.Errorf("server saw %d requests; want 0", got.reqs)
			}
		})
	}
}
