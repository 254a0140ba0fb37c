package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"
)

// ClientKind selects the request path of a run (Options.Client).
type ClientKind string

// The request paths. The fast path is the synchronous HTTP/1.1 client of
// h1.go: one connection per worker, requests rendered once, a strict parser,
// deadlines on the connection instead of timers and goroutines, and almost
// no allocation per request. net/http ("std") speaks HTTP/2 as well.
const (
	// ClientAuto (the zero value) speaks HTTP/1.1 through the fast path and HTTP/2
	// through net/http, never HTTP/1.1 through net/http (it may read the body a 204,
	// 304 or HEAD answer should not have had as the next answer). --http 2 goes
	// through net/http (h2c, or ALPN "h2" alone: no protocol chosen fails as
	// protocol). https:// with --http auto offers both by ALPN per connection: one
	// on which the server chooses h2 goes on in net/http with the request that found
	// it, and one net/http dials that gets HTTP/1.1 comes back to the fast path with
	// its request. CONNECT, which the fast path cannot render, is refused.
	ClientAuto ClientKind = "auto"
	// ClientFast sends every request through the fast path: over TLS it
	// offers only "http/1.1" by ALPN, so a server that prefers HTTP/2 is
	// spoken to in HTTP/1.1, and Start refuses what the fast path cannot
	// do (--http 2, CONNECT) instead of measuring net/http unasked.
	ClientFast ClientKind = "fast"
	// ClientStd sends every request through net/http, as a comparison
	// and a fallback. Over HTTP/1.1 it inherits net/http's reuse of a
	// connection after a 204, 304 or HEAD response that carried a body.
	ClientStd ClientKind = "std"
)

// h1Path is what an endpoint's fast-path senders share: the request
// rendered once and the dialer of its connections.
type h1Path struct {
	tmpl   *h1Template
	dialer *h1Dialer
}

// useFastPath makes s send through the HTTP/1.1 client when o.Client
// allows and the endpoint speaks HTTP/1.1 (see ClientKind). It leaves s on
// net/http when the fast path does not apply, and fails when o asks for the
// fast path and it does not apply.
func (s *stream) useFastPath(o Options) error {
	switch o.Client {
	case ClientStd:
		return nil
	case ClientAuto, "", ClientFast:
	default:
		return fmt.Errorf("unknown client %q: want auto, fast or std", o.Client)
	}
	tg := s.ep.Target
	fast := o.Client == ClientFast
	if o.HTTP == HTTP2 {
		if fast {
			return fmt.Errorf("fast client for %s: it speaks HTTP/1.1 only; HTTP/2 needs the std or auto client", tg)
		}
		if tg.TLS() {
			s.alpnDial = s.newDialer(o, []string{"h2"})
			s.alpnDial.handoff = true
		}
		return nil
	}
	tmpl, err := newH1Template(tg, o.UserAgent)
	if err != nil {
		if fast {
			return fmt.Errorf("fast client: %w", err)
		}
		return fmt.Errorf("%w; --client std sends it through net/http", err)
	}
	alpn := []string(nil)
	if tg.TLS() {
		alpn = []string{"http/1.1"}
	}
	if tg.TLS() && !fast && o.HTTP != HTTP1 {
		alpn = []string{"h2", "http/1.1"}
	}
	d := s.newDialer(o, alpn)
	if alpn != nil && alpn[0] == "h2" {
		d.handoff = true
		s.alpnDial = d
	}
	s.h1 = &h1Path{tmpl: tmpl, dialer: d}
	s.newSender = newH1Sender
	return nil
}

// newDialer is the fast path's dialer of the stream's endpoint, offering
// alpn, numbering its connections among the endpoint's.
func (s *stream) newDialer(o Options, alpn []string) *h1Dialer {
	d := newH1Dialer(s.ep, o.ConnOptions, alpn)
	d.hook = o.dial
	d.number = func() uint64 { return s.state.conns.Add(1) } // s.state is set when the stream starts
	return d
}

// h1Sender is the fast request path: it owns at most one HTTP/1.1
// connection and reuses one response buffer; a request is a deadline set on
// the connection, one write and synchronous reads. When the server chooses
// HTTP/2 on a connection it dialled (ALPN), it hands that connection and
// its requests to an httpSender, which hands them back when the server
// chooses HTTP/1.1 on one that net/http dialled.
type h1Sender struct {
	s      *stream
	parent context.Context // dials; never cancelled while requests are in flight
	c      *h1Conn         // the connection to reuse; nil for none
	resp   *h1Response
	idBuf  []byte
	std    *httpSender // made when a connection first chose HTTP/2
	onStd  bool        // the worker's connection is std's (HTTP/2)
}

func newH1Sender(s *stream, parent context.Context) sender {
	keep := 0
	if s.evidence.Failed != nil || s.evidence.Samples > 0 {
		keep = BodyPrefix
	}
	return &h1Sender{s: s, parent: parent, resp: newH1Response(keep, s.groupBy...)}
}

// close closes the sender's connections.
func (w *h1Sender) close() {
	if w.c != nil {
		w.c.close()
		w.c = nil
	}
	if w.std != nil {
		w.std.close()
	}
}

// do sends one request and reads its whole response, within the stream's
// timeout: the dial, the TLS handshake and the exchange all end by one
// deadline. Nothing is retried. A connection is reused only when its last
// response was read to the end and it did not go stale while idle. The
// request goes on the worker's connection, through net/http when that
// speaks HTTP/2.
func (w *h1Sender) do(start time.Time) Result {
	if w.onStd {
		return w.viaStd(start)
	}
	return w.fast(start, "")
}

// viaStd sends the request that started at start through net/http. When
// net/http dials and the server chooses HTTP/1.1 there, that connection
// and the request (with its ID) come back to the fast path, which sends it
// on that connection without dialling: a request changes path at most
// twice.
func (w *h1Sender) viaStd(start time.Time) Result {
	res, sent := w.std.doFrom(start)
	if sent {
		return res
	}
	w.onStd = false
	if w.c = w.std.back.Swap(nil); w.c == nil {
		// Not seen: the dial that found HTTP/1.1 leaves its connection
		// before net/http returns.
		res.Latency = time.Since(start)
		w.s.failure(&res, errors.New("the connection net/http dialled for HTTP/1.1 was lost"), false, "", nil)
		return res
	}
	return w.fast(start, res.RequestID)
}

// fast sends the request that started at start on the fast path, with id
// as its X-Request-Id when the stream adds them ("" makes a new one).
func (w *h1Sender) fast(start time.Time, id string) Result {
	s := w.s
	res := Result{Endpoint: s.ep.ID, Start: start, RequestID: s.userID}
	deadline := start.Add(s.timeout)
	c := w.c
	if c != nil && (c.stale(start) || s.conn.ConnAge > 0 && start.Sub(c.dialed) >= s.conn.ConnAge) {
		c.close()
		c = nil
	}
	w.c = nil
	var err error
	if c == nil {
		c, err = s.h1.dialer.dialAny(w.parent, deadline)
		if err == nil && c.alpn == "h2" {
			// Nothing was sent: the request goes through net/http, on
			// this connection.
			if w.std == nil {
				w.std = newHTTPSender(s, w.parent).(*httpSender)
			}
			w.std.handOver(c.nc.(*tls.Conn))
			w.onStd = true
			return w.viaStd(start)
		}
	}
	if s.requestID {
		if id == "" {
			w.idBuf = s.appendRequestID(w.idBuf[:0])
			id = string(w.idBuf)
		}
		res.RequestID = id
	}
	if err != nil {
		res.Latency = time.Since(start)
		s.failure(&res, err, timedOut(err, deadline), "", nil)
		return res
	}
	last := s.conn.NewConn || s.conn.ConnRequests > 0 && c.requests()+1 >= s.conn.ConnRequests
	resp := w.resp
	err = c.roundTrip(s.h1.tmpl, id, last, deadline, resp)
	res.Latency = time.Since(start)
	c.result(&res, resp)
	res.ConnID, res.ConnReq = c.id, c.requests()
	if c.reusable() {
		w.c = c
	}
	if res.Status >= http.StatusOK {
		failed := s.failed(res.Status)
		res.Groups = s.capturedGroups(resp)
		if failed {
			s.fingerprint(&res, resp.server, resp.body)
		}
		if err == nil && s.takeSample(failed) {
			res.Evidence = boundedEvidence(resp.proto, resp.header(), resp.body)
		}
	}
	if err != nil {
		var h http.Header
		if res.Status != 0 && res.Evidence == nil && s.mayTakeFailSample() {
			h = resp.header()
		}
		s.failure(&res, err, timedOut(err, deadline), resp.proto, h)
	}
	return res
}

// timedOut reports whether err is the request's deadline passing: the
// connection's deadline, or the dial's.
func timedOut(err error, deadline time.Time) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err) && !time.Now().Before(deadline)
}

// capturedGroups returns the GroupBy values the parser captured, as
// Result.Groups has them: nil when the response had none of them.
func (s *stream) capturedGroups(resp *h1Response) []string {
	for i, ok := range resp.captured {
		if ok {
			out := make([]string, len(resp.values))
			copy(out[i:], resp.values[i:])
			return out
		}
	}
	return nil
}
