package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options bound and pace a run.
type Options struct {
	ConnOptions
	// Rate is the total requests per second over all endpoints, split evenly.
	// Ignored when Max is set.
	Rate float64
	// PaceGrain, in the open model, sends the requests due within each
	// PaceGrain of the run (counted from its start) together at the start
	// of that grain, on as many workers: fewer wake-ups per request (less
	// CPU at a fixed rate, as bombardier's 10 ms token bucket), a burstier
	// load. The rate over any grain is exact. 0 = each request at its own
	// time (the poller wakes a timer up to 1 ms late). At most MaxPaceGrain.
	PaceGrain time.Duration
	// Max selects the closed model: Concurrency workers per endpoint send back
	// to back and nothing is dropped.
	Max bool
	// Duration bounds the sending; 0 = no bound (then Requests must be set, or ctx must end).
	Duration time.Duration
	// Requests bounds the number of requests sent over all endpoints; 0 = no bound.
	Requests int64
	// Concurrency caps the requests in flight per endpoint. In the open
	// model a worker (a goroutine and its connection) is started only when
	// a request is due and every worker of the endpoint is busy, or for
	// each of its first Rotation requests (the workers its requests take
	// turns on), so what a large Concurrency costs is only what the load
	// needs.
	Concurrency int
	// UserAgent is sent unless the target's headers set one.
	UserAgent string
	// RequestID adds a fresh X-Request-Id to every request unless the
	// target's headers set one.
	RequestID bool
	// Evidence says which results carry the response's headers and first
	// bytes; the zero value keeps none.
	Evidence Evidence
	// GroupBy names response headers (e.g. "X-Served-By") whose values every
	// Result carries in Groups, so that reports can bucket results by who
	// answered.
	GroupBy []string
	// Client selects the request path: the HTTP/1.1 fast path where the
	// endpoint speaks HTTP/1.1 and net/http elsewhere (ClientAuto, the
	// zero value), the fast path always (ClientFast), or net/http always
	// (ClientStd). Results are the same whichever path sent them.
	Client ClientKind

	// cpu tells whether the machine has CPU to spare for more workers;
	// nil = machineCPU. Tests set it to take the machine's load out of
	// what they measure.
	cpu cpuGauge
	// sender, when set, makes every worker's sender in place of the
	// network's. Tests run the engine's pacing and workers on a clock of
	// their own (testing/synctest) with senders that answer after a set
	// time.
	sender func(s *stream, parent context.Context) sender
	// dial, when set, opens every connection of both request paths in
	// place of a TCP connect to the endpoint's address; ctx carries the
	// connect's deadline. Tests run the real request paths, timeouts and
	// all, on a synctest clock over net.Pipe connections.
	dial func(ctx context.Context) (net.Conn, error)
}

// cpuGauge reports whether the machine has CPU to spare (see cpuSampler),
// and whether a look at the schedule that much late means the client
// itself is behind.
type cpuGauge interface {
	spareCPU(now time.Time) bool
	late(lag time.Duration) bool
}

// gauge is the CPU gauge of o: machineCPU unless a test set one.
func (o *Options) gauge() cpuGauge {
	if o.cpu != nil {
		return o.cpu
	}
	return machineCPU
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
	opts     Options
	runID    string
	runCtx   context.Context    // ends when ctx does or the Requests budget is spent
	stop     context.CancelFunc // ends runCtx
	sendCtx  context.Context    // runCtx bounded by Duration
	stopSend context.CancelFunc
	lateCtx  context.Context // runCtx bounded by Duration + lateGrace: the open model's streams
	stopLate context.CancelFunc
	reqCtx   context.Context // requests in flight: not cancelled when sending stops
	// cancelReqs ends reqCtx: only Abandon does, once nobody waits for them.
	cancelReqs context.CancelFunc
	issued     atomic.Int64 // reserved from the --requests budget
	sent       atomic.Int64 // requests started
	wg         sync.WaitGroup

	// Results: each producer's outbox, emptied by Take (see outbox).
	boxMu       sync.Mutex
	boxes       []*outbox
	mail        []Result      // Take's batch, reused
	waiting     atomic.Bool   // some outbox has something since the last Take
	abandoned   atomic.Bool   // Abandon was called: results are let go, Take returns nothing
	pending     atomic.Int64  // results in the outboxes
	pendingMax  int64         // results the outboxes hold before a worker waits (see pendingCap)
	ready       chan struct{} // 1-buffered; closed when the run has ended
	resultsOnce sync.Once
	results     chan Result // Results' channel, made by its first call

	mu        sync.Mutex
	closed    bool // sending has ended: no stream may be added
	streams   map[int]*active
	pools     []*pool          // every open-model stream's, removed ones too: Abandon ends them
	states    map[int]*epState // by endpoint ID, kept when a stream stops
	started   time.Time
	sendEnded time.Time
}

// active is one endpoint's running stream.
type active struct {
	s      *stream
	cancel context.CancelFunc
	pool   *pool // open model: the stream's workers and schedule
}

// Attack starts one stream per endpoint and returns their results; see Start.
func Attack(ctx context.Context, eps []*Endpoint, o Options) (<-chan Result, error) {
	r, err := Start(ctx, eps, o)
	if err != nil {
		return nil, err
	}
	return r.Results(), nil
}

// Start starts one stream per endpoint. In the open model each endpoint
// gets Rate/len(eps) requests/s from its first request on (no burst), the
// endpoints staggered over one per-endpoint period (see PlannedRequests).
// The results channel is closed when sending has stopped (ctx ended,
// Duration elapsed or Requests sent) and every request in flight has
// finished or timed out. Cancelling ctx stops sending only: requests in
// flight keep their own timeout, so what was sent is always reported, and
// the wait for them is bounded by Timeout.
func Start(ctx context.Context, eps []*Endpoint, o Options) (*Run, error) {
	if len(eps) == 0 {
		return nil, fmt.Errorf("no endpoints")
	}
	if !o.Max && !(o.Rate > 0) {
		return nil, fmt.Errorf("rate %v: must be > 0", o.Rate)
	}
	if o.PaceGrain < 0 || o.PaceGrain > MaxPaceGrain {
		return nil, fmt.Errorf("pace grain %v: must be from 0 to %v", o.PaceGrain, MaxPaceGrain)
	}
	if o.Max {
		o.PaceGrain = 0
	}
	o.Concurrency = max(o.Concurrency, 1)
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = "pinprobe"
	}
	if len(o.GroupBy) > 0 {
		names := make([]string, len(o.GroupBy))
		for i, n := range o.GroupBy {
			names[i] = http.CanonicalHeaderKey(n)
		}
		o.GroupBy = names
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
		ready:   make(chan struct{}, 1),
		streams: map[int]*active{},
		states:  map[int]*epState{},
	}
	r.reqCtx, r.cancelReqs = context.WithCancel(context.WithoutCancel(ctx))
	r.pendingMax = pendingCap
	if o.Max {
		r.pendingMax = pendingCapClosed
	}
	r.started = time.Now()
	r.runCtx, r.stop = context.WithCancel(ctx)
	if o.Duration > 0 {
		r.sendCtx, r.stopSend = context.WithDeadline(r.runCtx, r.started.Add(o.Duration))
		r.lateCtx, r.stopLate = context.WithDeadline(r.runCtx, r.started.Add(o.Duration+lateGrace))
	} else {
		r.sendCtx, r.stopSend = context.WithCancel(r.runCtx)
		r.lateCtx, r.stopLate = context.WithCancel(r.runCtx)
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
		var p pacer
		if !o.Max {
			p = startPacer(i, len(streams), o.Rate, o.PaceGrain)
		}
		r.startLocked(s, p)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go r.notify(done)
	go func() {
		// An open-model stream stops once its next request is due at or
		// after Duration; the run lasts the whole Duration all the same
		// (sendCtx), so rates are computed over the planned window.
		r.wg.Wait()
		r.stopSend()
		r.stopLate()
		r.stop()
		close(done)
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

// ID is the run's random identifier, the prefix of its request IDs.
func (r *Run) ID() string { return r.runID }

// Add starts a stream for ep and splits the total rate again over every
// stream, in a layout that begins at once (see pacer): the first requests
// of the new layout are due one slot (1/Rate) apart, in the order of the
// endpoint IDs. An endpoint that ran
// before keeps its evidence quota and its connection and request numbers.
// Once sending has ended it returns ErrRunEnded and starts nothing.
func (r *Run) Add(ep *Endpoint) error {
	s, err := newStream(ep, r.opts)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRunEnded
	}
	if _, ok := r.streams[ep.ID]; ok {
		return fmt.Errorf("add endpoint %d (%s): already running", ep.ID, ep)
	}
	if r.opts.Max {
		r.startLocked(s, pacer{})
		return nil
	}
	// Every stream, the new one too, takes a slot in a new layout that
	// begins now; the new one starts with its own.
	ps := r.layoutLocked(time.Since(r.started), ep.ID)
	r.startLocked(s, ps[ep.ID])
	r.retuneLocked(ps)
	return nil
}

// ErrRunEnded is Add's answer once sending has stopped.
var ErrRunEnded = errors.New("the run has stopped sending")

// Remove stops sending to endpoint id: once it returns, no request of
// the endpoint is chosen to be sent (one a worker chose just before may
// still start); its requests in flight still report. The total rate is
// split again over the streams left.
func (r *Run) Remove(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.streams[id]; ok {
		if a.pool != nil {
			a.pool.stop() // now, not when the cancel reaches the pool's goroutine
		}
		a.cancel()
		delete(r.streams, id)
		if !r.opts.Max {
			r.retuneLocked(r.layoutLocked(time.Since(r.started), -1))
		}
	}
}

// layoutLocked lays the rate out anew over the running streams, and the
// stream of endpoint added if it is not among them yet, from base on: the
// streams take the slots of the layout's first cycle in the order of
// their endpoint IDs (see pacer).
func (r *Run) layoutLocked(base time.Duration, added int) map[int]pacer {
	ids := slices.Sorted(maps.Keys(r.streams))
	if _, ok := r.streams[added]; !ok && added >= 0 {
		ids = append(ids, added)
		slices.Sort(ids)
	}
	return layout(ids, base, r.opts.Rate, r.opts.PaceGrain)
}

// retuneLocked hands every open-model stream its pacer in the layout ps.
// A request that was due but not sent yet is due again in the new layout.
func (r *Run) retuneLocked(ps map[int]pacer) {
	for id, a := range r.streams {
		if p, ok := ps[id]; ok && a.pool != nil {
			a.pool.retune(p)
		}
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

// startLocked launches the stream s, paced by p in the open model.
func (r *Run) startLocked(s *stream, p pacer) {
	s.idPrefix = "pinprobe-" + r.runID + "-" + strconv.Itoa(s.ep.ID) + "-"
	if st, ok := r.states[s.ep.ID]; ok {
		s.state = st // the endpoint is back: its quota and numbering go on
	}
	r.states[s.ep.ID] = s.state
	a := &active{s: s}
	r.streams[s.ep.ID] = a
	if r.opts.Max {
		ctx, cancel := context.WithCancel(r.sendCtx)
		a.cancel = cancel
		r.wg.Go(func() { r.closedModel(ctx, s) })
		return
	}
	// The open model's own schedule ends at Duration: the deadline of
	// sendCtx must not cancel a request that was due before it, only one
	// that could not be sent within lateGrace of the end.
	ctx, cancel := context.WithCancel(r.lateCtx)
	a.cancel = cancel
	a.pool = r.newPool(s, p)
	r.pools = append(r.pools, a.pool)
	r.wg.Go(func() { a.pool.run(ctx) })
}

// closedModel runs Concurrency workers that send back to back until ctx
// ends or the budget is spent.
func (r *Run) closedModel(ctx context.Context, s *stream) {
	var workers sync.WaitGroup
	for range r.opts.Concurrency {
		workers.Go(func() {
			snd := s.newSender(s, r.reqCtx)
			box := r.newRequestBox(s)
			defer box.close()
			defer snd.close()
			for ctx.Err() == nil && r.take() && s.state.begin() {
				r.sent.Add(1)
				res := s.finish(snd.do(time.Now()))
				box.add(&res)
				if res.Class == ClassClient {
					// Out of descriptors or ports: trying again at once
					// only spins, and slows the requests that do go out.
					t := time.NewTimer(clientPause)
					select {
					case <-ctx.Done():
					case <-t.C:
					}
					t.Stop()
				}
			}
		})
	}
	workers.Wait()
}

// clientPause is how long a closed-model worker waits after a request this
// machine could not send (ClassClient) before its next one.
const clientPause = 50 * time.Millisecond

// lateGrace is how late after Duration a request due before it may still
// be sent: a scheduler woken late near the end still sends what fell due,
// but a client too slow to keep up does not send on past the run's end.
const lateGrace = 250 * time.Millisecond
