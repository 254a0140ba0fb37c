package session

import (
	"context"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// WatchSink receives what a watch sees, all on the watch's one goroutine,
// so it needs no lock for what only these calls touch.
type WatchSink interface {
	// Started: ep is probed from at on (at the start, or DNS added its
	// address); an endpoint may start again after it stopped.
	Started(ep *probe.Endpoint, at time.Time)
	// Stopped: DNS no longer gives ep's address; its stream stopped at at.
	Stopped(ep *probe.Endpoint, at time.Time)
	// Answers is every host's DNS after a look: its current addresses,
	// and the changes this look made (Changes holds only those; the watch
	// keeps no history, so its memory does not grow with time).
	Answers(dns []report.DNS, at time.Time)
	// Results are requests that finished, as the engine hands them over.
	Results(rs []probe.Result)
	// Tick comes every second, results or not, for what ages with time.
	Tick(at time.Time)
}

// Watch drives the load until ctx ends (or the engine's Duration, when
// set), following DNS every ReResolve, and streams what it sees to sink
// and, when win is not nil, to its windows' reports (the last one ended
// when the watch does). When ctx ends,
// sending stops and the requests in flight are waited for (each bounded by
// its timeout), as in Run; Config.Abandon cuts that wait short.
func (s *Session) Watch(ctx context.Context, sink WatchSink, win *Windows) error {
	cfg := s.cfg
	// The engine stops on its own at Duration; the watch at ctx.
	run, changes, stop, err := s.start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	now := time.Now()
	if win != nil {
		win.begin(run.ID(), now, s.Endpoints)
		sink = both{sink, win}
		defer func() { win.finish(time.Now(), false) }()
	}
	for _, ep := range s.Endpoints {
		sink.Started(ep, now)
	}
	sink.Answers(s.DNS, now)
	rep := &report.Report{DNS: s.DNS}
	f := &dnsFollower{run: run, rep: rep, eps: s.Endpoints, targets: cfg.Targets, say: cfg.Log, silent: map[string]bool{}}
	f.agg = watchBook{f: f, sink: sink}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	ready := run.Ready()
	abandon := cfg.Abandon
	for ready != nil {
		select {
		case _, ok := <-ready:
			sink.Results(run.Take())
			if !ok {
				ready = nil
			}
		case <-abandon:
			sink.Results(run.Abandon())
			ready = nil
		case u := <-changes:
			f.apply(u)
			sink.Answers(rep.DNS, time.Now())
			for i := range rep.DNS {
				rep.DNS[i].Changes = rep.DNS[i].Changes[:0]
			}
		case at := <-tick.C:
			sink.Results(run.Take())
			sink.Tick(at)
		}
	}
	return nil
}

// watchBook tells a watch's sink of the endpoints DNS adds and removes.
type watchBook struct {
	f    *dnsFollower
	sink WatchSink
}

func (b watchBook) AddEndpoint(*probe.Endpoint) {}

func (b watchBook) MarkAdded(id int, at time.Time) { b.sink.Started(b.f.eps[id], at) }

func (b watchBook) MarkRemoved(id int, at time.Time) { b.sink.Stopped(b.f.eps[id], at) }

// both hands what a watch sees to its sink and to its windows.
type both struct {
	sink WatchSink
	win  *Windows
}

func (b both) Started(ep *probe.Endpoint, at time.Time) {
	b.sink.Started(ep, at)
	b.win.started(ep, at)
}

func (b both) Stopped(ep *probe.Endpoint, at time.Time) {
	b.sink.Stopped(ep, at)
	b.win.stopped(ep, at)
}

func (b both) Answers(dns []report.DNS, at time.Time) {
	b.sink.Answers(dns, at)
	b.win.answers(dns)
}

func (b both) Results(rs []probe.Result) {
	b.sink.Results(rs)
	b.win.results(rs)
}

func (b both) Tick(at time.Time) {
	b.sink.Tick(at)
	b.win.tick(at)
}
