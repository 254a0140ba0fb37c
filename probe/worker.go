package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one request's outcome, or (when Dropped > 0) a count of requests
// that were due on an endpoint but not sent because it already had
// Concurrency requests in flight.
type Result struct {
	Endpoint  int       // Endpoint.ID
	Start     time.Time // when the request started (for drops: when they were counted)
	Latency   time.Duration
	Status    int        // 0 when no response arrived
	Err       error      // transport error, also set when the body could not be read
	Class     ErrorClass // Classify(Err)
	Bytes     int64      // response body bytes read
	Reused    bool       // the connection had served a request before
	Local     netip.AddrPort
	Remote    netip.AddrPort
	RequestID string // the X-Request-Id sent, "" when none

	// Phases: TCP connect and TLS handshake (zero on a reused connection),
	// and time to the first response byte from Start.
	Connect, TLS, TTFB time.Duration

	// Server and BodyHash fingerprint a failed response: its Server header
	// and the hash of its normalised first BodyPrefix bytes (see BodyHash).
	Server   string
	BodyHash uint64
	// Exemplar is the first BodyPrefix bytes of a failed response whose
	// fingerprint this endpoint had not produced before; nil otherwise.
	Exemplar []byte
	// Evidence is set on the results kept as samples (Options.Evidence).
	Evidence *ResponseEvidence

	Dropped int // > 0: this Result only counts drops
}

// ResponseEvidence is what a sample keeps of the response.
type ResponseEvidence struct {
	Proto  string
	Header http.Header // as received; reports redact secrets
	Body   []byte      // the first BodyPrefix bytes
}

// maxExemplars bounds the distinct fingerprints an endpoint sends bodies for.
const maxExemplars = 32

// stream is one endpoint's transport, request template and sample quota.
type stream struct {
	ep        *Endpoint
	transport *http.Transport
	tmpl      *http.Request
	payload   []byte
	bodyless  bool // send no body at all: the method is never replayed anyway
	timeout   time.Duration
	requestID bool   // add X-Request-Id
	userID    string // the X-Request-Id the user set, sent on every request
	runID     string
	seq       atomic.Int64

	evidence Evidence
	quota    *quota
}

// quota is what an endpoint has left of its evidence allowance. It outlives
// a stream: an address that leaves DNS and comes back keeps its quota.
type quota struct {
	failSamples atomic.Int64
	okSample    atomic.Bool
	mu          sync.Mutex
	seen        map[uint64]bool // fingerprints already sent with an exemplar
}

func newStream(ep *Endpoint, o Options) (*stream, error) {
	t, err := NewTransport(ep, o.ConnOptions)
	if err != nil {
		return nil, err
	}
	tg := ep.Target
	method := tg.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, tg.URL.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("request for %s: %w", tg, err)
	}
	for k, vs := range tg.Header {
		if k == "Host" {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", o.UserAgent)
	}
	_, userID := req.Header["X-Request-Id"]
	replayable := method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions ||
		method == http.MethodTrace || req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
	return &stream{
		ep:        ep,
		transport: t,
		tmpl:      req,
		payload:   tg.Body,
		bodyless:  len(tg.Body) == 0 && !replayable,
		timeout:   o.Timeout,
		requestID: o.RequestID && !userID,
		userID:    req.Header.Get("X-Request-Id"),
		evidence:  o.Evidence,
		quota:     &quota{seen: map[uint64]bool{}},
	}, nil
}

// failed reports whether a status counts as a failure.
func (s *stream) failed(status int) bool {
	return s.evidence.Failed != nil && s.evidence.Failed(status)
}

// takeSample reports whether a result may keep its evidence: the first
// Samples failures and the first success of the endpoint.
func (s *stream) takeSample(failed bool) bool {
	if s.evidence.Samples <= 0 {
		return false
	}
	if failed {
		return s.quota.failSamples.Add(1) <= int64(s.evidence.Samples)
	}
	return !s.quota.okSample.Load() && s.quota.okSample.CompareAndSwap(false, true)
}

// firstOf reports whether h is a fingerprint the endpoint has not produced
// before (up to maxExemplars of them).
func (s *stream) firstOf(h uint64) bool {
	q := s.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.seen[h] || len(q.seen) >= maxExemplars {
		return false
	}
	q.seen[h] = true
	return true
}

// worker sends one request at a time. Its context, trace hooks and timeout
// timer are made once and reused by every request it sends, which keeps the
// per-request path to net/http's own work.
type worker struct {
	s        *stream
	parent   context.Context // requests in flight: outlives the send schedule
	ctx      context.Context // parent + cancel + trace; replaced after a timeout
	cancel   context.CancelFunc
	timer    *time.Timer // cancels ctx when a request outlives the timeout
	timedOut atomic.Bool
	cur      Result
	trace    *httptrace.ClientTrace
	buf      [BodyPrefix]byte

	// Dial phases: net/http dials on its own goroutine, so these are atomic.
	// So is the first response byte, read on the connection's goroutine.
	// Each holds the monotonic time since epoch, 0 for not yet.
	epoch                                             time.Time
	connStart, connDone, tlsStart, tlsDone, firstByte atomic.Int64
}

func (s *stream) newWorker(parent context.Context) *worker {
	w := &worker{s: s, parent: parent, epoch: time.Now()}
	now := func() int64 { return int64(time.Since(w.epoch)) + 1 } // > 0: 0 means not yet
	w.trace = &httptrace.ClientTrace{
		ConnectStart:      func(string, string) { w.connStart.Store(now()) },
		ConnectDone:       func(string, string, error) { w.connDone.Store(now()) },
		TLSHandshakeStart: func() { w.tlsStart.Store(now()) },
		TLSHandshakeDone: func(tls.ConnectionState, error) {
			w.tlsDone.Store(now())
		},
		GotConn: func(info httptrace.GotConnInfo) {
			w.cur.Reused = info.Reused
			w.cur.Local = addrPortOf(info.Conn.LocalAddr())
			w.cur.Remote = addrPortOf(info.Conn.RemoteAddr())
			if !info.Reused {
				w.cur.Connect = span(w.connStart.Load(), w.connDone.Load())
				w.cur.TLS = span(w.tlsStart.Load(), w.tlsDone.Load())
			}
		},
		GotFirstResponseByte: func() { w.firstByte.Store(now()) },
	}
	w.renew()
	w.timer = time.AfterFunc(time.Hour, func() {
		w.timedOut.Store(true)
		w.cancel()
	})
	w.timer.Stop()
	return w
}

func span(start, end int64) time.Duration {
	if start == 0 || end < start {
		return 0
	}
	return time.Duration(end - start)
}

// renew gives the worker a fresh context after its last one was cancelled.
func (w *worker) renew() {
	ctx, cancel := context.WithCancel(w.parent)
	w.ctx, w.cancel = httptrace.WithClientTrace(ctx, w.trace), cancel
	w.timedOut.Store(false)
}

// close releases the worker's context.
func (w *worker) close() {
	w.timer.Stop()
	w.cancel()
}

// do sends one request and reads the whole response body.
func (w *worker) do() Result {
	s := w.s
	w.connStart.Store(0)
	w.tlsStart.Store(0)
	w.firstByte.Store(0)
	w.cur = Result{Endpoint: s.ep.ID, Start: time.Now()}
	w.timer.Reset(s.timeout)
	req := s.tmpl.WithContext(w.ctx)
	w.cur.RequestID = s.userID
	if s.requestID {
		h := make(http.Header, len(s.tmpl.Header)+1)
		for k, v := range s.tmpl.Header {
			h[k] = v
		}
		w.cur.RequestID = "pinprobe-" + s.runID + "-" + strconv.Itoa(s.ep.ID) + "-" + strconv.FormatInt(s.seq.Add(1), 10)
		h["X-Request-Id"] = []string{w.cur.RequestID}
		req.Header = h
	}
	if !s.bodyless {
		setBody(req, s.payload)
	}
	resp, err := s.transport.RoundTrip(req)
	if err == nil {
		w.cur.TTFB = span(int64(w.cur.Start.Sub(w.epoch))+1, w.firstByte.Load())
		err = w.read(resp)
	}
	w.cur.Latency = time.Since(w.cur.Start)
	stopped := w.timer.Stop()
	if !stopped {
		// The timer fired: let its func finish cancelling w.ctx before renew
		// replaces it, or it could cancel the next request instead.
		<-w.ctx.Done()
	}
	if err != nil {
		w.cur.Err = err
		w.cur.Class = Classify(err)
		if w.timedOut.Load() {
			w.cur.Class = ClassTimeout
			w.cur.Err = fmt.Errorf("timeout after %s: %w", s.timeout, err)
		}
		if w.cur.Class == ClassTimeout && !w.cur.Remote.IsValid() {
			// No connection yet (GotConn never ran): the dial or the TLS
			// handshake outlived the timeout, whichever timer noticed first
			// (ours, or the transport's TLSHandshakeTimeout).
			w.cur.Class = ClassConnectTimeout
		}
		if s.takeSample(true) {
			w.cur.Evidence = &ResponseEvidence{}
			if resp != nil {
				w.cur.Evidence.Proto, w.cur.Evidence.Header = resp.Proto, resp.Header
			}
		}
	}
	if !stopped || w.ctx.Err() != nil {
		w.cancel()
		w.renew()
	}
	return w.cur
}

// read drains the response body. A failed response's first bytes are
// fingerprinted, and kept when they are a sample or a new fingerprint.
func (w *worker) read(resp *http.Response) error {
	defer resp.Body.Close()
	s := w.s
	w.cur.Status = resp.StatusCode
	failed := s.failed(resp.StatusCode)
	if !failed && (s.evidence.Samples <= 0 || s.quota.okSample.Load()) {
		n, err := io.Copy(io.Discard, resp.Body)
		w.cur.Bytes = n
		return err
	}
	n, err := readPrefix(resp.Body, w.buf[:])
	prefix := w.buf[:n]
	if err == nil && n == len(w.buf) {
		w.cur.Bytes, err = io.Copy(io.Discard, resp.Body)
	}
	w.cur.Bytes += int64(n)
	if failed {
		w.cur.Server = resp.Header.Get("Server")
		w.cur.BodyHash = BodyHash(prefix)
		if s.firstOf(w.cur.BodyHash) {
			w.cur.Exemplar = append([]byte(nil), prefix...)
		}
	}
	if err == nil && s.takeSample(failed) {
		w.cur.Evidence = &ResponseEvidence{Proto: resp.Proto, Header: resp.Header, Body: append([]byte(nil), prefix...)}
	}
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
