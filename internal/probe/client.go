package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync/atomic"
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
	Timeout time.Duration // bounds the dial, the TLS handshake and each request
	NewConn bool          // a fresh connection for every request
	HTTP    HTTPVersion
	TLS     *tls.Config // trust settings; ServerName is set per target
	// Concurrency is how many idle connections a transport made by
	// NewTransport keeps. The engine ignores it: each of its workers owns one
	// transport with one connection.
	Concurrency int
	// ConnRequests is the most requests a connection carries; 0 = no limit.
	// Over HTTP/1 the last one is sent with "Connection: close", so the
	// server closes first (and keeps the TIME_WAIT).
	ConnRequests int
	// ConnAge is the age past which a connection is not reused: the next
	// request closes it and dials a new one; 0 = no limit.
	ConnAge time.Duration
}

// pinnedDial returns a dial function that dials ep's address whatever
// address net/http asks for.
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

// hookedDial is pinnedDial through Options.dial.
func hookedDial(hook func(context.Context) (net.Conn, error), timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var deadline time.Time
		if timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
		c, err := dialHook(ctx, hook, deadline)
		if err != nil {
			return nil, &DialError{Err: err}
		}
		return c, nil
	}
}

// dialHook connects through hook by deadline (zero for none), failing as
// a TCP connect does when the deadline passes first: with an i/o timeout.
func dialHook(ctx context.Context, hook func(context.Context) (net.Conn, error), deadline time.Time) (net.Conn, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	c, err := hook(ctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: os.ErrDeadlineExceeded}
	}
	return c, err
}

// trackedConn is a dialled connection with the identity Result reports: its
// number among the endpoint's connections and when it was dialled. The
// pinned dialer returns it, so net/http's GotConn hands it back (inside a
// *tls.Conn for TLS).
type trackedConn struct {
	net.Conn
	id            uint64
	dialed        time.Time
	local, remote netip.AddrPort
	closed        atomic.Bool
	// connect and tls are how long the TCP connect and the TLS handshake
	// took when the fast path's dialer made the connection (net/http's
	// trace does not see them then); zero otherwise.
	connect, tls time.Duration
}

func (c *trackedConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// trackedOf finds the *trackedConn under what net/http reports as the
// connection: itself, a *tls.Conn around it, or the wrapper net/http uses to
// hand a cleartext HTTP/2 connection over.
func trackedOf(c net.Conn) *trackedConn {
	for range 4 {
		switch v := c.(type) {
		case *trackedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		case interface{ UnencryptedNetConn() net.Conn }:
			c = v.UnencryptedNetConn()
		default:
			return nil
		}
	}
	return nil
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

// protocols returns the protocols a transport to ep may speak for v.
func protocols(ep *Endpoint, v HTTPVersion) (*http.Protocols, error) {
	var p http.Protocols
	switch v {
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
		return nil, fmt.Errorf("unknown HTTP version %q", v)
	}
	return &p, nil
}

// transportFor builds an http.Transport that dials with dial, verifies with
// tlsConf, speaks p and keeps at most idle idle connections.
func transportFor(o ConnOptions, dial func(context.Context, string, string) (net.Conn, error), tlsConf *tls.Config, p *http.Protocols, idle int) *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // a proxy would defeat pinning
		DialContext:           dial,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   o.Timeout,
		DisableKeepAlives:     o.NewConn,
		DisableCompression:    true, // count the bytes the server sent; users may send Accept-Encoding themselves
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		// A response head is bounded as the HTTP/1.1 client bounds it, so
		// both paths classify a huge one alike (protocol).
		MaxResponseHeaderBytes: h1MaxHead,
		Protocols:              p,
	}
}

// NewTransport returns an http.Transport to one endpoint: every connection
// goes to ep's address, environment proxies are ignored, nothing is retried
// by the request path (see reqBody.set), the protocol is what o asks for, and
// o.Concurrency idle connections are kept.
func NewTransport(ep *Endpoint, o ConnOptions) (*http.Transport, error) {
	p, err := protocols(ep, o.HTTP)
	if err != nil {
		return nil, err
	}
	return transportFor(o, pinnedDial(ep, o.Timeout), tlsConfig(ep, o.TLS), p, max(o.Concurrency, 1)), nil
}

// reqBody is a sender's request body, made once and reset for every
// request, so that sending it allocates nothing.
type reqBody struct {
	r  *bytes.Reader
	rc io.ReadCloser // io.NopCloser(r)
}

func newReqBody() reqBody {
	r := bytes.NewReader(nil)
	return reqBody{r: r, rc: io.NopCloser(r)}
}

// set gives req its body. net/http silently resends a "replayable" request (GET,
// HEAD, OPTIONS, TRACE or with Idempotency-Key, its body nil, http.NoBody or
// rewindable) that fails on a reused connection, hiding the resets pinprobe
// looks for; so every such request gets a body that is none of those: the
// payload through io.NopCloser (still written in one go), or an empty body with
// the "identity" transfer encoding (no body on the wire, and no goroutine and
// timer probing it). The previous request with this body must have ended.
func (b reqBody) set(req *http.Request, payload []byte) {
	if len(payload) == 0 {
		req.Body = emptyBody{}
		req.ContentLength = 0
		req.TransferEncoding = identity
		return
	}
	b.r.Reset(payload)
	req.Body = b.rc
	req.ContentLength = int64(len(payload))
}

var identity = []string{"identity"}

type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// WriteTo lets io.Copy skip the 32 KiB buffer it would allocate per request.
func (emptyBody) WriteTo(io.Writer) (int64, error) { return 0, nil }
