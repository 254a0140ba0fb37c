package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"sync/atomic"
	"time"
)

// httpSender is the net/http request path. It owns one http.Transport that
// keeps at most one idle connection, so its worker owns its connection:
// HTTP/1.1 keep-alive and HTTP/2 alike get one connection per worker. Its
// context, trace hooks and timeout timer are made once and reused by every
// request, which keeps the per-request path to net/http's own work.
type httpSender struct {
	s        *stream
	t        *http.Transport
	retired  *http.Transport // left for ConnAge while net/http still held its connection busy
	parent   context.Context // requests in flight: outlives the send schedule
	ctx      context.Context // parent + cancel + trace; replaced after a cancellation
	cancel   context.CancelFunc
	h        *hooks // the trace hooks of ctx
	timer    *time.Timer
	timedOut atomic.Bool
	reading  atomic.Pointer[http.Response] // its body is closed when the timer fires
	epoch    time.Time
	cur      Result
	buf      [BodyPrefix]byte

	// req is reused while requests end cleanly (net/http lets go of a
	// request once its response body is closed); nil: make a new one.
	req   *http.Request
	body  reqBody
	idBuf []byte // the request ID being built

	conn     *trackedConn // the connection of the last request, nil for none
	connReqs int          // requests conn has carried
	connH2   bool         // conn speaks HTTP/2
	connDone bool         // conn takes no more requests (net/http may not have closed it yet)

	// With the stream's alpnDial (ClientAuto over TLS) every connection
	// is dialled by the fast path's dialer (dialTLS): pending is one it
	// dialled on which the server chose HTTP/2, to be used first; back is
	// one net/http had dialled on which the server chose HTTP/1.1, left
	// for the fast path.
	pending atomic.Pointer[tls.Conn]
	back    atomic.Pointer[h1Conn]
}

// hooks is one generation of trace hooks and what they record. net/http
// may call a hook on its own goroutine, HTTP/2 even after a cancelled
// request has returned, so everything is atomic, and a cancelled request's
// generation is replaced: a late call cannot write into the next request.
type hooks struct {
	trace  httptrace.ClientTrace
	epoch  time.Time
	conn   atomic.Pointer[trackedConn]
	reused atomic.Bool
	// What the informational (1xx) responses so far were: how many, and
	// about how many bytes their heads took.
	informational, informationalBytes atomic.Int64
	// Each holds the monotonic time since epoch, 0 for not yet.
	connStart, connDone, tlsStart, tlsDone, firstByte atomic.Int64
}

func newHooks(epoch time.Time) *hooks {
	h := &hooks{epoch: epoch}
	now := func() int64 { return int64(time.Since(h.epoch)) + 1 } // > 0: 0 means not yet
	h.trace = httptrace.ClientTrace{
		ConnectStart:         func(string, string) { h.connStart.Store(now()) },
		ConnectDone:          func(string, string, error) { h.connDone.Store(now()) },
		TLSHandshakeStart:    func() { h.tlsStart.Store(now()) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { h.tlsDone.Store(now()) },
		GotFirstResponseByte: func() { h.firstByte.Store(now()) },
		Got1xxResponse:       h.got1xx,
		GotConn: func(info httptrace.GotConnInfo) {
			h.reused.Store(info.Reused)
			h.conn.Store(trackedOf(info.Conn))
		},
	}
	return h
}

// got1xx bounds the informational responses of a request as the HTTP/1.1
// client does (h1MaxInformational of them, h1MaxHead bytes of heads), so
// that an endless 1xx stream ends the same way on both paths. net/http
// would bound only their bytes, by MaxResponseHeaderBytes, and not even
// that once this hook is set. The bytes are counted from the parsed
// fields, so the bound is approximate by a few bytes a line.
func (h *hooks) got1xx(code int, fields textproto.MIMEHeader) error {
	size := int64(len("HTTP/1.1 100 \r\n\r\n")) + int64(len(http.StatusText(code)))
	for k, vs := range fields {
		for _, v := range vs {
			size += int64(len(k) + len(": \r\n") + len(v))
		}
	}
	if h.informationalBytes.Add(size) > h1MaxHead {
		return protoErr("response head larger than %d bytes", h1MaxHead)
	}
	if h.informational.Add(1) > h1MaxInformational {
		return protoErr("more than %d informational (1xx) responses", h1MaxInformational)
	}
	return nil
}

func (h *hooks) reset() {
	h.informational.Store(0)
	h.informationalBytes.Store(0)
	h.conn.Store(nil)
	h.connStart.Store(0)
	h.connDone.Store(0)
	h.tlsStart.Store(0)
	h.tlsDone.Store(0)
	h.firstByte.Store(0)
}

func newHTTPSender(s *stream, parent context.Context) sender {
	w := &httpSender{s: s, parent: parent, epoch: time.Now(), body: newReqBody()}
	w.t = w.newTransport()
	w.renew()
	w.timer = time.AfterFunc(time.Hour, func() {
		// The response being read is loaded before the cancel: once the
		// worker sees the cancel it may go on to its next request.
		resp := w.reading.Load()
		w.timedOut.Store(true)
		w.cancel()
		if resp != nil {
			// Whatever body no context reaches ends here too.
			resp.Body.Close()
		}
	})
	w.timer.Stop()
	return w
}

// newTransport returns a transport of the endpoint that keeps one idle
// connection. Each gets its own TLS config: net/http writes its ALPN
// protocols into the config on first use. With the stream's alpnDial, TLS
// connections come from dialTLS.
func (w *httpSender) newTransport() *http.Transport {
	s := w.s
	t := transportFor(s.conn, s.dial, s.tlsConf.Clone(), s.protos, 1)
	if s.alpnDial != nil {
		t.DialTLSContext = w.dialTLS
	}
	return t
}

// handOver gives the sender a connection the fast path dialled, on which
// the server chose HTTP/2: net/http's next dial takes it.
func (w *httpSender) handOver(tc *tls.Conn) {
	if old := w.pending.Swap(tc); old != nil {
		old.Close()
	}
}

// dialTLS is net/http's TLS dial under the stream's alpnDial: the
// connection handed over, or a new one from the fast path's dialer. One on
// which the server chose HTTP/2 is net/http's, with the identity and the
// phases the dialer measured (see noteConn). One on which it chose HTTP/1.1
// or nothing is left in back for the fast path (errH1Negotiated), or, when
// the stream has no fast path (--http 2), closed: HTTP/1.1 is not what was
// asked for. net/http may call it on its own goroutine, after the request
// that wanted the connection has gone.
func (w *httpSender) dialTLS(ctx context.Context, _, _ string) (net.Conn, error) {
	if tc := w.pending.Swap(nil); tc != nil {
		return tc, nil
	}
	c, err := w.s.alpnDial.dialAny(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	if c.alpn == "h2" {
		return c.nc, nil
	}
	if w.s.h1 == nil {
		c.close()
		alpn := strconv.Quote(c.alpn)
		if c.alpn == "" {
			alpn = "no protocol"
		}
		return nil, protoErr("the server chose %s by ALPN, not h2 (--http 2)", alpn)
	}
	if old := w.back.Swap(c); old != nil {
		old.close()
	}
	return nil, errH1Negotiated
}

func span(start, end int64) time.Duration {
	if start == 0 || end < start {
		return 0
	}
	return time.Duration(end - start)
}

// renew gives the sender a fresh context and hooks after its last ones
// were cancelled.
func (w *httpSender) renew() {
	w.h = newHooks(w.epoch)
	ctx, cancel := context.WithCancel(w.parent)
	w.ctx, w.cancel = httptrace.WithClientTrace(ctx, &w.h.trace), cancel
	w.timedOut.Store(false)
	w.req = nil // it carries the old context
}

// request returns the request to send next: the template with the
// sender's context, its own header when request IDs are added.
func (w *httpSender) request() *http.Request {
	if w.req != nil {
		return w.req
	}
	s := w.s
	req := s.tmpl.WithContext(w.ctx)
	if s.requestID {
		hdr := make(http.Header, len(s.tmpl.Header)+1)
		maps.Copy(hdr, s.tmpl.Header)
		hdr["X-Request-Id"] = []string{""}
		req.Header = hdr
	}
	w.req = req
	return req
}

// close releases the sender's context and connections.
func (w *httpSender) close() {
	w.timer.Stop()
	w.cancel()
	w.t.CloseIdleConnections()
	if w.retired != nil {
		w.retired.CloseIdleConnections()
	}
	if tc := w.pending.Swap(nil); tc != nil {
		tc.Close()
	}
	if c := w.back.Swap(nil); c != nil {
		c.close()
	}
}

// errSwitched is the failure of a request the server answered with 101
// Switching Protocols: what follows is not HTTP, and pinprobe closes it.
var errSwitched = errors.New("the server switched protocols (101): pinprobe closed the connection")

// do sends one request, due at start, and reads the whole response body.
func (w *httpSender) do(start time.Time) Result {
	res, _ := w.doFrom(start)
	return res
}

// doFrom sends one request that started at start: its timeout runs from
// then, and its latency too. The HTTP/1.1 path hands a request over this
// way when the server chose HTTP/2 by ALPN. It returns false, having sent
// nothing and counted nothing but the request ID (Result.RequestID), when
// net/http dialled and the server chose HTTP/1.1 (see dialTLS).
func (w *httpSender) doFrom(start time.Time) (Result, bool) {
	s, h := w.s, w.h
	h.reset()
	w.cur = Result{Endpoint: s.ep.ID, Start: start}
	if w.retired != nil {
		w.retired.CloseIdleConnections()
		w.retired = nil
	}
	w.retire(w.cur.Start)
	last := w.lastOnConn()
	w.timer.Reset(s.timeout - time.Since(start))
	req := w.request()
	w.cur.RequestID = s.userID
	if s.requestID {
		w.idBuf = s.appendRequestID(w.idBuf[:0])
		w.cur.RequestID = string(w.idBuf)
		req.Header["X-Request-Id"][0] = w.cur.RequestID
	}
	// The connection's last request goes with "Connection: close" over
	// HTTP/1, so that the server closes first (and keeps the TIME_WAIT).
	// An HTTP/2 connection is closed after its last response instead.
	req.Close = last && !(w.reusable() && w.connH2)
	if !s.bodyless {
		w.body.set(req, s.payload)
	}
	resp, err := w.t.RoundTrip(req)
	if errors.Is(err, errH1Negotiated) {
		w.cur.Latency = time.Since(w.cur.Start)
		if !w.timer.Stop() {
			<-w.ctx.Done()
		}
		w.cancel()
		w.renew()
		return w.cur, false
	}
	w.noteConn()
	var proto string
	var header http.Header
	w.connDone = req.Close
	if err == nil {
		w.cur.Status, proto, header = resp.StatusCode, resp.Proto, resp.Header
		w.connH2 = resp.ProtoMajor == 2
		w.connDone = w.connDone || resp.Close
		w.cur.TTFB = span(int64(w.cur.Start.Sub(w.epoch))+1, h.firstByte.Load())
		if !validStatus(resp.StatusCode) {
			// net/http takes any three digits over HTTP/1 (000, 099, 600)
			// and any number over HTTP/2 (1000): an answer that is not
			// HTTP, as the HTTP/1.1 client says. The connection's state is
			// unknown, as after any broken head: it is not used again.
			resp.Body.Close()
			w.cur.Status, header = 0, nil
			err = protoErr("%s status %d outside 100-599", resp.Proto, resp.StatusCode)
			if !w.connH2 {
				w.drop()
			}
		} else if s.conn.HTTP == HTTP2 && !w.connH2 {
			// The server offered no h2 by ALPN, and net/http spoke
			// HTTP/1.1 rather than fail: not what was asked for.
			resp.Body.Close()
			w.cur.Status, header = 0, nil
			err = protoErr("the server spoke %s, not HTTP/2 (--http 2): it chose no h2 by ALPN", resp.Proto)
			w.drop()
		} else if resp.StatusCode == http.StatusSwitchingProtocols {
			// Its body is the connection itself, which no context closes.
			resp.Body.Close()
			w.t.CloseIdleConnections()
			err = fmt.Errorf("%s %s: %w", resp.Proto, resp.Status, errSwitched)
		} else {
			w.reading.Store(resp)
			err = w.read(resp)
			w.reading.Store(nil)
		}
	}
	w.cur.Latency = time.Since(w.cur.Start)
	stopped := w.timer.Stop()
	if !stopped {
		// The timer fired: let its func finish before renew replaces
		// w.ctx, or it could cancel the next request instead.
		<-w.ctx.Done()
	}
	if err != nil {
		s.failure(&w.cur, err, w.timedOut.Load(), proto, header)
		w.req = nil // net/http may not have let go of it yet
		w.connDone = true
	}
	if most := s.conn.ConnRequests; most > 0 && w.cur.ConnReq >= most && !(req.Close && !w.connH2) {
		// The connection carried its last request and the server was not
		// asked to close it: over HTTP/2, or when a connection thought
		// done (an HTTP/2 stream failed, not the connection) went on.
		w.drop()
	}
	if !stopped || w.ctx.Err() != nil {
		w.cancel()
		w.renew()
	}
	return w.cur, true
}

// noteConn records the connection the request went on, as the trace hooks
// saw it, and counts the request on it.
func (w *httpSender) noteConn() {
	h := w.h
	tc := h.conn.Load()
	if tc == nil {
		return
	}
	if tc != w.conn {
		w.conn, w.connReqs = tc, 0
	}
	w.connReqs++
	w.cur.ConnID, w.cur.ConnReq = tc.id, w.connReqs
	w.cur.Local, w.cur.Remote = tc.local, tc.remote
	w.cur.Reused = w.connReqs > 1
	switch {
	case w.cur.Reused:
	case tc.tls > 0: // the fast path's dialer measured it
		w.cur.Connect, w.cur.TLS = tc.connect, tc.tls
	default:
		w.cur.Connect = span(h.connStart.Load(), h.connDone.Load())
		w.cur.TLS = span(h.tlsStart.Load(), h.tlsDone.Load())
	}
}

// lastOnConn reports whether the next request will be the last its
// connection may carry (ConnRequests). It assumes the request goes on the
// last request's connection while that is open, as it does with one
// request at a time and one idle connection.
func (w *httpSender) lastOnConn() bool {
	most := w.s.conn.ConnRequests
	if most <= 0 {
		return false
	}
	if !w.reusable() {
		return most == 1
	}
	return w.connReqs+1 >= most
}

// reusable reports whether the last request's connection will carry the
// next one. Over HTTP/1 net/http closes a connection that answered
// "Connection: close" a moment after the body's end, so its closed flag
// alone is not enough.
func (w *httpSender) reusable() bool {
	return w.conn != nil && !w.connDone && !w.conn.closed.Load()
}

// retire drops the last connection when it is older than ConnAge, so the
// request about to start dials a new one.
func (w *httpSender) retire(now time.Time) {
	if age := w.s.conn.ConnAge; age > 0 && w.reusable() && now.Sub(w.conn.dialed) >= age {
		w.drop()
	}
}

// drop makes sure the last connection carries no more requests: net/http
// closes it when idle. When net/http still counts it busy (an HTTP/2 stream
// whose end a cancellation cut short is cleaned up on net/http's goroutine,
// a moment later), that transport is left to be closed next time and a new
// one taken.
func (w *httpSender) drop() {
	w.t.CloseIdleConnections()
	if w.conn != nil && !w.conn.closed.Load() {
		if w.retired != nil {
			w.retired.CloseIdleConnections()
		}
		w.retired, w.t = w.t, w.newTransport()
	}
	w.conn = nil
}

// read drains the response body. A failed response's first bytes are
// fingerprinted, and kept when they are a sample or a new fingerprint.
func (w *httpSender) read(resp *http.Response) error {
	defer resp.Body.Close()
	s := w.s
	failed := s.failed(resp.StatusCode)
	if !s.wantsPrefix(failed) {
		n, err := io.Copy(io.Discard, resp.Body)
		w.cur.Bytes = n
		w.cur.Groups = s.groups(resp.Header)
		return err
	}
	n, err := readPrefix(resp.Body, w.buf[:])
	if err == nil && n == len(w.buf) {
		w.cur.Bytes, err = io.Copy(io.Discard, resp.Body)
	}
	w.cur.Bytes += int64(n)
	s.response(&w.cur, resp.Proto, resp.Header, w.buf[:n], failed, err)
	return err
}

// readPrefix reads into buf until it is full or the body ends; a clean end
// of the body is no error.
func readPrefix(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
