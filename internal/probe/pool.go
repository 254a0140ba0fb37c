package probe

import (
	"context"
	"math"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// pool is an endpoint's stream in the open model: its schedule (a pacer, k the
// first request not yet taken), its workers and a watch. A worker that comes
// free is dealt the next request, sleeps on its own timer until due and sends
// it, so a request wakes only its worker. At most Rotation workers hold one, the
// others park; each round of Rotation is dealt in a fresh random order, so no
// backend rotation lines up with the connections (a swap only delays a waiting
// worker's request: the lock's holder may reset its timer). When the last
// holder sends, a parked worker is dealt the next request, or the watch starts a
// worker (mayGrow), owes it to the next one free, or drops and counts it.
type pool struct {
	r     *Run
	s     *stream
	conc  int           // most workers (Options.Concurrency)
	rot   int           // workers the requests go round: min(Rotation, conc)
	end   time.Duration // no request is due at or after it, from the run's start; 0 = none
	gauge cpuGauge
	box   *outbox // the pool's own results: drops and pauses

	mu      sync.Mutex
	p       pacer             // the schedule; p.k is the first request not dealt yet
	lag     time.Duration     // how far behind the schedule the last look was (see pacer.look)
	round   int64             // the first request of the round being dealt
	dealt   [Rotation]*worker // the workers waiting for each request of that round; nil: sent, or dealt to none
	held    int               // workers waiting for a request dealt to them
	parked  []*worker         // free workers without a request, the most recently free on top
	owed    []owedRun         // requests due while every worker was busy, oldest first
	all     []*worker         // every worker, for the requests in flight
	stuck   int               // requests in flight for spawnAge or longer, as last counted
	stuckAt time.Time         // when they were counted
	ended   bool              // the stream has stopped: every goroutine of the pool returns
	watch   waiter
	watchAt time.Duration // when the watch's timer is set for, from the run's start; -1 when not set
	// behindAt is when a look last found the client behind its schedule
	// (see behindFor), from the run's start
	behindAt time.Duration
	rng      *mrand.Rand
	workers  sync.WaitGroup
}

// owedRun is a stretch of requests owed to the next workers that come free:
// from to to-1 of the schedule p (a layout that may have been replaced
// since).
type owedRun struct {
	p        pacer
	from, to int64
	// late: the watch that owed them was itself behind the schedule, or
	// a look found the client behind within behindFor (see cpuGauge.late),
	// so the wait is the client's, and they are timed from when they are
	// sent.
	late bool
	// capped: owed with every one of Concurrency's workers busy, which
	// only a grain's burst may be (see Options.PaceGrain): one still owed
	// a grain after it was due is dropped, as it would have been at once
	// without a grain.
	capped bool
}

// waiter is a goroutine of a pool as the others see it: its timer, which
// whoever holds the pool's lock may set, and its kick, which makes it look
// at the pool again at once (the stream ended, or its request was taken
// back).
type waiter struct {
	timer *time.Timer
	kick  chan struct{}
}

func newWaiter() waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return waiter{timer: t, kick: make(chan struct{}, 1)}
}

// wait sleeps until the timer fires or the goroutine is kicked.
func (w *waiter) wait() {
	select {
	case <-w.timer.C:
	case <-w.kick:
	}
}

// wake kicks the goroutine; it never blocks.
func (w *waiter) wake() {
	select {
	case w.kick <- struct{}{}:
	default: // a kick is pending already
	}
}

// worker is one open-model worker: a goroutine, its sender (and so its
// connection) and its outbox.
type worker struct {
	waiter
	pl   *pool
	k    int64         // the request dealt to it, -1 for none
	send time.Duration // due time of an owed request it is to send at once, -1 for none
	// fromDue: that owed request is timed from when it was due
	fromDue bool
	// sleptFor is the request it last slept until due, -1 for none
	sleptFor int64
	parked   bool
	since    atomic.Int64 // when its request in flight started (UnixNano), 0 when it has none
	box      *outbox
}

// newPool returns the pool of stream s, paced by p, stopped when ctx ends.
func (r *Run) newPool(s *stream, p pacer) *pool {
	pl := &pool{
		r:        r,
		s:        s,
		conc:     r.opts.Concurrency,
		rot:      min(Rotation, r.opts.Concurrency),
		end:      r.opts.Duration,
		gauge:    r.opts.gauge(),
		box:      r.newBox(s.ep.ID),
		p:        p,
		watch:    newWaiter(),
		watchAt:  -1,
		behindAt: -behindFor,
		rng:      mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), uint64(s.ep.ID))),
	}
	return pl
}

// run is the pool's own goroutine, the watch: it starts the workers of the
// first Rotation requests, stands in for the workers while every one is
// busy, and once the stream has ended waits for them and counts what was
// still owed as dropped.
func (pl *pool) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, pl.stop)
	defer stop()
	pl.mu.Lock()
	// The first Rotation requests each start a worker, which waits for it.
	at := time.Since(pl.r.started)
	for range pl.rot {
		if pl.exhausted() {
			break
		}
		pl.deal(pl.spawn(), at)
	}
	for !pl.ended && !(pl.exhausted() && len(pl.owed) == 0) {
		pl.guard(time.Now())
		if pl.ended {
			break
		}
		pl.mu.Unlock()
		pl.watch.wait()
		pl.mu.Lock()
	}
	ended := pl.ended
	pl.mu.Unlock()
	if ended && pl.r.lateCtx.Err() == context.DeadlineExceeded {
		// The run's planned end passed while the stream was still at
		// it: what was due before the end and not sent was missed if
		// the process had stalled, or fell behind by more than
		// lateGrace otherwise (and is not counted).
		pl.mu.Lock()
		pl.finalLook(time.Now())
		pl.mu.Unlock()
	}
	pl.workers.Wait()
	pl.mu.Lock()
	// What is still owed is dropped: no worker came free for it.
	n := 0
	for _, o := range pl.owed {
		n += int(o.to - o.from)
	}
	pl.owed = nil
	pl.mu.Unlock()
	if n > 0 {
		pl.box.drop(n)
	}
	pl.box.close()
}

// stop ends the stream: every worker returns once its request in flight
// (if any) has reported, the parked and waiting ones at once.
func (pl *pool) stop() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.endLocked()
}

// endLocked ends the stream and wakes every worker and the watch; pl.mu
// is held.
func (pl *pool) endLocked() {
	pl.ended = true
	for _, w := range pl.all {
		w.wake()
	}
	pl.watch.wake()
}

// abandon ends the stream at once, as stop does, and returns the requests
// it still owed, which are dropped: no worker will send them.
func (pl *pool) abandon() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.endLocked()
	n := 0
	for _, o := range pl.owed {
		n += int(o.to - o.from)
	}
	pl.owed = nil
	return n
}

// exhausted reports whether the schedule has no request left: the next one
// is due at or after the end.
func (pl *pool) exhausted() bool { return pl.end > 0 && pl.p.next() >= pl.end }

// spawn starts a new worker, free; the caller deals it a request or an
// owed one before letting go of the lock.
func (pl *pool) spawn() *worker {
	w := &worker{waiter: newWaiter(), pl: pl, k: -1, send: -1, sleptFor: -1, box: pl.r.newRequestBox(pl.s)}
	pl.all = append(pl.all, w)
	pl.workers.Go(w.run)
	return w
}

// advance moves the schedule past its next request, which has been dealt,
// owed or dropped.
func (pl *pool) advance() {
	pl.p.k++
	if pl.p.k-pl.round >= int64(pl.rot) {
		pl.round = pl.p.k
		clear(pl.dealt[:])
	}
	if pl.exhausted() {
		// Nothing is left to deal: the parked workers and the watch
		// return now, not when the stream's context ends.
		for _, w := range pl.parked {
			w.wake()
		}
		pl.watch.wake()
	}
}

// unpark takes the parked worker w out of the parked ones.
func (pl *pool) unpark(w *worker) {
	if i := slices.Index(pl.parked, w); i >= 0 {
		pl.parked = slices.Delete(pl.parked, i, i+1)
	}
	w.parked = false
}

// newRound makes the schedule's next request the first of a round, after
// a jump of the schedule (a new layout, a pause).
func (pl *pool) newRound() {
	pl.round = pl.p.k
	clear(pl.dealt[:])
}

// deal gives the free worker w the schedule's next request, at (from the
// run's start) now: in the order of the round's shuffle, it may be an
// earlier request of the round that a waiting worker gives up for this
// one (see pool). It sets the timers of both.
func (pl *pool) deal(w *worker, at time.Duration) {
	k := pl.p.k
	pos := int(k - pl.round)
	w.k = k
	if j := pl.rng.IntN(pos + 1); j < pos {
		if h := pl.dealt[j]; h != nil {
			w.k, h.k = h.k, k
			pl.dealt[j], pl.dealt[pos] = w, h
			h.timer.Reset(pl.p.at(k) - at)
		} else {
			pl.dealt[pos] = w
		}
	} else {
		pl.dealt[pos] = w
	}
	pl.held++
	pl.advance()
	w.timer.Reset(pl.p.at(w.k) - at)
	if pl.watchAt >= 0 {
		// A worker is waiting for the next request: the watch is not needed.
		pl.watch.timer.Stop()
		pl.watchAt = -1
	}
}

// next is worker w's wait for its next request: it returns when that is
// due and whether it is timed from then (it was owed: due while every
// worker was busy, see owedRun.late), or false when the stream has ended
// or has nothing left for w.
func (pl *pool) next(w *worker) (due time.Duration, fromDue, ok bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for !pl.ended {
		at := time.Since(pl.r.started)
		if w.send >= 0 {
			due, w.send = w.send, -1
			return due, w.fromDue, true
		}
		if w.parked && pl.exhausted() {
			pl.unpark(w)
			return 0, false, false
		}
		if w.k < 0 && !w.parked {
			// w is free: an owed request first, or the schedule's next,
			// or none while Rotation others wait for theirs.
			if due, fromDue, ok := pl.takeOwed(at); ok {
				return due, fromDue, true
			}
			switch {
			case pl.exhausted():
				return 0, false, false
			case pl.held < pl.rot:
				pl.deal(w, at)
			default:
				w.parked = true
				pl.parked = append(pl.parked, w)
			}
		}
		if w.k >= 0 {
			due := pl.p.at(w.k)
			if due <= at {
				if w.sleptFor == w.k && pl.gauge.late(at-due) {
					// Its timer woke it that late: the client is behind.
					pl.behindAt = at
				}
				w.sleptFor = -1
				if pl.fire(w, at) {
					return due, false, true
				}
				continue // a pause: the request was skipped
			}
		}
		w.sleptFor = w.k
		pl.mu.Unlock()
		w.wait()
		pl.mu.Lock()
	}
	return 0, false, false
}

// fire is worker w's look at its request, due now (at): false when the
// process had stalled meanwhile (see pacer.look) and the requests due in
// the stall were skipped, w's among them. Otherwise w is busy from now on,
// and when no other worker is waiting for a request, the next one is dealt
// to a parked worker, or the watch is set for it.
func (pl *pool) fire(w *worker, at time.Duration) bool {
	due := pl.p.at(w.k)
	if lag := at - due; stalled(lag, pl.lag) {
		pl.skipPause(at)
		return false
	} else {
		pl.lag = lag
	}
	if i := w.k - pl.round; i >= 0 && i < int64(pl.rot) {
		pl.dealt[i] = nil
	}
	w.k = -1
	pl.held--
	if pl.held > 0 || pl.exhausted() {
		return true
	}
	if n := len(pl.parked); n > 0 {
		p := pl.parked[n-1]
		pl.parked[n-1] = nil
		pl.parked = pl.parked[:n-1]
		p.parked = false
		pl.deal(p, at)
		return true
	}
	pl.setWatch(pl.p.next(), at)
	return true
}

// setWatch sets the watch's timer for wake (from the run's start).
func (pl *pool) setWatch(wake, at time.Duration) {
	if pl.watchAt == wake {
		return
	}
	pl.watchAt = wake
	pl.watch.timer.Reset(wake - at)
}

// takeOwed takes the oldest owed request, if any, at (from the run's
// start) at, and returns when it was due and whether it is timed from then
// (see owedRun.late). Capped ones a grain or more past due are dropped
// first.
func (pl *pool) takeOwed(at time.Duration) (due time.Duration, fromDue, ok bool) {
	for len(pl.owed) > 0 {
		o := &pl.owed[0]
		due, fromDue = o.p.at(o.from), !o.late
		expired := o.capped && at-due >= o.p.grain
		if o.from++; o.from == o.to {
			pl.owed[0] = owedRun{}
			pl.owed = pl.owed[1:]
		}
		if !expired {
			return due, fromDue, true
		}
		pl.box.drop(1)
	}
	return 0, false, false
}

// owe owes the schedule's next request to the next worker that comes
// free; late says the watch was behind the schedule (see owedRun.late),
// capped that every worker Concurrency allows is busy (owedRun.capped).
func (pl *pool) owe(late, capped bool) {
	if n := len(pl.owed); n > 0 {
		if o := &pl.owed[n-1]; o.p.sameLayout(&pl.p) && o.to == pl.p.k && o.late == late && o.capped == capped {
			o.to++
			pl.advance()
			return
		}
	}
	if cap(pl.owed) > len(pl.owed) {
		// Reuse the room the taken ones left at the front.
		pl.owed = append(pl.owed, owedRun{})
	} else {
		pl.owed = append(append(make([]owedRun, 0, 4), pl.owed...), owedRun{})
	}
	pl.owed[len(pl.owed)-1] = owedRun{p: pl.p, from: pl.p.k, to: pl.p.k + 1, late: late, capped: capped}
	pl.advance()
}

// guard is the watch's look, at now: while no worker is free to take the
// next request, it decides for each one due (a new worker, owed or
// dropped), starts workers for owed requests when their stuck ones justify
// it, and sets the watch's timer for the next look.
func (pl *pool) guard(now time.Time) {
	late := time.Duration(0) // how late the watch woke
	at := now.Sub(pl.r.started)
	if pl.watchAt >= 0 && at > pl.watchAt {
		late = at - pl.watchAt
		if pl.gauge.late(late) {
			pl.behindAt = at
		}
	}
	pl.watchAt = -1
	for !pl.ended {
		if pl.held > 0 || len(pl.parked) > 0 {
			return // a worker is free for the next request
		}
		// Every worker is busy.
		for len(pl.owed) > 0 && pl.mayGrow(now, late) {
			w := pl.spawn()
			w.send, w.fromDue, _ = pl.takeOwed(at)
		}
		recheck := time.Duration(-1)
		if len(pl.owed) > 0 && len(pl.all) < pl.conc {
			recheck = at + spawnAge/4 // look again for stuck requests
		}
		if pl.exhausted() {
			if recheck >= 0 {
				pl.setWatch(recheck, at)
			}
			return
		}
		due := pl.p.next()
		if due > at {
			if recheck >= 0 {
				due = min(due, recheck)
			}
			pl.setWatch(due, at)
			return
		}
		// The next request is due, and no worker is free for it.
		lag := at - due
		if stalled(lag, pl.lag) {
			pl.skipPause(at)
			continue
		}
		pl.lag = lag
		switch {
		case len(pl.owed) == 0 && pl.mayGrow(now, lag):
			pl.deal(pl.spawn(), at)
		case len(pl.all) < pl.conc:
			pl.owe(pl.gauge.late(lag) || at-pl.behindAt < behindFor, false)
		case lag < pl.p.grain:
			// A grain's burst past Concurrency: the requests wait for a
			// worker to come free within the grain (timed from when they
			// were due), as bombardier's token bucket lets them.
			pl.owe(false, true)
		default:
			pl.advance()
			pl.box.drop(1)
		}
	}
}

// mayGrow reports whether, with every worker busy, one more is justified: fewer
// than Rotation or lateWorkers of its warm workers; fewer than its warm workers
// while the client keeps up (behindFor: a client short of CPU gains nothing from
// connections); or more requests in flight past spawnAge than workers added past
// the warm ones (a hiccup earns a few, not thousands). Past BusyWorkers only
// while the machine has CPU to spare and the client keeps up: then the backend
// holds the workers.
func (pl *pool) mayGrow(now time.Time, late time.Duration) bool {
	n := len(pl.all)
	warm := warmWorkers(pl.r.opts.Rate/float64(max(pl.p.share, 1)), pl.p.grain, pl.conc)
	behind := pl.gauge.late(late) || now.Sub(pl.r.started)-pl.behindAt < behindFor
	switch {
	case n >= pl.conc:
		return false
	case n < min(warm, lateWorkers):
		// Even a client behind its schedule needs connections enough
		// for the server's queue on a busy machine.
		return true
	case n < warm:
		return !behind
	case n >= max(warm, BusyWorkers) && (behind || !pl.gauge.spareCPU(now)):
		return false
	}
	if now.Sub(pl.stuckAt) >= spawnAge/4 {
		limit, stuck := now.Add(-spawnAge).UnixNano(), 0
		for _, w := range pl.all {
			if t := w.since.Load(); t != 0 && t < limit {
				stuck++
			}
		}
		pl.stuck, pl.stuckAt = stuck, now
	}
	return n-warm < 2*pl.stuck
}

// skipPause skips, at (from the run's start) at, the requests due before
// it that were not sent because the process had stalled: those dealt to
// workers and not sent yet, and those not dealt. They are counted in one
// Result that says when and for how long, and the schedule goes on from the
// first request due at or after at.
func (pl *pool) skipPause(at time.Duration) {
	upTo := at
	if pl.end > 0 {
		upTo = min(upTo, pl.end)
	}
	from, missed := pl.p.next(), int64(0)
	for _, w := range pl.all {
		if w.k < 0 {
			continue
		}
		if d := pl.p.at(w.k); d < upTo {
			from = min(from, d)
			w.k = -1
			pl.held--
			missed++
			w.wake()
		}
	}
	missed += pl.p.skip(at, pl.end)
	pl.newRound()
	pl.lag = 0
	if missed > 0 {
		pl.box.add(&Result{Endpoint: pl.s.ep.ID, Start: pl.r.started.Add(from), Missed: int(missed), Paused: at - from})
	}
	if pl.held == 0 && len(pl.parked) == 0 {
		pl.watch.wake()
	}
}

// finalLook is the look at the run's planned end, passed (lateGrace ago)
// with requests due before it not sent: when the process had stalled,
// they are counted as missed (see skipPause).
func (pl *pool) finalLook(now time.Time) {
	at := now.Sub(pl.r.started)
	first := pl.p.next()
	for _, w := range pl.all {
		if w.k >= 0 {
			first = min(first, pl.p.at(w.k))
		}
	}
	if pl.end > 0 && first >= pl.end {
		return
	}
	if stalled(at-first, pl.lag) {
		pl.skipPause(at)
	}
}

// retune lays the stream out anew (a new layout of the rate, p, whose first
// request is due from now on): the requests dealt and not sent yet are
// taken back from their workers and dealt again in the new layout, as
// every later one; those owed stay owed.
func (pl *pool) retune(p pacer) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.p = p
	for _, w := range pl.all {
		if w.k >= 0 {
			w.k = -1
			w.wake()
		}
	}
	pl.held = 0
	pl.newRound()
	pl.watch.wake()
}

// run is the worker's goroutine: it sends each request it is due to send
// and puts its result in its outbox, until the stream ends.
func (w *worker) run() {
	pl := w.pl
	r, s := pl.r, pl.s
	snd := s.newSender(s, r.reqCtx)
	defer w.box.close()
	defer snd.close()
	for {
		due, fromDue, ok := pl.next(w)
		if !ok || !r.take() || !s.state.begin() {
			return
		}
		r.sent.Add(1)
		now := time.Now()
		w.since.Store(now.UnixNano())
		// A request that waited for a worker is timed from when it was
		// due: the wait is the backend's doing (no coordinated omission).
		// One its worker held is timed from now: how late the worker's
		// timer woke it (up to the runtime's poller resolution, 1 ms) is
		// the client's, not the server's; so is the wait of one owed
		// while the client itself was behind (owedRun.late).
		start := now
		if fromDue {
			start = r.started.Add(due)
		}
		res := s.finish(snd.do(start))
		w.since.Store(0)
		w.box.add(&res)
	}
}

// Worker growth. An endpoint starts up to warmWorkers(rate) workers as
// requests fall due and none is free, while the client keeps up with its
// schedule. Past them, a request due while every worker is busy is owed to
// the next worker that comes free, and a new worker is started only once
// some request has been in flight for spawnAge: a backend that is slow or
// hangs gets the workers its planned requests need (up to Concurrency),
// while a client short of CPU does not open thousands of connections that
// would only make it slower (cpuGauge).
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
	// lateLimit is how late the watch may look at a request that fell due
	// while every worker was busy, or a worker's timer wake it, and the
	// client still count as keeping up: later, it is itself behind its
	// schedule (short of CPU, or starting too many connections at once),
	// and more workers would only slow it further. The runtime's poller
	// sleeps in whole milliseconds, so a timer of an idle process may
	// wake up to 1 ms late on its own.
	lateLimit = 2 * time.Millisecond
	// behindFor is how long after a look found the client behind (a
	// worker's timer or the watch's woke more than lateLimit late) an
	// endpoint grows no further than lateWorkers: a client short of CPU
	// sees its requests in flight for long, and more workers for them only
	// slow it further (at 10,000 req/s on a busy machine, 500 of them).
	behindFor = 100 * time.Millisecond
	// lateWorkers is how many workers an endpoint may start as requests
	// fall due while all are busy, up to its warm ones, even while the
	// client is behind its schedule: on a machine short of CPU the server
	// answers late too, and an endpoint held to a handful of connections
	// then sends far less than the rate (at 50,000 req/s on a busy 2-core
	// machine, half of what bombardier's 50 connections sent).
	lateWorkers = 64
)

// warmWorkers is how many workers an endpoint sending perEndpointRate
// requests/s starts without waiting: enough for warmLatency past a grain's
// burst (the requests due together, see Options.PaceGrain), at least 8
// (and so at least Rotation, unless limit is lower).
func warmWorkers(perEndpointRate float64, grain time.Duration, limit int) int {
	return min(limit, max(8, Rotation, int(math.Ceil(perEndpointRate*(warmLatency+grain).Seconds()))))
}

// Rotation is how many connections an endpoint's requests go round in the open
// model, when Concurrency allows (see pool): even at a low rate an endpoint
// keeps Rotation connections open at once, because requests sent at one moment
// on different connections tell a failing instance behind a layer-4 balancer
// from a failing moment, which one connection would show alike.
const Rotation = 4
