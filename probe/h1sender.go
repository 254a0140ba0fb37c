package probe

import (
	"context"
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
	// ClientAuto (the zero value) uses the fast path for every endpoint
	// that speaks HTTP/1.1, net/http for the others, deciding per
	// endpoint: http:// with --http auto or 1.1, and https:// with --http
	// 1.1, go the fast way; --http 2 (h2c for http://) and requests the
	// fast path cannot render (CONNECT) go through net/http. https://
	// with --http auto offers "h2" and "http/1.1" by ALPN on the fast
	// path; when the server chooses h2, that endpoint switches to net/http
	// for good: the request whose handshake found it is sent there, once,
	// its latency and timeout running from its start.
	ClientAuto ClientKind = "auto"
	// ClientFast sends every request through the fast path: over TLS it
	// offers only "http/1.1" by ALPN, so a server that prefers HTTP/2 is
	// spoken to in HTTP/1.1, and Start refuses what the fast path cannot
	// do (--http 2, CONNECT) instead of measuring net/http unasked.
	ClientFast ClientKind = "fast"
	// ClientStd sends every request through net/http, as a comparison
	// and a fallback.
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
		return nil
	}
	tmpl, err := newH1Template(tg, o.UserAgent)
	if err != nil {
		if fast {
			return fmt.Errorf("fast client: %w", err)
		}
		return nil // net/http sends it, or reports why not, request by request
	}
	var alpn []string
	if tg.TLS() {
		alpn = []string{"http/1.1"}
		if !fast && o.HTTP != HTTP1 {
			alpn = []string{"h2", "http/1.1"}
		}
	}
	d := newH1Dialer(s.ep, o.ConnOptions, alpn)
	d.number = func() uint64 { return s.state.conns.Add(1) } // s.state is set when the stream starts
	s.h1 = &h1Path{tmpl: tmpl, dialer: d}
	s.newSender = newH1Sender
	return nil
}

// h1Sender is the fast request path: it owns at most one HTTP/1.1
// connection and reuses one response buffer; a request is a deadline set on
// the connection, one write and synchronous reads. When the endpoint turns
// out to speak HTTP/2 (ALPN), it hands its requests to an httpSender.
type h1Sender struct {
	s      *stream
	parent context.Context // dials; never cancelled while requests are in flight
	c      *h1Conn         // the connection to reuse; nil for none
	resp   *h1Response
	idBuf  []byte
	std    *httpSender // set once the endpoint chose HTTP/2
}

func newH1Sender(s *stream, parent context.Context) sender {
	if s.state.h2.Load() {
		return newHTTPSender(s, parent)
	}
	keep := 0
	if s.evidence.Failed != nil || s.evidence.Samples > 0 {
		keep = BodyPrefix
	}
	return &h1Sender{s: s, parent: parent, resp: newH1Response(keep, s.groupBy...)}
}

// close closes the sender's connection.
func (w *h1Sender) close() {
	if w.c != nil {
		w.c.close()
		w.c = nil
	}
	if w.std != nil {
		w.std.close()
	}
}

// toStd hands the sender's requests to net/http from now on.
func (w *h1Sender) toStd() {
	w.close()
	w.std = newHTTPSender(w.s, w.parent).(*httpSender)
}

// do sends one request and reads its whole response, within the stream's
// timeout: the dial, the TLS handshake and the exchange all end by one
// deadline. Nothing is retried. A connection is reused only when its last
// response was read to the end and it did not go stale while idle.
func (w *h1Sender) do() Result {
	if w.std != nil {
		return w.std.do()
	}
	s := w.s
	start := time.Now()
	if s.state.h2.Load() { // another worker of the endpoint found HTTP/2
		w.toStd()
		return w.std.doFrom(start)
	}
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
		c, err = s.h1.dialer.dial(w.parent, deadline)
		if errors.Is(err, errH2Negotiated) {
			// Nothing was sent: the request goes through net/http.
			s.state.h2.Store(true)
			w.toStd()
			return w.std.doFrom(start)
		}
	}
	var id string
	if s.requestID {
		w.idBuf = s.appendRequestID(w.idBuf[:0])
		id = string(w.idBuf)
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
