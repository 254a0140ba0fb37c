// Pinprobe finds which backend address is behind an intermittent HTTP failure.
//
// It resolves every A and AAAA address of each target host, pins each
// connection to one address (the Host header and TLS SNI stay the host
// name), sends a rate-limited stream of requests to every address, and
// reports status codes, error classes and latencies by address family and by
// address, so a failure that only one backend produces stands out.
//
// Usage:
//
//	pinprobe [flags] URL...   probe the URLs
//	pinprobe --demo           probe a built-in reproduction of the incident, on loopback
//
// Exit codes: 0 the run finished; 1 a check failed (--preflight); 2 bad usage
// or input; 3 no address to probe for any target; 130 interrupted (the report
// of what was sent is still printed).
//
// Ctrl-C (or SIGTERM) stops sending, waits for the requests in flight (each
// bounded by --timeout) and prints the full report; a second Ctrl-C exits at
// once. See README.md for the report formats and how pinprobe measures.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"pinprobe/probe"
	"pinprobe/report"
)

// version is the release this build reports.
const version = "0.1.0"

// Exit codes, the contract of DESIGN.md.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitNoAddress   = 3
	exitInterrupted = 130
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		if isTerminal(os.Stderr) {
			fmt.Fprint(os.Stderr, "\r\x1b[K") // the progress bar's line
		}
		fmt.Fprintln(os.Stderr, "pinprobe: interrupted: stopping, waiting for requests in flight (Ctrl-C again to quit at once)")
		cancel()
		<-sigs
		if isTerminal(os.Stderr) {
			fmt.Fprint(os.Stderr, "\r\x1b[K")
		}
		fmt.Fprintln(os.Stderr, "pinprobe: interrupted twice: exiting without a report")
		os.Exit(exitInterrupted)
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it parses args, probes, writes the report to
// stdout and everything else to stderr, and returns the exit code.
// Cancelling ctx is an interrupt.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, fs, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "pinprobe: %s\n", err)
		return exitUsage
	}
	if c.help {
		writeHelp(stdout, fs)
		return exitOK
	}
	if c.version {
		fmt.Fprintf(stdout, "pinprobe %s\n", version)
		return exitOK
	}
	// On a terminal a message first clears the line, which the progress
	// bar may hold.
	clearLine := ""
	if isTerminal(stderr) {
		clearLine = "\r\x1b[K"
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, clearLine+"pinprobe: "+format+"\n", a...) }

	resolver := &probe.Resolver{Static: c.resolve.entries, Server: c.dns}
	if c.only4 {
		resolver.Only = probe.IPv4
	} else if c.only6 {
		resolver.Only = probe.IPv6
	}
	if c.demo {
		demo, err := startDemo()
		if err != nil {
			say("%s", err)
			return exitNoAddress
		}
		defer demo.Close()
		if demo.note != "" {
			say("%s", demo.note)
		}
		if !c.setDur {
			c.duration = 5 * time.Second
		}
		if !c.setRate {
			c.rate.rate = 30
		}
		c.urls = []string{demo.URL()}
		resolver.Static = map[string][]netip.Addr{probe.StaticKey(demoHost, demo.port): demo.addrs}
		resolver.StaticSource = "demo"
		say("demo: an application gateway on %s port %d; its %s instance was given an IPv6 backend it cannot reach",
			probe.JoinAddrs(demo.addrs), demo.port, demo.failing)
	}

	targets, err := c.targets()
	if err != nil {
		fmt.Fprintf(stderr, "pinprobe: %s\n", err)
		return exitUsage
	}
	dns, eps := resolveAll(ctx, resolver, targets)
	if ctx.Err() != nil {
		say("interrupted while resolving: no request was sent")
		return exitInterrupted
	}
	for _, d := range dns {
		if d.Error != "" {
			say("%s: skipping %s:%d", d.Error, d.Host, d.Port)
		}
	}
	if len(eps) == 0 {
		say("nothing to probe: no address for any target")
		return exitNoAddress
	}
	conn := probe.ConnOptions{
		Timeout: c.timeout, NewConn: c.newConn, HTTP: probe.HTTPVersion(c.http.value),
		TLS: c.tls, Concurrency: c.concurrency,
	}
	if c.preflight {
		return c.preflightOnly(ctx, eps, conn, stdout, say)
	}
	if !c.noPreflight {
		checks := probe.Preflight(ctx, eps, conn)
		if err := report.Preflight(stderr, eps, checks, false); err != nil {
			say("%s", err)
		}
	}
	say("%s", c.plan(eps))

	opts := probe.Options{
		ConnOptions: conn,
		Rate:        c.rate.rate,
		Max:         c.rate.max,
		Duration:    c.duration,
		Requests:    c.requests,
		Concurrency: c.concurrency,
		UserAgent:   "pinprobe/" + version,
		RequestID:   !c.noRequestID,
		Evidence:    probe.Evidence{Failed: c.fail.Fails, Samples: c.samples},
	}
	rep := &report.Report{
		Version: version,
		Command: append([]string{"pinprobe"}, redactArgs(args)...),
		Plan: report.Plan{
			Rate: c.rate.rate, Max: c.rate.max, DurationS: c.duration.Seconds(), Requests: c.requests,
			Concurrency: c.concurrency, Timeout: c.timeout.Seconds(), HTTP: c.http.value,
			NewConn: c.newConn, FailStatus: c.failStatus,
		},
		DNS: dns,
	}
	agg := report.NewAggregator(eps, c.fail)
	rep.StartedAt = report.Time{Time: time.Now()}
	agg.SetTimeline(rep.StartedAt.Time, c.timelineInterval(), c.interval == 0)
	run, err := probe.Start(ctx, eps, opts)
	if err != nil {
		say("%s", err)
		return exitUsage
	}
	bar := startProgress(ctx, stderr, c, agg.Live(), run.Sent, rep.StartedAt.Time)
	var changes <-chan dnsUpdate
	if c.reResolve > 0 && !c.demo {
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		changes = watchDNS(watchCtx, resolver, targets, dns, c.reResolve)
	}
	w := &dnsWatch{run: run, agg: agg, rep: rep, eps: eps, targets: targets, say: say}
	results := run.Results()
	for results != nil {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			agg.Add(r)
		case u := <-changes:
			w.apply(u)
		}
	}
	rep.EndedAt = report.Time{Time: time.Now()}
	if _, end := run.Sending(); !end.IsZero() {
		rep.SendS = end.Sub(rep.StartedAt.Time).Seconds()
	}
	bar.finish()
	rep.Interrupted = ctx.Err() != nil
	agg.Close(rep)

	render, err := report.ForFormat(c.format.value, useColor(stdout))
	if err != nil { // validated by the flag; kept for safety
		say("%s", err)
		return exitUsage
	}
	code := exitOK
	if err := render(stdout, rep); err != nil {
		say("%s", err)
		code = exitUsage
	}
	if c.output != "" {
		if err := writeJSONFile(c.output, rep); err != nil {
			say("%s", err)
			code = exitUsage
		}
	}
	if rep.Interrupted {
		return exitInterrupted
	}
	return code
}

// preflightOnly is --preflight: check every endpoint, print the checks (JSON
// with --format json, and to -o), exit 1 when any fails.
func (c *config) preflightOnly(ctx context.Context, eps []*probe.Endpoint, conn probe.ConnOptions, stdout io.Writer, say func(string, ...any)) int {
	checks := probe.Preflight(ctx, eps, conn)
	var err error
	if c.format.value == "json" {
		err = report.PreflightJSON(stdout, eps, checks)
	} else {
		err = report.Preflight(stdout, eps, checks, true)
	}
	if err == nil && c.output != "" {
		var f *os.File
		if f, err = os.Create(c.output); err == nil {
			err = report.PreflightJSON(f, eps, checks)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		say("%s", err)
		return exitUsage
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	for _, ch := range checks {
		if ch.Err != nil {
			return exitFail
		}
	}
	return exitOK
}

// targets builds the request of every URL argument.
func (c *config) targets() ([]*probe.Target, error) {
	var out []*probe.Target
	for _, raw := range c.urls {
		t, err := probe.ParseTarget(raw)
		if err != nil {
			return nil, err
		}
		t.Method = strings.ToUpper(c.method)
		t.Header = http.Header{}
		for _, h := range c.headers.lines {
			t.Header.Add(h[0], h[1])
		}
		if c.body != "" {
			t.Body = []byte(c.body)
		}
		out = append(out, t)
	}
	return out, nil
}

// resolveAll resolves every target's host:port once, in parallel, and
// returns the DNS records of the report and the endpoints, numbered in order.
func resolveAll(ctx context.Context, r *probe.Resolver, targets []*probe.Target) ([]report.DNS, []*probe.Endpoint) {
	type key struct {
		host string
		port uint16
	}
	var keys []key
	seen := map[key]bool{}
	for _, t := range targets {
		k := key{strings.ToLower(t.Host()), t.Port()}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	res := make([]probe.Resolution, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { res[i] = r.Resolve(ctx, k.host, k.port) })
	}
	wg.Wait()
	byKey := map[key]probe.Resolution{}
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
		for _, a := range byKey[key{strings.ToLower(t.Host()), t.Port()}].Addrs {
			eps = append(eps, &probe.Endpoint{ID: len(eps), Target: t, Addr: a})
		}
	}
	return dns, eps
}

// plan describes the run about to start, e.g. "10 req/s for 30s over 3
// endpoints of sign.example.com: 127.0.0.1, 127.0.0.2, ::1".
func (c *config) plan(eps []*probe.Endpoint) string {
	var b strings.Builder
	if c.rate.max {
		fmt.Fprintf(&b, "max rate (%d workers per endpoint, back to back)", c.concurrency)
	} else {
		fmt.Fprintf(&b, "%s req/s", c.rate.String())
		if len(eps) > 1 {
			fmt.Fprintf(&b, " (%.4g per endpoint)", c.rate.rate/float64(len(eps)))
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
	fmt.Fprintf(&b, " over %d endpoint%s", len(eps), report.Plural(len(eps)))
	var hosts []string
	addrs := map[string][]string{}
	for _, ep := range eps {
		h := ep.Target.Host()
		if _, ok := addrs[h]; !ok {
			hosts = append(hosts, h)
		}
		if a := ep.Addr.String(); !slices.Contains(addrs[h], a) {
			addrs[h] = append(addrs[h], a)
		}
	}
	if len(hosts) == 1 {
		fmt.Fprintf(&b, " of %s: %s", hosts[0], strings.Join(addrs[hosts[0]], ", "))
	} else {
		parts := make([]string, len(hosts))
		for i, h := range hosts {
			parts[i] = h + " (" + strings.Join(addrs[h], ", ") + ")"
		}
		b.WriteString(": " + strings.Join(parts, ", "))
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
		case strings.Contains(a, "://"):
			if t, err := probe.ParseTarget(a); err == nil {
				out[i] = t.String()
			}
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

func redactHeader(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if ok && report.IsSecretHeader(strings.TrimSpace(name)) {
		return strings.TrimSpace(name) + ": " + report.Redacted
	}
	return h
}

func writeJSONFile(path string, r *report.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	if err := report.JSON(f, r); err != nil {
		f.Close()
		return fmt.Errorf("--output %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// useColor reports whether the text report on w may use ANSI colours.
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// helpGroups orders the flags of --help under headings.
var helpGroups = []struct {
	title string
	flags []string
}{
	{"Load", []string{"rate", "duration", "requests", "concurrency"}},
	{"Addresses", []string{"ipv4", "ipv6", "resolve", "dns-server", "re-resolve", "preflight", "no-preflight"}},
	{"Request", []string{"method", "header", "body", "timeout", "http", "new-conn", "cacert", "insecure", "no-request-id"}},
	{"Report", []string{"fail-status", "format", "output", "samples", "interval", "quiet"}},
	{"Other", []string{"demo", "help", "version"}},
}

func writeHelp(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, `pinprobe %s: find which backend address is behind an intermittent HTTP failure.

Usage:
  pinprobe [flags] URL...    probe every A and AAAA address of each URL's host
  pinprobe --demo            probe a built-in reproduction of the incident (loopback only)
`, version)
	for _, g := range helpGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.flags {
			f := fs.Lookup(name)
			left := "      --" + f.Name
			if f.Shorthand != "" {
				left = "  -" + f.Shorthand + ", --" + f.Name
			}
			varname, usage := pflag.UnquoteUsage(f)
			if f.Value.Type() != "bool" && varname != "" {
				left += " " + varname
			}
			if f.Value.Type() != "bool" && f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
				usage += " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(w, "%-30s %s\n", left, wrap(usage, 70, strings.Repeat(" ", 31)))
		}
	}
	fmt.Fprint(w, `
Exit codes: 0 finished, 1 a check failed (--preflight), 2 bad usage or input,
3 no address to probe, 130 interrupted (the report is still printed).
`)
}

// wrap breaks s into lines of at most width runes, indenting all but the first.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
