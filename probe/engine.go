package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	mrand "math/rand/v2"
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
}

// cpuGauge reports whether the machine has CPU to spare (see cpuSampler).
type cpuGauge interface {
	spareCPU(now time.Time) bool
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
	results  chan Result
	runCtx   context.Context    // ends when ctx does or the Requests budget is spent
	stop     context.CancelFunc // ends runCtx
	sendCtx  context.Context    // runCtx bounded by Duration
	stopSend context.CancelFunc
	lateCtx  context.Context // runCtx bounded by Duration + lateGrace: the open model's streams
	stopLate context.CancelFunc
	reqCtx   context.Context // requests in flight: not cancelled when sending stops
	issued   atomic.Int64    // reserved from the --requests budget
	sent     atomic.Int64    // requests started
	wg       sync.WaitGroup

	mu        sync.Mutex
	closed    bool // sending has ended: no stream may be added
	streams   map[int]*active
	states    map[int]*epState // by endpoint ID, kept when a stream stops
	started   time.Time
	sendEnded time.Time
}

// active is one endpoint's running stream.
type active struct {
	s      *stream
	cancel context.CancelFunc
	next   atomic.Pointer[pacer] // open model: the stream's pacer in a new layout
	retune chan struct{}         // 1-buffered: next was set
}

// retuned returns the stream's pacer in the layout it was handed, or p if
// it has taken it already.
func (a *active) retuned(p pacer) pacer {
	if np := a.next.Swap(nil); np != nil {
		return *np
	}
	return p
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
		results: make(chan Result, 1024),
		reqCtx:  context.WithoutCancel(ctx),
		streams: map[int]*active{},
		states:  map[int]*epState{},
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
			p = startPacer(i, len(streams), o.Rate)
		}
		r.startLocked(s, p)
	}
	r.mu.Unlock()
	go func() {
		// An open-model stream stops once its next request is due at or
		// after Duration; the run lasts the whole Duration all the same
		// (sendCtx), so rates are computed over the planned window.
		r.wg.Wait()
		r.stopSend()
		r.stopLate()
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

// Remove stops sending to endpoint id; its requests in flight still report.
// The total rate is split again over the streams left.
func (r *Run) Remove(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.streams[id]; ok {
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
	return layout(ids, base, r.opts.Rate)
}

// retuneLocked hands every open-model stream its pacer in the layout ps.
// A request that was due but not sent yet is due again in the new layout.
func (r *Run) retuneLocked(ps map[int]pacer) {
	for id, a := range r.streams {
		p, ok := ps[id]
		if !ok {
			continue
		}
		a.next.Store(&p)
		select {
		case a.retune <- struct{}{}:
		default: // one is pending already
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
	a := &active{s: s, retune: make(chan struct{}, 1)}
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
	r.wg.Go(func() { r.schedule(ctx, a, p) })
}

// closedModel runs Concurrency workers that send back to back until ctx
// ends or the budget is spent.
func (r *Run) closedModel(ctx context.Context, s *stream) {
	var workers sync.WaitGroup
	for range r.opts.Concurrency {
		workers.Go(func() {
			snd := s.newSender(s, r.reqCtx)
			defer snd.close()
			for ctx.Err() == nil && r.take() {
				r.sent.Add(1)
				res := s.finish(snd.do())
				r.results <- res
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

// dropFlush is how often a stream that drops reports its drops.
const dropFlush = 100 * time.Millisecond

// Worker growth. An endpoint starts up to warmWorkers(rate) workers as
// requests fall due and none is idle. Past them, a request due while every
// worker is busy is owed to the next worker that finishes, and a new worker
// is started only once some request has been in flight for spawnAge: a
// backend that is slow or hangs gets the workers its planned requests need
// (up to Concurrency), while a client on a machine out of CPU does not open
// thousands of connections that would only make it slower (cpuSampler).
const (
	spawnAge = 20 * time.Millisecond
	// BusyWorkers is how many workers an endpoint may grow to for stuck
	// requests while the machine has no CPU to spare: a slow backend at a
	// modest rate still gets its planned requests (100 req/s of 300 ms
	// answers need 30), while a client that is itself out of CPU at tens
	// of thousands of requests/s does not open thousands of connections.
	BusyWorkers = 64
	// warmLatency is the latency the warm workers cover at the rate.
	warmLatency = 5 * time.Millisecond
)

// warmWorkers is how many workers an endpoint sending perEndpointRate
// requests/s starts without waiting: enough for warmLatency, at least 8
// (and so at least Rotation, unless limit is lower).
func warmWorkers(perEndpointRate float64, limit int) int {
	return min(limit, max(8, Rotation, int(math.Ceil(perEndpointRate*warmLatency.Seconds()))))
}

// Rotation is how many connections an endpoint's requests are handed round
// in turn, in the open model, when Concurrency allows: its first Rotation
// requests each start a worker (and so a connection), and from then on each
// request goes to the one of the Rotation most recently idle workers that
// has been idle the longest. So even at a low rate an endpoint keeps Rotation
// connections open at the same moment, its requests interleaved over them:
// requests sent at one moment on different connections are what tells a
// failing instance behind a layer-4 balancer (which keeps each connection on
// one instance) from a failing moment (an outage window, a flapping
// backend), which a single connection at a time would show alike. Workers
// added past them for a slow backend stay idle while these carry the load.
const Rotation = 4

// schedule paces one endpoint's open-model stream and hands each request
// that falls due to a new worker until the endpoint has Rotation of them (or
// Concurrency, if fewer), then to an idle worker in turn (see idlePool.wake),
// or to a new one (see warmWorkers and spawnAge) while the endpoint has
// fewer than Concurrency. A request due while Concurrency workers are busy
// is dropped and counted, never queued: the send schedule does not wait for
// a slow backend. A scheduler that wakes
// late sends what fell due meanwhile at once, so every request of the plan
// is sent or counted as dropped, unless the client falls more than
// lateGrace behind at the end. One that did not run at all for a while
// (stalled: the process was stopped) does not: the requests due meanwhile
// are counted as missed, in one Result that says when and for how long,
// and the schedule goes on from the first request due after it.
func (r *Run) schedule(ctx context.Context, a *active, p pacer) {
	s := a.s
	var idle idlePool
	var workers sync.WaitGroup
	var busy []*atomic.Int64 // each worker's request start (UnixNano), 0 when idle
	spawned, dropped := 0, 0
	// The first requests start the workers they rotate over; rotation <=
	// warmWorkers, so mayGrow would allow each of them.
	rotation := min(Rotation, r.opts.Concurrency)
	lastFlush := time.Now()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	// lag is how far behind the schedule the scheduler was at its last
	// look; 0 once it slept until a request fell due.
	var lag time.Duration
	// look looks at the next request (see pacer.look): false when the
	// scheduler had stalled and skipped the requests due meanwhile, which
	// it reports in one Result.
	look := func() bool {
		now := time.Now()
		from := r.started.Add(p.next())
		var missed int64
		if lag, missed = p.look(now.Sub(r.started), lag, r.opts.Duration); missed > 0 {
			r.results <- Result{Endpoint: s.ep.ID, Start: from, Missed: int(missed), Paused: now.Sub(from)}
		}
		return missed == 0
	}
	// ended counts, when the run's planned end passed while the scheduler
	// was stalled, the requests it did not send before it.
	ended := func() {
		if r.lateCtx.Err() == context.DeadlineExceeded {
			look()
		}
	}
	spawn := func() {
		spawned++
		since := new(atomic.Int64)
		busy = append(busy, since)
		workers.Go(func() { r.work(s, &idle, since) })
	}
	// mayGrow reports whether one more worker is justified: the endpoint
	// has fewer than its warm workers, or more of its requests have been
	// in flight for spawnAge than the workers added past the warm ones (so
	// each stuck request earns a replacement, and a hiccup of the client
	// earns a few, not thousands). Past BusyWorkers, only while the machine
	// has CPU to spare: then the backend, not the client, is what holds the
	// workers.
	warm := func() int { return warmWorkers(r.opts.Rate/float64(max(p.share, 1)), r.opts.Concurrency) }
	mayGrow := func(now time.Time) bool {
		w := warm()
		switch {
		case spawned >= r.opts.Concurrency:
			return false
		case spawned < w:
			return true
		case spawned >= max(w, BusyWorkers) && !r.opts.gauge().spareCPU(now):
			return false
		}
		limit, stuck := now.Add(-spawnAge).UnixNano(), 0
		for _, b := range busy {
			if t := b.Load(); t != 0 && t < limit {
				stuck++
			}
		}
		return spawned-w < 2*stuck
	}
	defer func() {
		timer.Stop()
		// What is still owed is dropped: no worker came free for it.
		dropped += int(idle.close())
		workers.Wait()
		if dropped > 0 {
			r.results <- Result{Endpoint: s.ep.ID, Start: time.Now(), Dropped: dropped}
		}
	}()
	for {
		select {
		case <-a.retune:
			p = a.retuned(p)
		default:
		}
		due := p.next()
		if r.opts.Duration > 0 && due >= r.opts.Duration {
			return
		}
		wait := time.Until(r.started.Add(due))
		if owed := idle.owing(); owed > 0 && spawned < r.opts.Concurrency {
			// Look again for stuck requests before the next one is due.
			now, grew := time.Now(), false
			for idle.owing() > 0 && mayGrow(now) && idle.takeOwed() {
				spawn()
				grew = true
			}
			if grew {
				continue
			}
			wait = min(wait, spawnAge/4)
		}
		if wait > 0 {
			lag = 0
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				ended()
				return
			case <-a.retune:
				timer.Stop()
				p = a.retuned(p)
				continue
			case <-timer.C:
			}
			if time.Until(r.started.Add(due)) > 0 {
				continue // woken to look at the owed requests
			}
		} else if ctx.Err() != nil {
			ended()
			return
		}
		if !look() {
			continue
		}
		p.k++
		switch {
		case spawned < rotation:
			spawn()
		case idle.wake():
		case mayGrow(time.Now()):
			spawn()
		case spawned < r.opts.Concurrency:
			idle.owe()
		default:
			dropped++
			if now := time.Now(); now.Sub(lastFlush) >= dropFlush {
				r.results <- Result{Endpoint: s.ep.ID, Start: now, Dropped: dropped}
				dropped, lastFlush = 0, now
			}
		}
	}
}

// work is one open-model worker: it sends the request it was started for,
// then one each time it is woken, until the stream ends.
func (r *Run) work(s *stream, idle *idlePool, busySince *atomic.Int64) {
	snd := s.newSender(s, r.reqCtx)
	defer snd.close()
	wake := idle.newIdler()
	for {
		if r.take() {
			r.sent.Add(1)
			busySince.Store(time.Now().UnixNano())
			res := s.finish(snd.do())
			busySince.Store(0)
			r.results <- res
		}
		if !idle.wait(wake) {
			return
		}
	}
}

// idlePool holds an endpoint's idle workers, the most recently idle on top.
// The next request goes to one of the Rotation top workers, so those
// Rotation workers (and connections) take turns and carry the load while
// any others, added for a slow backend, stay idle below them. They take
// turns in rounds: in each round every one of them sends once, in an order
// drawn at random, so that no server that hands requests round its backends
// in turn (nginx's upstream round robin, every fourth request to the same
// backend) sees them line up with pinprobe's connections. A channel (first
// in, first out) would hand requests round every idle worker, the extra
// ones too, spreading the requests over every connection the endpoint ever
// needed.
type idlePool struct {
	mu     sync.Mutex
	idle   []*idler // the idle workers
	round  uint32   // the current round of turns
	rng    *mrand.Rand
	owed   int64 // requests due while every worker was busy, for the next one free
	closed bool
}

// owe records a request that fell due while every worker was busy: the
// next worker to finish sends it.
func (p *idlePool) owe() {
	p.mu.Lock()
	p.owed++
	p.mu.Unlock()
}

// owing returns how many requests are owed.
func (p *idlePool) owing() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.owed
}

// takeOwed takes one owed request for a new worker; false when none is left.
func (p *idlePool) takeOwed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.owed == 0 {
		return false
	}
	p.owed--
	return true
}

// idler is one worker as the pool knows it: its wake channel, and the
// round in which it last had its turn.
type idler struct {
	ch    chan struct{}
	round uint32
}

// newIdler returns a worker's place in the pool; its first request, sent
// before it ever waits, is its turn of the current round.
func (p *idlePool) newIdler() *idler {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &idler{ch: make(chan struct{}, 1), round: p.round}
}

// wake hands a request to one of the Rotation most recently idle workers
// that has not had its turn this round, drawn at random; when each of them
// has, a new round starts. false when none is idle. The workers above the
// one woken move down one place, keeping their order (at most Rotation-1
// moves, no allocation).
func (p *idlePool) wake() bool {
	p.mu.Lock()
	n := len(p.idle)
	if n == 0 {
		p.mu.Unlock()
		return false
	}
	lo := max(n-Rotation, 0)
	waiting := 0
	for _, w := range p.idle[lo:] {
		if w.round != p.round {
			waiting++
		}
	}
	if waiting == 0 {
		p.round++
		waiting = n - lo
	}
	if p.rng == nil {
		p.rng = mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), uint64(n)))
	}
	k := p.rng.IntN(waiting)
	i := lo
	for ; ; i++ {
		if p.idle[i].round != p.round {
			if k == 0 {
				break
			}
			k--
		}
	}
	w := p.idle[i]
	w.round = p.round
	copy(p.idle[i:], p.idle[i+1:])
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	p.mu.Unlock()
	w.ch <- struct{}{} // 1-buffered, and this worker was idle: never blocks
	return true
}

// wait makes the worker w idle until it is woken
// (true) or the stream ends (false).
func (p *idlePool) wait(w *idler) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	if p.owed > 0 { // a request is waiting for this worker: no need to sleep
		p.owed--
		p.mu.Unlock()
		return true
	}
	p.idle = append(p.idle, w)
	p.mu.Unlock()
	_, ok := <-w.ch
	return ok
}

// close ends the stream's workers: the idle ones now, the busy ones when
// they finish.
// It returns the requests still owed, which no worker came free for.
func (p *idlePool) close() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, w := range p.idle {
		close(w.ch)
	}
	p.idle = nil
	owed := p.owed
	p.owed = 0
	return owed
}
