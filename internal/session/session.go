// Package session runs one probe from resolution to report: it resolves every
// target, checks each address (preflight), drives the engine, follows DNS and
// collects every result into a *report.Report. It owns the run's policy (Load:
// defaults sized from the planned load; the instance headers; Targets: how each
// request is made) and prints nothing: lines go through Config.Log, the live
// display through Config.Progress. The command, the demo and the tests share it.
package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Config is one probe session.
type Config struct {
	Targets  []*probe.Target
	Resolver *probe.Resolver
	// Engine paces and bounds the run.
	Engine probe.Options
	// Fail says which statuses count as failures.
	Fail report.FailStatus
	// Interval is the timeline's bucket width; with AutoInterval it doubles
	// as needed to keep the timeline short.
	Interval     time.Duration
	AutoInterval bool
	// ReResolve is how often DNS is asked again during the run; 0 = never.
	ReResolve time.Duration
	// UntilVerdict stops sending as soon as the whole verdict is settled
	// (judge.Settle): judged every second at a level that holds over all
	// the looks (judge.LookAlpha), every fault it names proven, every
	// other scope bounded, every address sampled on enough connections.
	UntilVerdict bool
	// GroupBy are the instance headers asked for (--group-by), which
	// Engine.GroupBy holds with the well-known ones: the report's plan
	// names them, so that one no response carried is said.
	GroupBy []string
	// Meta holds the parts of the report the session does not measure:
	// version, command, plan.
	Meta report.Report
	// Log receives one line for the user at a time (no trailing newline).
	Log func(format string, args ...any)
	// Progress, when set, is started once the engine runs and finished
	// before the report is built.
	Progress Progress
	// Abandon, when closed, ends the wait for the requests in flight (a
	// second Ctrl-C): the report is made at once of the results taken, and
	// the requests still in flight are counted as abandoned
	// (report.Stats.Abandoned). nil = the wait is never cut short.
	Abandon <-chan struct{}

	// start starts the engine; nil = probe.Start. Tests run the session's
	// clock (the looks of UntilVerdict) on synthetic results.
	start func(ctx context.Context, eps []*probe.Endpoint, o probe.Options) (engine, error)
}

// engine is what a session drives of a run: a *probe.Run.
type engine interface {
	ID() string
	Options() probe.Options
	Sent() int64
	Sending() (start, end time.Time)
	Ready() <-chan struct{}
	Take() []probe.Result
	Abandon() []probe.Result
	Stop()
	Add(ep *probe.Endpoint) error
	Remove(id int)
}

// startProbe is probe.Start as an engine.
func startProbe(ctx context.Context, eps []*probe.Endpoint, o probe.Options) (engine, error) {
	run, err := probe.Start(ctx, eps, o)
	if err != nil {
		return nil, err
	}
	return run, nil
}

// start starts the engine and, with ReResolve, the looks at DNS, whose
// answers come on changes until stop is called.
func (s *Session) start(ctx context.Context) (run engine, changes <-chan dnsUpdate, stop func(), err error) {
	start := s.cfg.start
	if start == nil {
		start = startProbe
	}
	if run, err = start(ctx, s.Endpoints, s.cfg.Engine); err != nil {
		return nil, nil, nil, err
	}
	followCtx, stop := context.WithCancel(ctx)
	if s.cfg.ReResolve > 0 {
		changes = followDNS(followCtx, s.cfg.Resolver, s.cfg.Targets, s.cfg.ReResolve)
	}
	return run, changes, stop, nil
}

// Progress is a live display of a running session.
type Progress interface {
	Start(ctx context.Context, live *collect.Live, sent func() int64, start time.Time)
	Finish()
}

// ErrNoAddress means no target resolved to any address: nothing can be probed.
var ErrNoAddress = errors.New("no address for any target")

// ErrInterrupted means the context ended before any request was sent.
var ErrInterrupted = errors.New("interrupted before any request was sent")

// Session is a resolved probe, ready to check and run.
type Session struct {
	cfg       Config
	DNS       []report.DNS
	Endpoints []*probe.Endpoint
	// preflight is what Preflight found, for the report.
	preflight []report.PreflightCheck
	// at is when the session started: a report of nothing probed spans
	// from then.
	at time.Time
}

// New resolves every target. It fails with ErrNoAddress when no target has
// an address, returning the session all the same (its DNS says why, and
// NotProbed reports it), and ErrInterrupted when ctx ends first; a target
// that does not resolve while others do is logged and skipped.
func New(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	s := &Session{cfg: cfg, at: time.Now()}
	s.DNS, s.Endpoints = Resolve(ctx, cfg.Resolver, cfg.Targets)
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	for _, d := range s.DNS {
		if d.Error != "" {
			cfg.Log("%s: skipping %s:%d", d.Error, d.Host, d.Port)
		}
	}
	if len(s.Endpoints) == 0 {
		return s, ErrNoAddress
	}
	return s, nil
}

// Config returns the session's configuration, to adjust what depends on
// the endpoints found (concurrency, connection sampling) before Run.
func (s *Session) Config() *Config { return &s.cfg }

// SetProgress sets the live display started by Run.
func (s *Session) SetProgress(p Progress) { s.cfg.Progress = p }

// Preflight checks every endpoint once: TCP connect and, for https, a
// verified TLS handshake. It sends no HTTP request.
func (s *Session) Preflight(ctx context.Context) []probe.Check {
	checks := probe.Preflight(ctx, s.Endpoints, s.cfg.Engine.ConnOptions)
	s.preflight = collect.Preflight(s.Endpoints, checks)
	return checks
}

// PreflightChecks are the rows of the preflight's document (report.Preflight)
// of the checks Preflight made; nil before.
func (s *Session) PreflightChecks() []report.PreflightCheck { return s.preflight }

// Plan is the report's plan of the run the session is configured for.
func (s *Session) Plan() report.Plan { return s.plan(s.cfg.Engine) }

// plan is the report's plan of a run by the options o.
func (s *Session) plan(o probe.Options) report.Plan {
	var only probe.Family
	if s.cfg.Resolver != nil {
		only = s.cfg.Resolver.Only
	}
	p := collect.Plan(o, s.cfg.Fail, only)
	p.GroupBy = s.cfg.GroupBy
	return p
}

// NotProbed is the report of the session when it sends nothing, and why:
// no target has an address, or every endpoint failed its preflight. It
// holds what a run's report holds of its DNS, endpoints, plan and
// preflight, no request, and a verdict that says why.
func (s *Session) NotProbed(why string) *report.Report {
	cfg := s.cfg
	rep := new(report.Report)
	*rep = cfg.Meta
	rep.DNS, rep.Preflight, rep.NotProbed = s.DNS, s.preflight, why
	rep.Plan = s.plan(cfg.Engine)
	agg := collect.NewAggregator(s.Endpoints)
	rep.StartedAt, rep.EndedAt = report.Time{Time: s.at}, report.Time{Time: time.Now()}
	agg.SetTimeline(rep.StartedAt.Time, cfg.Interval, cfg.AutoInterval)
	agg.Close(rep)
	rep.Verdict = judge.Judge(rep, judge.Once())
	return rep
}

// Run drives the load and returns the report of every request sent. When
// ctx ends, sending stops, the requests in flight are waited for (each
// bounded by its timeout) and the report says it was interrupted; when
// Config.Abandon is closed, they are not waited for any more, and counted
// as abandoned.
func (s *Session) Run(ctx context.Context) (*report.Report, error) {
	cfg := s.cfg
	rep, agg := s.newRun()
	run, changes, stop, err := s.start(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	rep.RunID = run.ID()
	rep.Plan = s.plan(run.Options())
	if cfg.Progress != nil {
		cfg.Progress.Start(ctx, agg.Live(), run.Sent, rep.StartedAt.Time)
	}
	w := &dnsFollower{run: run, agg: agg, rep: rep, eps: s.Endpoints, targets: cfg.Targets, say: cfg.Log, silent: map[string]bool{}}
	var looks <-chan time.Time
	maxLooks := 0
	if cfg.UntilVerdict {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		looks = tick.C
		maxLooks = plannedLooks(cfg.Engine)
	}
	look := 0
	// Results come in batches (probe.Run.Take): when the run says some
	// wait, and at each look, which must judge every request finished so
	// far.
	collectAll := func() {
		for _, r := range run.Take() {
			agg.Add(r)
		}
	}
	ready := run.Ready()
	abandon := cfg.Abandon
	for ready != nil {
		select {
		case _, ok := <-ready:
			collectAll()
			if !ok {
				ready = nil
			}
		case <-abandon:
			for _, r := range run.Abandon() {
				agg.Add(r)
			}
			ready = nil
		case u := <-changes:
			w.apply(u)
		case <-looks:
			collectAll()
			look++
			if look >= maxLooks {
				looks = nil // the last look is made at the end, at its own level
			}
			if settled(rep, agg, look, maxLooks) {
				cfg.Log("the verdict is settled after %d requests: stopping (--until-verdict)", rep.Settled.Requests)
				run.Stop()
				looks = nil
			}
		}
	}
	rep.EndedAt = report.Time{Time: time.Now()}
	if _, end := run.Sending(); !end.IsZero() {
		rep.SendS = end.Sub(rep.StartedAt.Time).Seconds()
	}
	if cfg.Progress != nil {
		cfg.Progress.Finish()
	}
	rep.Interrupted = ctx.Err() != nil
	agg.Close(rep)
	// A run judged at every look spends part of its level on them (see
	// judge.LookAlpha); one that stopped early is judged at its look's.
	level := judge.Once()
	if cfg.UntilVerdict {
		level = judge.AtLook(maxLooks, rep.Settled == nil)
	}
	rep.Verdict = judge.Judge(rep, level)
	if cfg.UntilVerdict && rep.Settled == nil && rep.Totals.Requests > 0 {
		cfg.Log("the verdict did not settle before the run ended (--until-verdict): the verdict's notes say what stayed open")
	}
	return rep, nil
}

// newRun is the report a run fills and the aggregator that counts its
// results: the session's metadata, DNS and preflight, the run's secrets
// to scrub, its groups and its timeline from now.
func (s *Session) newRun() (*report.Report, *collect.Aggregator) {
	cfg := s.cfg
	rep := new(report.Report)
	*rep = cfg.Meta
	rep.DNS, rep.Preflight = s.DNS, s.preflight
	agg := collect.NewAggregator(s.Endpoints)
	var secrets []string
	for _, t := range cfg.Targets {
		secrets = append(secrets, probe.Secrets(t)...)
	}
	agg.SetSecrets(secrets)
	agg.SetGroupBy(cfg.Engine.GroupBy)
	rep.StartedAt = report.Time{Time: time.Now()}
	agg.SetTimeline(rep.StartedAt.Time, cfg.Interval, cfg.AutoInterval)
	return rep, agg
}

// settled makes look (of maxLooks) of --until-verdict: it judges every
// request finished so far at the look's level and, when the verdict is
// settled (judge.Settle), records it in rep.Settled and says so.
func settled(rep *report.Report, agg *collect.Aggregator, look, maxLooks int) bool {
	level := judge.AtLook(maxLooks, false)
	sofar := agg.SoFar(rep.Plan)
	st, ok := judge.Settle(sofar, judge.Judge(sofar, level))
	if !ok {
		return false
	}
	st.At, st.Requests = report.Time{Time: time.Now()}, agg.Live().Requests.Load()
	st.Look, st.MaxLooks, st.Alpha = look, maxLooks, level.Alpha
	rep.Settled = &st
	return true
}

// Resolve resolves every target's host:port once, in parallel, and returns
// the DNS records of the report and the endpoints, numbered in order.
func Resolve(ctx context.Context, r *probe.Resolver, targets []*probe.Target) ([]report.DNS, []*probe.Endpoint) {
	keys := hostPorts(targets)
	res := resolveAll(ctx, r, keys)
	byKey := map[hostPort]probe.Resolution{}
	dns := make([]report.DNS, len(keys))
	for i, k := range keys {
		byKey[k] = res[i]
		d := report.DNS{Host: res[i].Host, Port: res[i].Port, Source: res[i].Source, Addresses: []string{}, Changes: []report.DNSChange{}}
		for _, a := range res[i].Addrs {
			d.Addresses = append(d.Addresses, a.String())
		}
		if res[i].Err != nil {
			d.Error = res[i].Err.Error()
		}
		dns[i] = d
	}
	var eps []*probe.Endpoint
	for _, t := range targets {
		for _, a := range byKey[hostPortOf(t)].Addrs {
			eps = append(eps, &probe.Endpoint{ID: len(eps), Target: t, Addr: a})
		}
	}
	return dns, eps
}

// hostPort is one host:port the run resolves, the host in lower case.
type hostPort struct {
	host string
	port uint16
}

func hostPortOf(t *probe.Target) hostPort { return hostPort{strings.ToLower(t.Host()), t.Port()} }

// hostPorts lists the distinct host:port of targets, in order.
func hostPorts(targets []*probe.Target) []hostPort {
	var keys []hostPort
	seen := map[hostPort]bool{}
	for _, t := range targets {
		if k := hostPortOf(t); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// resolver resolves one host:port; *probe.Resolver is the one a run uses.
type resolver interface {
	Resolve(ctx context.Context, host string, port uint16) probe.Resolution
}

// resolveAll resolves every one of keys at once.
func resolveAll(ctx context.Context, r resolver, keys []hostPort) []probe.Resolution {
	res := make([]probe.Resolution, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { res[i] = r.Resolve(ctx, k.host, k.port) })
	}
	wg.Wait()
	return res
}

// String describes the session's endpoints for a plan line:
// "3 endpoints of sign.example.com: 127.0.0.1, 127.0.0.2, ::1".
func (s *Session) String() string {
	eps := s.Endpoints
	var b strings.Builder
	fmt.Fprintf(&b, "%d endpoint%s", len(eps), words.Plural(len(eps)))
	var hosts []string
	addrs := map[string][]string{}
	for _, ep := range eps {
		h := ep.Target.Host()
		if _, ok := addrs[h]; !ok {
			hosts = append(hosts, h)
		}
		a := ep.Addr.String()
		found := false
		for _, x := range addrs[h] {
			found = found || x == a
		}
		if !found {
			addrs[h] = append(addrs[h], a)
		}
	}
	if len(hosts) == 1 {
		fmt.Fprintf(&b, " of %s: %s", hosts[0], capList(addrs[hosts[0]]))
		return b.String()
	}
	parts := make([]string, len(hosts))
	for i, h := range hosts {
		parts[i] = h + " (" + capList(addrs[h]) + ")"
	}
	b.WriteString(": " + capList(parts))
	return b.String()
}

// planListMax is the most addresses (or hosts) a plan line names; the
// report lists them all.
const planListMax = 8

// capList joins at most planListMax of items with commas, then how many
// more there are: "127.0.0.1, …, 127.0.0.7, 193 more".
func capList(items []string) string {
	return strings.Join(words.CapItems(items, planListMax), ", ")
}

// plannedLooks is how many looks --until-verdict may make: one a second
// over the planned run (at least 2, at most an hour's).
func plannedLooks(o probe.Options) int {
	secs := o.Duration.Seconds()
	if secs <= 0 && o.Requests > 0 && o.Rate > 0 {
		secs = float64(o.Requests) / o.Rate
	}
	if secs <= 0 {
		secs = 3600
	}
	return int(min(max(math.Ceil(secs), 2), 3600))
}
