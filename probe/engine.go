package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
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
	// UserAgent is sent unless the target's headers set one.
	UserAgent string
	// RequestID adds a fresh X-Request-Id to every request unless the
	// target's headers set one.
	RequestID bool
	// Evidence says which results carry the response's headers and first
	// bytes; the zero value keeps none.
	Evidence Evidence
}

// Evidence selects the results that keep what a support engineer needs.
type Evidence struct {
	// Failed reports whether a status counts as a failure; nil = none does.
	Failed func(status int) bool
	// Samples is how many failed requests per endpoint keep their evidence;
	// one successful request per endpoint keeps it too when Samples > 0.
	Samples int
}

// Run is a running attack: its results, and the endpoints it sends to,
// which may change while it runs.
type Run struct {
	opts    Options
	runID   string
	results chan Result
	sendCtx context.Context
	stop    context.CancelFunc
	reqCtx  context.Context // requests in flight: not cancelled when sending stops
	issued  atomic.Int64    // reserved from the --requests budget
	sent    atomic.Int64    // requests started
	wg      sync.WaitGroup

	mu        sync.Mutex
	closed    bool // sending has ended: no stream may be added
	streams   map[int]*active
	quotas    map[int]*quota // by endpoint ID, kept when a stream stops
	started   time.Time
	sendEnded time.Time
}

// active is one endpoint's running stream.
type active struct {
	s      *stream
	lim    *rate.Limiter // nil in the closed model
	cancel context.CancelFunc
}

// Attack starts one stream per endpoint and returns their results; see Start.
func Attack(ctx context.Context, eps []*Endpoint, o Options) (<-chan Result, error) {
	r, err := Start(ctx, eps, o)
	if err != nil {
		return nil, err
	}
	return r.Results(), nil
}

// Start starts one stream per endpoint. The results channel is closed when
// sending has stopped (ctx ended, Duration elapsed or Requests sent) and
// every request in flight has finished or timed out. Cancelling ctx stops
// sending only: requests in flight keep their own timeout, so what was sent
// is always reported.
func Start(ctx context.Context, eps []*Endpoint, o Options) (*Run, error) {
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
	if o.UserAgent == "" {
		o.UserAgent = "pinprobe"
	}
	streams := make([]*stream, len(eps))
	for i, ep := range eps {
		s, err := newStream(ep, o)
		if err != nil {
			return nil, err
		}
		streams[i] = s
	}
	var id [4]byte
	rand.Read(id[:])
	r := &Run{
		opts:    o,
		runID:   hex.EncodeToString(id[:]),
		results: make(chan Result, 1024),
		reqCtx:  context.WithoutCancel(ctx),
		streams: map[int]*active{},
		quotas:  map[int]*quota{},
	}
	r.started = time.Now()
	if o.Duration > 0 {
		r.sendCtx, r.stop = context.WithDeadline(ctx, r.started.Add(o.Duration))
	} else {
		r.sendCtx, r.stop = context.WithCancel(ctx)
	}
	// The run holds one count of wg until sending ends, so streams can be
	// added while it runs without racing the final Wait.
	r.wg.Add(1)
	go func() {
		<-r.sendCtx.Done()
		r.mu.Lock()
		r.closed = true
		r.sendEnded = time.Now()
		if d, ok := r.sendCtx.Deadline(); ok && r.sendCtx.Err() == context.DeadlineExceeded {
			r.sendEnded = d // the planned end, not when this goroutine woke
		}
		r.mu.Unlock()
		r.wg.Done()
	}()
	r.mu.Lock()
	for i, s := range streams {
		// Stagger the endpoints over one period of the total rate so that
		// their requests interleave instead of arriving together.
		offset := time.Duration(0)
		if !o.Max {
			offset = time.Duration(float64(i) / o.Rate * float64(time.Second))
		}
		r.startLocked(s, offset)
	}
	r.resplitLocked()
	r.mu.Unlock()
	go func() {
		// A stream stops as soon as its next request could not start before
		// the deadline; the run lasts the whole --duration all the same
		// (sendCtx), so rates are computed over the planned window.
		r.wg.Wait()
		r.stop()
		close(r.results)
	}()
	return r, nil
}

// Sending returns when the run started and when it stopped sending (its
// planned end, the end of the --requests budget, or the cancellation). Rates
// are over this window: the wait for requests in flight is not part of it.
// The end is known once sending has stopped; it is zero before.
func (r *Run) Sending() (start, end time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started, r.sendEnded
}

// Sent returns how many requests have been started so far; those without a
// result yet are in flight.
func (r *Run) Sent() int64 { return r.sent.Load() }

// Results returns the channel of every result of the run.
func (r *Run) Results() <-chan Result { return r.results }

// ID is the run's random identifier, the prefix of its request IDs.
func (r *Run) ID() string { return r.runID }

// Add starts a stream for ep (whose ID must not be running) and splits the
// total rate again over every stream. Once sending has ended it returns
// ErrRunEnded and starts nothing.
func (r *Run) Add(ep *Endpoint) error {
	s, err := newStream(ep, r.opts)
	if err != nil {
		return err
	}
	s.runID = r.runID
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRunEnded
	}
	r.startLocked(s, 0)
	r.resplitLocked()
	return nil
}

// ErrRunEnded is Add's answer once sending has stopped.
var ErrRunEnded = errors.New("the run has stopped sending")

// Remove stops sending to endpoint id; its requests in flight still report.
// The total rate is split again over the streams left.
func (r *Run) Remove(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.streams[id]; ok {
		a.cancel()
		delete(r.streams, id)
		r.resplitLocked()
	}
}

// resplitLocked gives every open-model stream its share of the total rate.
func (r *Run) resplitLocked() {
	if r.opts.Max || len(r.streams) == 0 {
		return
	}
	per := r.opts.Rate / float64(len(r.streams))
	// A burst of 5 ms worth of requests lets the limiter catch up after a
	// late wake-up at high rates without sending more than the rate on average.
	burst := max(1, int(math.Floor(per*0.005)))
	for _, a := range r.streams {
		a.lim.SetLimit(rate.Limit(per))
		a.lim.SetBurst(burst)
	}
}

// take reserves one request of the --requests budget; false means the budget
// is spent and sending stops.
func (r *Run) take() bool {
	if r.opts.Requests <= 0 {
		return true
	}
	n := r.issued.Add(1)
	if n >= r.opts.Requests {
		r.stop()
	}
	return n <= r.opts.Requests
}

// startLocked launches the goroutines of one stream.
func (r *Run) startLocked(s *stream, offset time.Duration) {
	s.runID = r.runID
	if q, ok := r.quotas[s.ep.ID]; ok {
		s.quota = q // the endpoint is back: its evidence allowance is not renewed
	}
	r.quotas[s.ep.ID] = s.quota
	ctx, cancel := context.WithCancel(r.sendCtx)
	a := &active{s: s, cancel: cancel}
	r.streams[s.ep.ID] = a
	// The stream's workers; once they are done its kept-alive connections
	// are closed, so an address that left DNS holds none open.
	var workers sync.WaitGroup
	if r.opts.Max {
		for range r.opts.Concurrency {
			workers.Go(func() {
				w := s.newWorker(r.reqCtx)
				defer w.close()
				for ctx.Err() == nil && r.take() {
					r.sent.Add(1)
					r.results <- w.do()
				}
			})
		}
		r.wg.Go(func() {
			workers.Wait()
			s.transport.CloseIdleConnections()
		})
		return
	}
	a.lim = rate.NewLimiter(rate.Limit(r.opts.Rate), 1)
	work := make(chan struct{}) // unbuffered: a send succeeds only when a worker is idle
	for range r.opts.Concurrency {
		workers.Go(func() {
			w := s.newWorker(r.reqCtx)
			defer w.close()
			for range work {
				if !r.take() {
					continue
				}
				r.sent.Add(1)
				r.results <- w.do()
			}
		})
	}
	r.wg.Go(func() {
		r.schedule(ctx, s, a.lim, work, offset)
		close(work)
		workers.Wait()
		s.transport.CloseIdleConnections()
	})
}

// schedule paces one endpoint's open-model stream. A request that is due
// while every worker is busy is dropped and counted, never queued: the send
// schedule does not wait for a slow backend.
func (r *Run) schedule(ctx context.Context, s *stream, lim *rate.Limiter, work chan<- struct{}, offset time.Duration) {
	if offset > 0 {
		t := time.NewTimer(offset)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	lim.AllowN(time.Now(), lim.Burst()-1) // start with one token, not a burst
	dropped, lastFlush := 0, time.Now()
	flush := func() {
		if dropped > 0 {
			r.results <- Result{Endpoint: s.ep.ID, Start: time.Now(), Dropped: dropped}
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
