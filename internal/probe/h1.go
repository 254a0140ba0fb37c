package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// The HTTP/1.1 client: one connection owned by one goroutine, which writes a
// pre-rendered request (h1Template), reads the response with a strict parser
// and discards the body, synchronously: no goroutines or hand-offs per request
// as in net/http, no allocation on the happy path, nothing ever retried. A
// worker holds at most one *h1Conn and one *h1Response; h1Sender.do shows a
// request's steps (stale, dialAny, roundTrip, result, reusable).

// Limits of the client.
const (
	h1BufSize          = 16 << 10         // read buffer of an exchange (a TLS record holds at most 16 KiB)
	h1MaxHead          = 1 << 20          // bytes of response heads, 1xx heads and trailers included
	h1MaxFields        = 1000             // trailer fields (a head is bounded by its bytes only, as in net/http)
	h1MaxInformational = 8                // 1xx responses skipped before the final one
	h1MaxChunkLine     = 4096             // a chunk-size line, extensions included
	h1InlineWrite      = 64 << 10         // larger requests are written beside the response read
	h1IdleCheck        = time.Millisecond // idle time after which stale looks at the socket
)

// errH2Negotiated is h1Dialer.dial's answer when the server chose HTTP/2 by ALPN:
// nothing was sent, the connection is closed, and the caller should reach
// the endpoint through net/http instead.
var errH2Negotiated = errors.New("the server chose HTTP/2 by ALPN")

// errH1Negotiated is what the net/http path of ClientAuto gets when the
// server chose HTTP/1.1 (or nothing) by ALPN on a connection it dialled:
// nothing was sent, and the connection waits for the fast path (see
// httpSender.dialTLS).
var errH1Negotiated = errors.New("the server chose HTTP/1.1 by ALPN")

// h1Dialer opens the HTTP/1.1 connections of one endpoint; it may be shared
// by goroutines.
type h1Dialer struct {
	addr    string // the pinned address, never the host name
	timeout time.Duration
	tls     *tls.Config // nil for http
	// number, when set, numbers each connection once its TCP connect
	// succeeded (h1Conn.id), as the net/http path numbers what it dials.
	number func() uint64
	// handoff lays TLS over a *trackedConn, so that a connection on which
	// the server chose h2 can go on in net/http with its identity (see
	// dialAny).
	handoff bool
	// hook, when set, connects in place of TCP (Options.dial).
	hook func(ctx context.Context) (net.Conn, error)
}

// newH1Dialer returns the dialer of ep: TCP to ep.AddrPort(), TLS for https
// with o.TLS's trust settings, the target's host as SNI and as the name the
// certificate must carry, and alpn as the offered protocols (nil offers none,
// and the server then speaks HTTP/1.1).
func newH1Dialer(ep *Endpoint, o ConnOptions, alpn []string) *h1Dialer {
	d := &h1Dialer{addr: ep.AddrPort().String(), timeout: o.Timeout}
	if ep.Target.TLS() {
		d.tls = tlsConfig(ep, o.TLS)
		d.tls.NextProtos = append([]string(nil), alpn...)
	}
	return d
}

// dial is dialAny for HTTP/1.1 only: when the server chooses "h2" by ALPN
// the connection is closed and the error is errH2Negotiated.
func (d *h1Dialer) dial(ctx context.Context, deadline time.Time) (*h1Conn, error) {
	c, err := d.dialAny(ctx, deadline)
	if err == nil && c.alpn == "h2" {
		c.close()
		return nil, errH2Negotiated
	}
	return c, err
}

// dialAny opens a connection. The TCP connect and the TLS handshake end by
// the earliest of deadline (zero for none; a request's deadline, so that its
// timeout covers the dial too), ctx's deadline and the dialer's timeout;
// cancelling ctx aborts them. Their errors are *DialError, so a timeout there
// classifies as connect_timeout. When the server chooses "h2" by ALPN, the
// connection (c.alpn "h2") is only good for net/http: c.nc is its
// *tls.Conn, over a *trackedConn when the dialer hands off.
func (d *h1Dialer) dialAny(ctx context.Context, deadline time.Time) (*h1Conn, error) {
	start := time.Now()
	if d.timeout > 0 && (deadline.IsZero() || start.Add(d.timeout).Before(deadline)) {
		deadline = start.Add(d.timeout)
	}
	if dl, ok := ctx.Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		deadline = dl
	}
	var raw net.Conn
	var err error
	if d.hook != nil {
		raw, err = dialHook(ctx, d.hook, deadline)
	} else {
		nd := net.Dialer{Deadline: deadline, KeepAlive: 30 * time.Second}
		raw, err = nd.DialContext(ctx, "tcp", d.addr)
	}
	if err != nil {
		return nil, &DialError{Err: err}
	}
	c := &h1Conn{
		nc:      raw,
		connect: time.Since(start),
		dialed:  time.Now(),
		local:   addrPortOf(raw.LocalAddr()),
		remote:  addrPortOf(raw.RemoteAddr()),
	}
	if d.number != nil {
		c.id = d.number()
	}
	if d.tls != nil {
		under := raw
		var tracked *trackedConn
		if d.handoff {
			tracked = &trackedConn{Conn: raw, id: c.id, dialed: c.dialed, local: c.local, remote: c.remote}
			under = tracked
		}
		tc := tls.Client(under, d.tls)
		hs := time.Now()
		raw.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, &DialError{Err: fmt.Errorf("tls handshake with %s: %w", d.addr, err)}
		}
		c.tls = time.Since(hs)
		raw.SetDeadline(time.Time{})
		c.alpn = tc.ConnectionState().NegotiatedProtocol
		c.nc = tc
		if tracked != nil {
			tracked.connect, tracked.tls = c.connect, c.tls
		}
		if c.alpn == "h2" {
			return c, nil
		}
	}
	c.initIdleCheck(raw)
	return c, nil
}

// h1Conn is one HTTP/1.1 connection, used by one goroutine at a time.
type h1Conn struct {
	nc            net.Conn
	alpn          string // the protocol TLS negotiated, "" for none or cleartext
	local, remote netip.AddrPort
	connect, tls  time.Duration // how long the TCP connect and the TLS handshake took
	id            uint64        // the dialer's number for it; 0 when it numbers none
	dialed        time.Time     // when the TCP connect succeeded
	n             int           // requests written
	closed        bool

	rbuf      []byte // bytes read: rbuf[r:w] are not consumed yet; nil between exchanges (see roundTrip)
	r, w      int
	rerr      error     // the read error that ended the connection, returned by every later fill
	firstByte time.Time // the first byte of the current response
	headBytes int       // head bytes read for the current response
	wbuf      []byte
	idleSince time.Time // when the last response ended

	rawConn syscall.RawConn // the TCP socket, for peerGone
	peek    func(fd uintptr)
	peekErr error
	peekBuf [1]byte
}

// requests returns how many requests the connection has carried; after a
// roundTrip it is that request's 1-based ordinal on the connection.
func (c *h1Conn) requests() int { return c.n }

// reusable reports whether the connection may carry another request: its
// last response was read to the end, nothing said close, nothing failed.
// A connection that is not reusable has been closed already.
func (c *h1Conn) reusable() bool { return !c.closed }

// stale reports whether the connection cannot carry a request at now: it is
// closed, or it has carried one, been idle h1IdleCheck or longer, and the
// server closed or reset it (or sent something unasked); a stale one is closed.
// Else a keep-alive timeout would fail the next request as eof. A connection
// that carried nothing is not looked at (TLS 1.3 tickets may wait there), nor
// one reused at once (a system call saved; the close races, as in net/http).
func (c *h1Conn) stale(now time.Time) bool {
	if c.closed {
		return true
	}
	if c.n == 0 || now.Sub(c.idleSince) < h1IdleCheck || !c.peerGone() {
		return false
	}
	c.close()
	return true
}

// close closes the connection; closing it again does nothing.
func (c *h1Conn) close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	return c.nc.Close()
}

// roundTrip sends t's request with requestID as X-Request-Id ("" for none),
// asking to close after it when last, and reads the response into resp by
// deadline (connection deadlines, no timers; past it, a timeout). Errors are
// the connection's own (io.EOF before an answer, io.ErrUnexpectedEOF mid-way)
// or *ProtocolError, wrapped with the remote address, for Classify. After an
// error, Connection: close, a body read to EOF, an early response or last, the
// connection is closed (see reusable). Nothing is retried.
func (c *h1Conn) roundTrip(t *h1Template, requestID string, last bool, deadline time.Time, resp *h1Response) error {
	resp.reset()
	if c.closed {
		return fmt.Errorf("request to %s: %w", c.remote, net.ErrClosed)
	}
	c.n++
	last = last || t.close
	c.firstByte, c.headBytes = time.Time{}, 0
	if err := c.nc.SetDeadline(deadline); err != nil {
		c.close()
		return fmt.Errorf("request to %s: %w", c.remote, err)
	}
	c.wbuf = t.appendHead(c.wbuf[:0], requestID, last)
	if c.rbuf == nil {
		c.rbuf = h1ReadBufs.Get().(*[h1BufSize]byte)[:]
	}
	defer c.releaseReadBuf()
	resp.wrote = time.Now()

	var werr, rerr error
	var wrote chan error // set when the request is written beside the read
	if len(c.wbuf)+len(t.body) <= h1InlineWrite {
		c.wbuf = append(c.wbuf, t.body...)
		_, werr = c.nc.Write(c.wbuf)
	} else {
		// The server may answer before it has read the whole body and
		// then stop reading: writing first could block until the deadline.
		wrote = make(chan error, 1)
		go writeRequest(c.nc, c.wbuf, t.body, wrote)
	}
	// Even after a failed write a response may have arrived (a server
	// that answers early and closes): it is the better evidence.
	rerr = c.readResponse(t, resp)
	keep := rerr == nil && resp.keepAlive && !last && c.r == c.w // nothing unsolicited buffered
	if wrote != nil {
		// A write still blocked now is one the server stopped reading: it
		// answered early, and would read the rest of the body as the next
		// request. A deadline in the past ends it; a write that completed
		// reports success whatever its timing was.
		c.nc.SetWriteDeadline(longAgo)
		werr = <-wrote
	}
	if werr != nil {
		keep = false
	}
	resp.firstByte = c.firstByte
	if !keep {
		c.close()
	} else {
		c.idleSince = time.Now()
	}
	switch {
	case rerr == nil:
		return nil
	case werr != nil && wrote == nil:
		// The write failed first; the read only saw its consequence.
		return fmt.Errorf("write request to %s: %w", c.remote, werr)
	}
	return fmt.Errorf("read response from %s: %w", c.remote, rerr)
}

// h1ReadBufs holds the read buffers of the exchanges in flight. A
// connection holds one only while it carries a request (an idle connection
// has nothing buffered: it is reused only when its response was read to the
// end), so the read buffers live are those of the requests in flight, not one
// per open connection, and a new connection (rotated by --conn-requests, or
// one per request at a low rate per endpoint) allocates none. A pool of
// buffers that connections kept while idle only added to theirs.
var h1ReadBufs = sync.Pool{New: func() any { return new([h1BufSize]byte) }}

// releaseReadBuf gives the connection's read buffer back to h1ReadBufs once
// nothing in it is still to be read: after its response on a connection
// kept (reusable checked that nothing unsolicited was buffered) and always
// on a closed one. A buffer grown for a long head is left to the collector.
func (c *h1Conn) releaseReadBuf() {
	if c.rbuf == nil || !c.closed && c.r != c.w {
		return
	}
	if cap(c.rbuf) == h1BufSize {
		h1ReadBufs.Put((*[h1BufSize]byte)(c.rbuf[:h1BufSize]))
	}
	c.rbuf, c.r, c.w = nil, 0, 0
}

// longAgo is a deadline that has passed.
var longAgo = time.Unix(1, 0)

// writeRequest writes head and body to nc and reports how that ended.
func writeRequest(nc net.Conn, head, body []byte, done chan<- error) {
	_, err := nc.Write(head)
	if err == nil {
		_, err = nc.Write(body)
	}
	done <- err
}

// result fills the transport fields of res (whose Start is set) from the
// connection and the response of its last roundTrip: Status, Bytes, Reused,
// Local, Remote, Connect and TLS (on the connection's first request only),
// and TTFB from res.Start to the first response byte.
func (c *h1Conn) result(res *Result, resp *h1Response) {
	res.Status = resp.status
	res.Bytes = resp.bytes
	res.Reused = c.n > 1
	res.Local, res.Remote = c.local, c.remote
	if c.n == 1 {
		res.Connect, res.TLS = c.connect, c.tls
	}
	if !resp.firstByte.IsZero() {
		res.TTFB = resp.firstByte.Sub(res.Start)
	}
}
