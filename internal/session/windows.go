package session

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// Windows counts a watch's results window by window, each into a report
// made and judged as a run's: the live page reads the window in progress
// (Current) and the last one finished (Last), and each finished one goes
// to done, on the watch's goroutine.
type Windows struct {
	s     *Session
	every time.Duration
	done  func(*report.Report)

	mu    sync.Mutex // guards what follows: Current and Last read it
	runID string
	since time.Time         // when the watch began
	eps   []*probe.Endpoint // the watch's endpoints, by engine ID
	live  []bool
	dns   []report.DNS // the latest answers, with the window's changes, looks and misses
	// seen are the watch's looks and missed looks of each host so far, to
	// count the window's own.
	seen []dnsSeen
	cur  *window
	due  time.Time // when the window in progress ends
	last []byte    // the last finished window's report, as JSON
	// snap is the window in progress as Current last made it, at snapAt.
	snap   []byte
	snapAt time.Time
}

// maxWindowChanges is how many DNS changes of a host a window keeps (the
// latest): a window of a DNS that changes at every look stays bounded.
const maxWindowChanges = 256

// window is one window's report in the making.
type window struct {
	start time.Time
	agg   *collect.Aggregator
	local map[int]int // engine endpoint ID -> the window's
	eps   []*probe.Endpoint
}

// Windows is the windows of the watch s is about to run, every long;
// done receives each window's report once it ends (nil: none).
func (s *Session) Windows(every time.Duration, done func(*report.Report)) *Windows {
	if done == nil {
		done = func(*report.Report) {}
	}
	return &Windows{s: s, every: every, done: done}
}

// Every is the windows' length.
func (w *Windows) Every() time.Duration { return w.every }

// Since is when the watch began (zero before).
func (w *Windows) Since() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.since
}

// begin opens the first window, at the watch's start, of its first
// endpoints eps.
func (w *Windows) begin(runID string, at time.Time, eps []*probe.Endpoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runID, w.since, w.due = runID, at, at.Add(w.every)
	for _, ep := range eps {
		w.grow(ep.ID)
		w.eps[ep.ID], w.live[ep.ID] = ep, true
	}
	w.open(at)
}

// grow makes room for endpoint id.
func (w *Windows) grow(id int) {
	for len(w.eps) <= id {
		w.eps, w.live = append(w.eps, nil), append(w.live, false)
	}
}

// open starts a window at at, of every endpoint probed then.
func (w *Windows) open(at time.Time) {
	w.cur = &window{start: at, local: map[int]int{}}
	w.cur.agg = collect.NewAggregator(nil)
	var secrets []string
	for _, t := range w.s.cfg.Targets {
		secrets = append(secrets, probe.Secrets(t)...)
	}
	w.cur.agg.SetSecrets(secrets)
	w.cur.agg.SetGroupBy(w.s.cfg.Engine.GroupBy)
	w.cur.agg.SetTimeline(at, time.Second, true)
	w.cur.agg.TrackIDs() // the run goes on in other windows
	for id, ep := range w.eps {
		if w.live[id] {
			w.cur.add(ep)
		}
	}
	for i := range w.dns {
		w.dns[i].Changes, w.dns[i].Looks, w.dns[i].Missed = []report.DNSChange{}, 0, nil
	}
}

// dnsSeen is what the watch had counted of a host's looks when the
// windows last heard of it.
type dnsSeen struct{ looks, missed int64 }

// add counts ep in the window; its ID there is its place in the window.
func (c *window) add(ep *probe.Endpoint) int {
	if id, ok := c.local[ep.ID]; ok {
		return id
	}
	e := *ep
	e.ID = len(c.eps)
	c.local[ep.ID] = e.ID
	c.eps = append(c.eps, &e)
	c.agg.AddEndpoint(&e)
	return e.ID
}

// started: ep is probed from at: DNS added its address, or gave it back.
func (w *Windows) started(ep *probe.Endpoint, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.grow(ep.ID)
	if w.live[ep.ID] {
		return // one of the first, counted from the window's start
	}
	w.eps[ep.ID], w.live[ep.ID] = ep, true
	w.cur.agg.MarkAdded(w.cur.add(ep), at)
}

// stopped: DNS no longer gives ep's address.
func (w *Windows) stopped(ep *probe.Endpoint, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ep.ID < len(w.live) {
		w.live[ep.ID] = false
	}
	if id, ok := w.cur.local[ep.ID]; ok {
		w.cur.agg.MarkRemoved(id, at)
	}
}

// answers keeps the latest DNS answers, and the window's changes, looks
// and missed looks; dns is the watch's, which counts from its start and is
// changed after the call, so nothing of it is kept but copies.
func (w *Windows) answers(dns []report.DNS) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.dns
	w.dns = make([]report.DNS, len(dns))
	for i, d := range dns {
		var win report.DNS
		if i < len(prev) {
			win = prev[i]
		}
		if i >= len(w.seen) {
			w.seen = append(w.seen, dnsSeen{})
		}
		seen := &w.seen[i]
		d.Addresses = slices.Clone(d.Addresses)
		d.Changes = append(slices.Clone(win.Changes), d.Changes...)
		if len(d.Changes) > maxWindowChanges {
			d.Changes = d.Changes[len(d.Changes)-maxWindowChanges:]
		}
		looks, missed := d.Looks, int64(0)
		if d.Missed != nil {
			missed = d.Missed.Looks
		}
		d.Looks, d.Missed = win.Looks+looks-seen.looks, win.Missed
		if missed > seen.missed { // this look got no answer
			m := report.DNSMissed{First: dns[i].Missed.Last, Last: dns[i].Missed.Last, Error: dns[i].Missed.Error}
			if win.Missed != nil {
				m.First = win.Missed.First
				m.Looks = win.Missed.Looks
			}
			m.Looks += missed - seen.missed
			d.Missed = &m
		}
		*seen = dnsSeen{looks, missed}
		w.dns[i] = d
	}
}

// results counts rs in the window.
func (w *Windows) results(rs []probe.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range rs {
		if r.Endpoint < 0 || r.Endpoint >= len(w.eps) || w.eps[r.Endpoint] == nil {
			continue
		}
		r.Endpoint = w.cur.add(w.eps[r.Endpoint])
		w.cur.agg.Add(r)
	}
}

// tick ends the window when it is due and opens the next. Windows are
// due every Every from the watch's start, however late a tick comes, so
// that a late one neither skips a window nor makes the next ones drift.
func (w *Windows) tick(at time.Time) {
	if w.cur == nil || at.Before(w.due) {
		return
	}
	for !w.due.After(at) {
		w.due = w.due.Add(w.every)
	}
	w.finish(at, true)
}

// finish ends the window in progress at at, hands its report to done and,
// when next, opens the next window.
func (w *Windows) finish(at time.Time, next bool) {
	w.mu.Lock()
	rep := w.report(at)
	var buf bytes.Buffer
	if err := report.JSON(&buf, rep); err == nil {
		w.last = buf.Bytes()
	}
	w.snap = nil
	if next {
		w.open(at)
	}
	w.mu.Unlock()
	w.done(rep)
}

// report is the window in progress, closed at at and judged. The
// aggregator goes on counting: the report holds none of its slices once
// written out, which every caller does under the lock.
func (w *Windows) report(at time.Time) *report.Report {
	rep := new(report.Report)
	*rep = w.s.cfg.Meta
	rep.RunID = w.runID
	rep.Plan = w.s.Plan()
	rep.Plan.DurationS, rep.Plan.Requests = w.every.Seconds(), 0
	rep.DNS = make([]report.DNS, len(w.dns))
	for i, d := range w.dns {
		d.Addresses, d.Changes = slices.Clone(d.Addresses), slices.Clone(d.Changes)
		if d.Missed != nil {
			m := *d.Missed
			d.Missed = &m
		}
		rep.DNS[i] = d
	}
	rep.Part = true // of the watch's run, which goes on in other windows
	rep.StartedAt, rep.EndedAt = report.Time{Time: w.cur.start}, report.Time{Time: at}
	w.cur.agg.Close(rep)
	rep.Verdict = judge.Judge(rep, judge.Once())
	return rep
}

// Current is the report of the window in progress until now, as JSON,
// made at most once a second; nil before the watch began.
func (w *Windows) Current() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil {
		return nil
	}
	if now := time.Now(); w.snap == nil || now.Sub(w.snapAt) >= time.Second {
		var buf bytes.Buffer
		if report.JSON(&buf, w.report(now)) != nil {
			return nil
		}
		w.snap, w.snapAt = buf.Bytes(), now
	}
	return w.snap
}

// Last is the report of the last window that ended, as JSON; nil before
// the first ends.
func (w *Windows) Last() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}
