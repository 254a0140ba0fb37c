package testserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// pinnedClient sends every request to addr, whatever the URL's host, over
// HTTP/1.1 (HTTP/2 too when tlsCfg offers it), without keep-alives unless
// keepAlive.
func pinnedClient(t testing.TB, addr netip.AddrPort, tlsCfg *tls.Config, keepAlive bool) *http.Client {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr.String())
		},
		TLSClientConfig:   tlsCfg,
		ForceAttemptHTTP2: tlsCfg != nil,
		DisableKeepAlives: !keepAlive,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// get sends GET url through c with the headers, returning status and body.
func get(t testing.TB, c *http.Client, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		<-tick.C
	}
}

// rawConn is one client TCP connection sending HTTP/1.1 requests in turn.
type rawConn struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

// dialRaw connects to addr, the connection closed when the test ends.
func dialRaw(t testing.TB, addr netip.AddrPort) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

// do sends one GET and returns the response, body read.
func (rc *rawConn) do(host string) (*http.Response, string) {
	rc.t.Helper()
	if _, err := fmt.Fprintf(rc.c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		rc.t.Fatalf("write request: %v", err)
	}
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("read body: %v", err)
	}
	return resp, string(body)
}

// local is the client's end of the connection.
func (rc *rawConn) local() netip.AddrPort { return addrPortOf(rc.c.LocalAddr()) }
