package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	"pinprobe/internal/demo"
	"pinprobe/internal/session"
	"pinprobe/probe"
	"pinprobe/report"
	"pinprobe/report/judge"
	"pinprobe/report/render"
)

// probeCommand is `pinprobe [flags] URL...` and `pinprobe --demo`: resolve,
// check, send, report.
func probeCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, fs, err := parseArgs(args)
	if err != nil {
		return err
	}
	if c.help {
		writeHelp(stdout, fs)
		return nil
	}
	if c.version {
		fmt.Fprintf(stdout, "pinprobe %s\n", version)
		return nil
	}
	if err := c.load(ctx, stdin); err != nil {
		if errors.Is(err, errInterrupted) {
			return &exitError{code: exitInterrupted, err: err}
		}
		return err
	}
	say := sayer(stderr)

	resolver := &probe.Resolver{Static: c.resolve.entries, Server: c.dns}
	if c.only4 {
		resolver.Only = probe.IPv4
	} else if c.only6 {
		resolver.Only = probe.IPv6
	}
	if c.demo {
		g, err := demo.Start()
		if err != nil {
			return &exitError{code: exitNoAddress, err: err}
		}
		defer g.Close()
		if g.Note != "" {
			say("%s", g.Note)
		}
		if !c.setDur {
			c.duration = 5 * time.Second
		}
		if !c.setRate {
			c.rate.rate = 30
		}
		c.specs = []targetSpec{{url: g.URL()}}
		resolver.Static = map[string][]netip.Addr{probe.StaticKey(demo.Host, g.Port): g.Addrs}
		resolver.StaticSource = "demo"
		c.reResolve = 0 // its answers never change
		say("demo: an application gateway on %s port %d; its %s instance was given an IPv6 backend it cannot reach",
			probe.JoinAddrs(g.Addrs), g.Port, g.Failing)
		if g.Shared.IsValid() {
			say("demo: %s fronts %d gateway instances, each connection kept on one; instance %s has the unreachable backend too",
				g.Shared, demo.Instances, g.Broken)
		}
	}

	targets, err := c.targets()
	if err != nil {
		return err
	}
	for _, w := range resolveMismatches(c.resolve.entries, targets) {
		say("%s", w)
	}
	conn := probe.ConnOptions{
		Timeout: c.timeout, NewConn: c.newConn, HTTP: probe.HTTPVersion(c.http.value),
		TLS: c.tls, ConnAge: c.connAge,
	}
	cfg := session.Config{
		Targets:  targets,
		Resolver: resolver,
		Engine: probe.Options{
			ConnOptions: conn,
			Rate:        c.rate.rate,
			Max:         c.rate.max,
			Duration:    c.duration,
			Requests:    c.requests,
			UserAgent:   "pinprobe/" + version,
			Client:      probe.ClientKind(c.client.value),
			GroupBy:     c.groupHeaders(),
			RequestID:   !c.noRequestID,
			Evidence:    probe.Evidence{Failed: c.fail.Fails, Samples: c.samples},
		},
		Fail:         c.fail,
		Interval:     c.timelineInterval(),
		AutoInterval: c.interval == 0,
		ReResolve:    c.reResolve,
		UntilVerdict: c.untilSettled,
		Meta: report.Report{
			Version: version,
			Command: append([]string{"pinprobe"}, redactArgs(args)...),
			Plan: report.Plan{
				Rate: c.rate.rate, Max: c.rate.max, DurationS: c.duration.Seconds(), Requests: c.requests,
				Timeout: c.timeout.Seconds(), HTTP: c.http.value,
				NewConn: c.newConn, FailStatus: c.failStatus, Only: string(resolver.Only),
			},
		},
		Log: say,
	}
	s, err := session.New(ctx, cfg)
	switch {
	case errors.Is(err, session.ErrInterrupted):
		return &exitError{code: exitInterrupted, err: errors.New("interrupted while resolving: no request was sent")}
	case errors.Is(err, session.ErrNoAddress):
		if !resolver.Server.IsValid() && !c.demo {
			err = fmt.Errorf("%w; if the system resolver is wrong here, ask a DNS server with --dns-server ADDR:PORT or give the addresses with --resolve HOST:PORT:ADDR", err)
		}
		return &exitError{code: exitNoAddress, err: err}
	case err != nil:
		return err
	}
	// What depends on the number of endpoints: in-flight capacity and
	// connection sampling.
	n := len(s.Endpoints)
	sc := s.Config()
	sc.Engine.Concurrency = c.concurrencyFor(n)
	sc.Engine.ConnRequests = c.connRequests(n)
	sc.Meta.Plan.Concurrency = sc.Engine.Concurrency
	sc.Meta.Plan.ConnRequests = sc.Engine.ConnRequests
	if c.preflight {
		return c.preflightOnly(ctx, s, stdout)
	}
	if !c.noPreflight {
		checks := s.Preflight(ctx)
		if ctx.Err() != nil {
			return &exitError{code: exitInterrupted, err: errors.New("interrupted during the preflight: no request was sent")}
		}
		stop := render.PreflightStop(s.Endpoints, checks, c.timeout)
		if err := render.Preflight(stderr, s.Endpoints, checks, render.PreflightOptions{Verified: !c.insecure, Stopping: stop != ""}); err != nil {
			say("%s", err)
		}
		if stop != "" {
			return &exitError{code: exitNoAddress, err: errors.New(stop + " (--no-preflight sends the load anyway)")}
		}
	}
	say("%s", c.plan(s))
	if pb := newProgressBar(stderr, c); pb != nil && !c.quiet {
		s.SetProgress(pb)
	}
	rep, err := s.Run(ctx)
	if err != nil {
		return usagef("%s", err)
	}
	if note := judge.ClientNote(rep); note != "" {
		say("warning: %s", note)
	}
	return c.outputFlags.write(rep, stdout, say)
}

// preflightOnly is --preflight: check every endpoint, print the checks (JSON
// with --format json, and to -o), exit 1 when any fails.
func (c *config) preflightOnly(ctx context.Context, s *session.Session, stdout io.Writer) error {
	checks := s.Preflight(ctx)
	if ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted during the preflight")}
	}
	var err error
	if c.format.value == "json" {
		err = render.PreflightJSON(stdout, s.Endpoints, checks)
	} else {
		err = render.Preflight(stdout, s.Endpoints, checks, render.PreflightOptions{All: true, Verified: !c.insecure})
	}
	if err == nil && c.output != "" {
		var f *os.File
		if f, err = os.Create(c.output); err == nil {
			err = render.PreflightJSON(f, s.Endpoints, checks)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		return &writeError{err}
	}
	if ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted"), quiet: true}
	}
	for _, ch := range checks {
		if ch.Err != nil {
			return &exitError{code: exitFail, err: errors.New("preflight failed"), quiet: true}
		}
	}
	return nil
}

// targets builds the request of every target: the URL arguments and the
// targets file's blocks, each with the flags' method, headers and body
// where it gives none of its own (a block's header replaces a -H one of the
// same name).
func (c *config) targets() ([]*probe.Target, error) {
	var out []*probe.Target
	for _, sp := range c.specs {
		t, err := probe.ParseTarget(sp.url)
		if err != nil {
			return nil, usagef("%s", err)
		}
		t.Method = strings.ToUpper(c.method)
		if sp.method != "" {
			t.Method = sp.method
		}
		t.Header = http.Header{}
		for _, h := range c.headers.lines {
			t.Header.Add(h[0], h[1])
		}
		own := http.Header{}
		for _, h := range sp.header {
			own.Add(h[0], h[1])
		}
		for k, vs := range own {
			t.Header[k] = vs
		}
		t.Body = c.bodyBytes
		if sp.hasBody {
			t.Body = sp.body
		}
		out = append(out, t)
	}
	return out, nil
}

// plan describes the run about to start, e.g. "10 req/s for 30s over 3
// endpoints of sign.example.com: 127.0.0.1, 127.0.0.2, ::1".
func (c *config) plan(s *session.Session) string {
	var b strings.Builder
	n := len(s.Endpoints)
	o := s.Config().Engine
	if c.rate.max {
		fmt.Fprintf(&b, "max rate (%d workers per endpoint, back to back)", o.Concurrency)
	} else {
		fmt.Fprintf(&b, "%s req/s", c.rate.String())
		if n > 1 {
			fmt.Fprintf(&b, " (%.4g per endpoint)", c.rate.rate/float64(n))
		}
	}
	switch {
	case c.duration > 0 && c.requests > 0:
		fmt.Fprintf(&b, " for %s or %d requests, whichever comes first,", c.duration, c.requests)
	case c.duration > 0:
		fmt.Fprintf(&b, " for %s", c.duration)
	case c.requests > 0:
		fmt.Fprintf(&b, " for %d requests", c.requests)
	default:
		b.WriteString(" until Ctrl-C")
	}
	b.WriteString(" over " + s.String())
	if planned := probe.PlannedRequests(o, n); planned != nil {
		var total, none int64
		for _, k := range planned {
			total += k
			if k == 0 {
				none++
			}
		}
		if none > 0 {
			fmt.Fprintf(&b, ". Warning: %d requests in all, and %d of the %d endpoints will get none, so they will not be judged: raise -r or -d", total, none, n)
		}
	}
	return b.String()
}

// redactArgs returns args with secret header values and URL passwords
// replaced. It knows every form pflag takes -H in: "-H v", "-Hv", "-H=v",
// and grouped with other shorthands, "-qH v" or "-qHv".
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		switch {
		case a == "--header" && i+1 < len(out):
			out[i+1] = redactHeader(out[i+1])
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redactHeader(strings.TrimPrefix(a, "--header="))
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			switch j := headerValueAt(a); {
			case j == len(a) && i+1 < len(out):
				out[i+1] = redactHeader(out[i+1])
			case j > 0 && j < len(a):
				out[i] = a[:j] + redactHeader(a[j:])
			}
		case strings.Contains(a, "://") || strings.Contains(a, "@"):
			out[i] = probe.RedactRawURL(a)
		}
	}
	return out
}

// headerValueAt returns where the value of -H starts in a group of shorthand
// flags such as "-qH", "-qHName: v" or "-H=Name: v" (len(group) when it is
// the next argument), or -1 when the group holds no -H.
func headerValueAt(group string) int {
	fs := newFlagSet(&config{})
	for k := 1; k < len(group); k++ {
		if group[k] == 'H' {
			if k+1 < len(group) && group[k+1] == '=' {
				return k + 2
			}
			return k + 1
		}
		if f := fs.ShorthandLookup(group[k : k+1]); f == nil || f.NoOptDefVal == "" {
			return -1 // not a flag, or one that takes the rest of the group as its value
		}
	}
	return -1
}

func redactHeader(h string) string { return probe.RedactHeaderArg(h) }

// resolveMismatches warns of --resolve entries that name a target's host
// with another port: curl's syntax matches host and port, so such an entry
// is not used and the host goes to DNS, which is rarely what was meant.
func resolveMismatches(entries map[string][]netip.Addr, targets []*probe.Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range targets {
		key := probe.StaticKey(t.Host(), t.Port())
		if _, ok := entries[key]; ok || seen[key] {
			continue
		}
		seen[key] = true
		host := key[:strings.LastIndex(key, ":")] // keys are StaticKey(host, port)
		var other []string
		for k := range entries {
			if k[:strings.LastIndex(k, ":")] == host {
				other = append(other, k)
			}
		}
		if len(other) > 0 {
			sort.Strings(other)
			out = append(out, fmt.Sprintf("warning: --resolve %s is not used: the URL's port is %d, so %s is resolved by DNS (give --resolve %s:ADDR)",
				strings.Join(other, ", "), t.Port(), t.Host(), key))
		}
	}
	return out
}
