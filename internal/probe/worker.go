package probe

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one request's outcome, or (when Dropped > 0) a count of requests
// that were due on an endpoint but not sent because it already had
// Concurrency requests in flight, or (when Missed > 0) a pause: the
// endpoint's scheduler did not run from Start for Paused (the process was
// stopped, the machine suspended), and the Missed requests due meanwhile
// were not sent, or (when Abandoned > 0) a count of requests sent to the
// endpoint whose outcome was not waited for (Run.Abandon).
type Result struct {
	Endpoint int       // Endpoint.ID
	Start    time.Time // when the request started (for drops: when they were counted)
	Latency  time.Duration
	Status   int        // 0 when no response arrived
	Err      error      // transport error, also set when the body could not be read
	Class    ErrorClass // Classify(Err)
	Bytes    int64      // response body bytes read
	Reused   bool       // the connection had served a request before (ConnReq > 1)
	// Failed says the request failed: a transport error, or a status that
	// Options.Evidence.Failed counts as a failure. The engine decides it,
	// once, for every request path.
	Failed    bool
	Local     netip.AddrPort
	Remote    netip.AddrPort
	RequestID string // the X-Request-Id sent, "" when none

	// ConnID numbers the connection the request went on among the
	// endpoint's connections, from 1 in the order they were dialled; it
	// keeps counting when an endpoint leaves DNS and comes back. 0 when the
	// request got no connection.
	ConnID uint64
	// ConnReq is the request's place on its connection, from 1; 0 when it
	// got no connection.
	ConnReq int

	// Phases: TCP connect and TLS handshake (zero on a reused connection),
	// and time to the first response byte from Start.
	Connect, TLS, TTFB time.Duration

	// Server and BodyHash fingerprint a failed response: its Server header
	// (at most MaxEvidenceValue bytes) and the hash of its normalised first
	// BodyPrefix bytes (see BodyHash).
	Server   string
	BodyHash uint64
	// Exemplar is the first BodyPrefix bytes of a failed response whose
	// fingerprint this endpoint had not produced before; nil otherwise.
	Exemplar []byte
	// Evidence is set on the results kept as samples (Options.Evidence).
	Evidence *ResponseEvidence
	// Groups holds the response's values of the Options.GroupBy headers, in
	// that order: "" for one it lacked, several values joined by ", ", each
	// cut at MaxEvidenceValue bytes. nil when the response had none of them
	// (or there was no response, or no GroupBy).
	Groups []string

	Dropped int // > 0: this Result only counts drops

	// Abandoned > 0: this Result only counts requests that were sent and
	// still in flight when Run.Abandon stopped waiting for them.
	Abandoned int

	Missed int           // > 0: this Result only records a pause
	Paused time.Duration // how long the pause kept the requests from being sent
}

// Request reports whether r is a request's outcome, not a count of drops
// or abandoned requests, or a pause.
func (r *Result) Request() bool { return r.Dropped == 0 && r.Missed == 0 && r.Abandoned == 0 }

// sender sends an endpoint's requests one at a time over the connection it owns
// and reports each as a Result: httpSender (net/http) or h1Sender (see ClientKind),
// made by the stream's newSender, set in newStream (which may refuse options).
// Its do must dial through s.dial (the pinned address) with a clone of
// s.tlsConf; build the request from s.tmpl, s.payload (none when s.bodyless) and
// the request ID (s.appendRequestID, else s.userID); honour s.conn and end
// within s.timeout whatever the server does; fill the Result from Endpoint to
// TTFB as h1Sender.do does, then call s.response or s.failure.
type sender interface {
	// do sends one request, due at start, and returns its result within
	// the stream's timeout from start (plus scheduling slack), whatever
	// the server does; its latency is from start, so a request sent late
	// counts the time it waited.
	do(start time.Time) Result
	// close releases the sender's connections.
	close()
}

// maxExemplars bounds the distinct fingerprints an endpoint sends bodies for.
const maxExemplars = 32

// stream is one endpoint's request template, connection settings and
// evidence rules; its workers' senders share it.
type stream struct {
	ep        *Endpoint
	conn      ConnOptions
	tmpl      *http.Request
	payload   []byte
	bodyless  bool // send no body at all: the method is never replayed anyway
	timeout   time.Duration
	requestID bool   // add X-Request-Id
	userID    string // the X-Request-Id the user set, sent on every request
	idPrefix  string // of request IDs: "pinprobe-RUN-ENDPOINT-"
	groupBy   []string

	evidence Evidence
	state    *epState

	// pinned dials the endpoint's address; dial numbers what it dials.
	pinned func(ctx context.Context, network, addr string) (net.Conn, error)
	// newSender makes a worker's sender; parent outlives the send schedule.
	newSender func(s *stream, parent context.Context) sender

	// The net/http path's settings, shared by its transports.
	tlsConf *tls.Config
	protos  *http.Protocols
	// h1 is the fast path's request and dialer; nil when the stream
	// sends through net/http only.
	h1 *h1Path
	// alpnDial, set for ClientAuto over TLS when HTTP/2 may be spoken,
	// dials net/http's connections too, so that none of them speaks
	// HTTP/1.1 (see ClientAuto).
	alpnDial *h1Dialer
}

// dial dials the endpoint's address and returns the connection as a
// *trackedConn numbered among the endpoint's connections.
func (s *stream) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := s.pinned(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &trackedConn{
		Conn:   c,
		id:     s.state.conns.Add(1),
		dialed: time.Now(),
		local:  addrPortOf(c.LocalAddr()),
		remote: addrPortOf(c.RemoteAddr()),
	}, nil
}

// epState is what an endpoint keeps for the whole run, across the streams
// DNS changes give it: its evidence allowance and the counters that number
// its connections and request IDs. An address that leaves DNS and comes back
// keeps it, so its quota is not renewed and its numbers do not repeat.
type epState struct {
	failSamples atomic.Int64
	okSample    atomic.Bool
	mu          sync.Mutex
	seen        map[uint64]bool // fingerprints already sent with an exemplar
	conns       atomic.Uint64   // connections dialled
	reqs        atomic.Int64    // request IDs issued
	// open counts the requests started whose results the collector has
	// not taken yet (see begin and Run.Abandon); abandonedBit is set in it
	// once the run was abandoned.
	open atomic.Int64
}

// abandonedBit marks epState.open once Run.Abandon has counted it.
const abandonedBit = 1 << 62

// begin counts a request about to be sent; false means the run was
// abandoned, and the request must not be sent (it is counted nowhere).
func (st *epState) begin() bool { return st.open.Add(1)&abandonedBit == 0 }

// abandon marks the state abandoned and returns how many requests were
// started and not taken by the collector: from then on begin refuses.
func (st *epState) abandon() int64 {
	for {
		v := st.open.Load()
		if v&abandonedBit != 0 {
			return 0 // counted already
		}
		if st.open.CompareAndSwap(v, v|abandonedBit) {
			return v
		}
	}
}

func newEPState() *epState { return &epState{seen: map[uint64]bool{}} }

func newStream(ep *Endpoint, o Options) (*stream, error) {
	p, err := protocols(ep, o.HTTP)
	if err != nil {
		return nil, err
	}
	tg := ep.Target
	method := tg.Method
	if method == "" {
		method = http.MethodGet
	}
	// Credentials in the URL are sent as Basic authorization, as curl does,
	// and never as userinfo on the wire.
	u := *tg.URL
	user := u.User
	u.User = nil
	req, err := http.NewRequest(method, u.String(), nil)
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
	if _, ok := req.Header["Authorization"]; !ok && user != nil {
		req.Header["Authorization"] = []string{basicAuth(user)}
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", o.UserAgent)
	}
	_, userID := req.Header["X-Request-Id"]
	replayable := method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions ||
		method == http.MethodTrace || req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
	s := &stream{
		ep:        ep,
		conn:      o.ConnOptions,
		tmpl:      req,
		payload:   tg.Body,
		bodyless:  len(tg.Body) == 0 && !replayable,
		timeout:   o.Timeout,
		requestID: o.RequestID && !userID,
		userID:    req.Header.Get("X-Request-Id"),
		groupBy:   o.GroupBy,
		evidence:  o.Evidence,
		state:     newEPState(),
		pinned:    pinnedDial(ep, o.Timeout),
		newSender: newHTTPSender,
		tlsConf:   tlsConfig(ep, o.TLS),
		protos:    p,
	}
	if err := s.useFastPath(o); err != nil {
		return nil, err
	}
	if o.sender != nil {
		s.newSender = o.sender
	}
	if o.dial != nil {
		s.pinned = hookedDial(o.dial, o.Timeout)
	}
	return s, nil
}

// basicAuth is the Authorization value for the URL's user and password; a
// user without a password (a token given as the user) is sent as "user:".
func basicAuth(u *url.Userinfo) string {
	pass, _ := u.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass))
}

// appendRequestID appends the X-Request-Id of the endpoint's next request
// to buf: "pinprobe-RUN-ENDPOINT-N", unique in the run.
func (s *stream) appendRequestID(buf []byte) []byte {
	return strconv.AppendInt(append(buf, s.idPrefix...), s.state.reqs.Add(1), 10)
}

// finish decides, once for every path, whether res failed: a transport
// error, or a status that counts as a failure (Evidence.Failed).
func (s *stream) finish(res Result) Result {
	res.Failed = res.Err != nil || s.failed(res.Status)
	return res
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
		return s.state.failSamples.Add(1) <= int64(s.evidence.Samples)
	}
	return !s.state.okSample.Load() && s.state.okSample.CompareAndSwap(false, true)
}

// mayTakeFailSample reports whether a failure may still become a sample,
// so that its evidence is worth gathering.
func (s *stream) mayTakeFailSample() bool {
	return s.state.failSamples.Load() < int64(s.evidence.Samples)
}

// wantsPrefix reports whether a response's first bytes must be kept: it
// failed, or it may become the endpoint's successful sample.
func (s *stream) wantsPrefix(failed bool) bool {
	return failed || (s.evidence.Samples > 0 && !s.state.okSample.Load())
}

// firstOf reports whether h is a fingerprint the endpoint has not produced
// before (up to maxExemplars of them).
func (s *stream) firstOf(h uint64) bool {
	q := s.state
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.seen[h] || len(q.seen) >= maxExemplars {
		return false
	}
	q.seen[h] = true
	return true
}

// groups returns the GroupBy values of a response's header (see
// Result.Groups); it allocates nothing when GroupBy is empty or the
// response has none of them.
func (s *stream) groups(h http.Header) []string {
	var out []string
	for i, name := range s.groupBy {
		vs := h[name]
		if len(vs) == 0 {
			continue
		}
		if out == nil {
			out = make([]string, len(s.groupBy))
		}
		v := vs[0]
		if len(vs) > 1 {
			v = strings.Join(vs, ", ")
		}
		out[i] = cutValue(v)
	}
	return out
}

// response records what every response yields, whatever its body: the
// status, the GroupBy values and, for a failure, the fingerprint of its
// first bytes (prefix) and its exemplar. It keeps the evidence when the
// result is a sample and readErr is nil.
func (s *stream) response(r *Result, proto string, h http.Header, prefix []byte, failed bool, readErr error) {
	r.Groups = s.groups(h)
	if failed {
		s.fingerprint(r, headerValue(h, "Server"), prefix)
	}
	if readErr == nil && s.takeSample(failed) {
		r.Evidence = boundedEvidence(proto, h, prefix)
	}
}

// fingerprint records a failed response's Server header, the hash of its
// first bytes (prefix) and, when the endpoint has not produced that hash
// before, the bytes themselves.
func (s *stream) fingerprint(r *Result, server string, prefix []byte) {
	r.Server = cutValue(server)
	r.BodyHash = BodyHash(prefix)
	if s.firstOf(r.BodyHash) {
		r.Exemplar = append([]byte(nil), prefix...)
	}
}

// failure records a request that ended with err: its class, made timeout
// when the request's own timer ended it (timedOut), connect_timeout when
// that happened before it had a connection. A failure may be a sample
// too; its evidence holds whatever response arrived (h, nil for none).
func (s *stream) failure(r *Result, err error, timedOut bool, proto string, h http.Header) {
	r.Err = err
	r.Class = Classify(err)
	if timedOut && !errors.Is(err, errSwitched) { // a switch found before the timer fired stays one
		r.Class = ClassTimeout
		r.Err = fmt.Errorf("timeout after %s: %w", s.timeout, err)
	}
	if r.Class == ClassTimeout && r.ConnID == 0 && !r.Remote.IsValid() {
		// No connection yet: the dial or the TLS handshake outlived the
		// timeout, whichever timer noticed first (ours, or the transport's
		// TLSHandshakeTimeout).
		r.Class = ClassConnectTimeout
	}
	if r.Evidence == nil && s.takeSample(true) {
		r.Evidence = boundedEvidence(proto, h, nil)
	}
}

// headerValue is h.Get(name) for a canonical name, without the canonicalising.
func headerValue(h http.Header, name string) string {
	if vs := h[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}
