package probe

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Options bound and pace a run.
type Options struct {
	ConnOptions
	// Rate is the total requests per second over all endpoints, split evenly.
	// Ignored when Max is set.
	Rate float64
	// Max selects the closed model: Concurrency workers per endpoint send back
	// to back and nothing is dropped.
	Max bool
	// Duration bounds the sending; 0 = no bound (then Requests must be set, or ctx must end).
	Duration time.Duration
	// Requests bounds the number of requests sent over all endpoints; 0 = no bound.
	Requests int64
	// Concurrency caps the requests in flight per endpoint.
	Concurrency int
}

// Result is one request's outcome, or (when Dropped > 0) a count of requests
// that were due on an endpoint but not sent because it already had
// Concurrency requests in flight.
type Result struct {
	Endpoint int       // Endpoint.ID
	Start    time.Time // when the request started (for drops: when they were counted)
	Latency  time.Duration
	Status   int        // 0 when no response arrived
	Err      error      // transport error, also set when the body could not be read
	Class    ErrorClass // Classify(Err)
	Bytes    int64      // response body bytes read
	Reused   bool       // the connection had served a request before
	Local    netip.AddrPort
	Remote   netip.AddrPort
	Dropped  int // > 0: this Result only counts drops
}

// Attack starts one stream per endpoint and returns their results. The
// channel is closed when sending has stopped (ctx ended, Duration elapsed or
// Requests sent) and every request in flight has finished or timed out.
// Cancelling ctx stops sending only: requests in flight keep their own
// timeout, so what was sent is always reported.
func Attack(ctx context.Context, eps []*Endpoint, o Options) (<-chan Result, error) {
	if len(eps) == 0 {
		return nil, fmt.Errorf("no endpoints")
	}
	if !o.Max && !(o.Rate > 0) {
		return nil, fmt.Errorf("rate %v: must be > 0", o.Rate)
	}
	o.Concurrency = max(o.Concurrency, 1)
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	streams := make([]*stream, len(eps))
	for i, ep := range eps {
		s, err := newStream(ep, o)
		if err != nil {
			return nil, err
		}
		streams[i] = s
	}

	sendCtx, stop := context.WithCancel(ctx)
	if o.Duration > 0 {
		sendCtx, stop = context.WithTimeout(ctx, o.Duration)
	}
	a := &sender{
		opts:    o,
		results: make(chan Result, 1024),
		stop:    stop,
		reqCtx:  context.WithoutCancel(ctx),
		limit:   o.Requests,
	}
	perEndpoint := o.Rate / float64(len(eps))
	for i, s := range streams {
		// Stagger the endpoints over one period of the total rate so that
		// their requests interleave instead of arriving together.
		offset := time.Duration(0)
		if !o.Max {
			offset = time.Duration(float64(i) / o.Rate * float64(time.Second))
		}
		a.start(sendCtx, s, perEndpoint, offset)
	}
	go func() {
		a.wg.Wait()
		// A stream stops as soon as its next request could not start before
		// the deadline; the run itself lasts the whole --duration, so rates
		// are computed over the planned window.
		<-sendCtx.Done()
		close(a.results)
	}()
	return a.results, nil
}

type sender struct {
	opts    Options
	results chan Result
	stop    context.CancelFunc
	reqCtx  context.Context // requests in flight: not cancelled when sending stops
	limit   int64
	issued  atomic.Int64
	wg      sync.WaitGroup
}

// take reserves one request of the --requests budget; false means the budget
// is spent and sending stops.
func (a *sender) take() bool {
	if a.limit <= 0 {
		return true
	}
	n := a.issued.Add(1)
	if n >= a.limit {
		a.stop()
	}
	return n <= a.limit
}

// start launches the goroutines of one stream.
func (a *sender) start(ctx context.Context, s *stream, perEndpoint float64, offset time.Duration) {
	if a.opts.Max {
		for range a.opts.Concurrency {
			a.wg.Go(func() {
				w := s.newWorker(a.reqCtx)
				defer w.close()
				for ctx.Err() == nil && a.take() {
					a.results <- w.do()
				}
			})
		}
		return
	}
	work := make(chan struct{}) // unbuffered: a send succeeds only when a worker is idle
	var workers sync.WaitGroup
	for range a.opts.Concurrency {
		workers.Go(func() {
			w := s.newWorker(a.reqCtx)
			defer w.close()
			for range work {
				if !a.take() {
					continue
				}
				a.results <- w.do()
			}
		})
	}
	a.wg.Go(func() {
		defer func() {
			close(work)
			workers.Wait()
		}()
		a.schedule(ctx, s, work, perEndpoint, offset)
	})
}

// schedule paces one endpoint's open-model stream. A request that is due
// while every worker is busy is dropped and counted, never queued: the send
// schedule does not wait for a slow backend.
func (a *sender) schedule(ctx context.Context, s *stream, work chan<- struct{}, perEndpoint float64, offset time.Duration) {
	if offset > 0 {
		t := time.NewTimer(offset)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	// A burst of 5 ms worth of requests lets the limiter catch up after a late
	// wake-up at high rates without ever sending more than the rate on average.
	burst := max(1, int(math.Floor(perEndpoint*0.005)))
	lim := rate.NewLimiter(rate.Limit(perEndpoint), burst)
	lim.AllowN(time.Now(), burst-1) // start with one token, not a burst
	dropped, lastFlush := 0, time.Now()
	flush := func() {
		if dropped > 0 {
			a.results <- Result{Endpoint: s.ep.ID, Start: time.Now(), Dropped: dropped}
			dropped, lastFlush = 0, time.Now()
		}
	}
	defer flush()
	for lim.Wait(ctx) == nil {
		select {
		case work <- struct{}{}:
		default:
			dropped++
			if time.Since(lastFlush) >= 100*time.Millisecond {
				flush()
			}
		}
	}
}

// stream is one endpoint's transport and request template.
type stream struct {
	ep        *Endpoint
	transport *http.Transport
	tmpl      *http.Request
	payload   []byte
	bodyless  bool // send no body at all: the method is never replayed anyway
	timeout   time.Duration
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
		req.Header.Set("User-Agent", UserAgent)
	}
	replayable := method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions ||
		method == http.MethodTrace || req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
	return &stream{
		ep:        ep,
		transport: t,
		tmpl:      req,
		payload:   tg.Body,
		bodyless:  len(tg.Body) == 0 && !replayable,
		timeout:   o.Timeout,
	}, nil
}

// UserAgent is sent unless the user sets one.
var UserAgent = "pinprobe/dev"

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
}

func (s *stream) newWorker(parent context.Context) *worker {
	w := &worker{s: s, parent: parent}
	w.trace = &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			w.cur.Reused = info.Reused
			w.cur.Local = addrPortOf(info.Conn.LocalAddr())
			w.cur.Remote = addrPortOf(info.Conn.RemoteAddr())
		},
	}
	w.renew()
	w.timer = time.AfterFunc(time.Hour, func() {
		w.timedOut.Store(true)
		w.cancel()
	})
	w.timer.Stop()
	return w
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
	w.cur = Result{Endpoint: s.ep.ID, Start: time.Now()}
	w.timer.Reset(s.timeout)
	req := s.tmpl.WithContext(w.ctx)
	if !s.bodyless {
		setBody(req, s.payload)
	}
	resp, err := s.transport.RoundTrip(req)
	if err == nil {
		w.cur.Status = resp.StatusCode
		w.cur.Bytes, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
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
			if !w.cur.Remote.IsValid() {
				// No connection yet (GotConn never ran): net/http stopped
				// waiting for the dial or TLS handshake on our deadline.
				w.cur.Class = ClassConnectTimeout
			}
			w.cur.Err = fmt.Errorf("timeout after %s: %w", s.timeout, err)
		}
	}
	if !stopped || w.ctx.Err() != nil {
		w.cancel()
		w.renew()
	}
	return w.cur
}
