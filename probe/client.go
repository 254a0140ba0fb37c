package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HTTPVersion selects the protocols a transport may speak.
type HTTPVersion string

// The --http choices.
const (
	HTTPAuto HTTPVersion = "auto" // HTTP/2 where TLS ALPN offers it, else HTTP/1.1
	HTTP1    HTTPVersion = "1.1"
	HTTP2    HTTPVersion = "2" // over TLS by ALPN, over cleartext by prior knowledge (h2c)
)

// ConnOptions say how an endpoint's connections are made.
type ConnOptions struct {
	Timeout     time.Duration // bounds the dial, the TLS handshake and each request
	NewConn     bool          // a fresh connection for every request
	HTTP        HTTPVersion
	TLS         *tls.Config // trust settings; ServerName is set per target
	Concurrency int         // idle connections kept per endpoint
}

// dialer dials the pinned address whatever address net/http asks for.
func pinnedDial(ep *Endpoint, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	pinned := ep.AddrPort().String()
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, err := d.DialContext(ctx, "tcp", pinned)
		if err != nil {
			return nil, &DialError{Err: err}
		}
		return c, nil
	}
}

// tlsConfig returns the TLS settings for ep: the caller's trust, the target's
// host as SNI and as the name the certificate must carry.
func tlsConfig(ep *Endpoint, base *tls.Config) *tls.Config {
	var cfg *tls.Config
	if base != nil {
		cfg = base.Clone()
	} else {
		cfg = &tls.Config{}
	}
	cfg.ServerName = ep.Target.Host()
	return cfg
}

// NewTransport returns the http.Transport of one endpoint: every connection
// goes to ep's address, environment proxies are ignored, nothing is retried
// by the request path (see newRequest), and the protocol is what o asks for.
func NewTransport(ep *Endpoint, o ConnOptions) (*http.Transport, error) {
	idle := max(o.Concurrency, 1)
	t := &http.Transport{
		Proxy:                 nil, // a proxy would defeat pinning
		DialContext:           pinnedDial(ep, o.Timeout),
		TLSClientConfig:       tlsConfig(ep, o.TLS),
		TLSHandshakeTimeout:   o.Timeout,
		DisableKeepAlives:     o.NewConn,
		DisableCompression:    true, // count the bytes the server sent; users may send Accept-Encoding themselves
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	var p http.Protocols
	switch o.HTTP {
	case HTTP1:
		p.SetHTTP1(true)
	case HTTP2:
		if ep.Target.TLS() {
			p.SetHTTP2(true)
		} else {
			p.SetUnencryptedHTTP2(true)
		}
	case HTTPAuto, "":
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	default:
		return nil, fmt.Errorf("unknown HTTP version %q", o.HTTP)
	}
	t.Protocols = &p
	return t, nil
}

// setBody gives req its body. net/http silently resends a "replayable"
// request (GET, HEAD, OPTIONS, TRACE, or one with an Idempotency-Key, whose
// body is nil, http.NoBody or rewindable through GetBody) that fails on a
// reused keep-alive connection; that would hide the very resets pinprobe
// looks for and break "sent once, counted once". A body that is none of those
// is never replayed, by HTTP/1 or HTTP/2, so every request that could be
// replayed gets one: the payload through io.NopCloser (which net/http still
// recognises as in-memory and writes in one go), or, for no payload, an empty
// body with the "identity" transfer encoding, which HTTP/1 writes as no body
// at all (no Content-Length, no chunking) and HTTP/2 as an empty last frame.
// Without the identity marker net/http would probe the empty body with a
// goroutine and a timer on every request.
func setBody(req *http.Request, payload []byte) {
	if len(payload) == 0 {
		req.Body = emptyBody{}
		req.ContentLength = 0
		req.TransferEncoding = identity
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(payload))
	req.ContentLength = int64(len(payload))
}

var identity = []string{"identity"}

type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// WriteTo lets io.Copy skip the 32 KiB buffer it would allocate per request.
func (emptyBody) WriteTo(io.Writer) (int64, error) { return 0, nil }
