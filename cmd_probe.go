package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/demo"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/session"
	"github.com/pinprobe/pinprobe/internal/words"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"
)

// probeCommand is `pinprobe [flags] URL...` and `pinprobe --demo`: resolve,
// check, send, report.
func probeCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, fs, err := parseArgs(args)
	if err != nil {
		return err
	}
	if c.help {
		probeHelp.write(stdout, fs)
		return nil
	}
	if c.version {
		writeVersion(stdout)
		return nil
	}
	if err := c.load(ctx, stdin); err != nil {
		if errors.Is(err, errInterrupted) {
			return &exitError{code: exitInterrupted, err: fmt.Errorf("%w before any request was sent", err)}
		}
		return err
	}
	say := sayer(stderr)

	resolver := c.resolver()
	var demoLog *demoAccessLog
	if c.demo {
		g, log, err := c.startDemo(resolver, say, stderr)
		if err != nil {
			return err
		}
		defer g.Close()
		defer log.close()
		demoLog = log
	}

	targets, err := c.targets(say)
	if err != nil {
		return err
	}
	cfg := c.sessionConfig(ctx, args, targets, resolver, say)
	s, err := session.New(ctx, cfg)
	switch {
	case errors.Is(err, session.ErrInterrupted):
		return &exitError{code: exitInterrupted, err: errors.New("interrupted while resolving: no request was sent")}
	case errors.Is(err, session.ErrNoAddress):
		why := err.Error()
		if !resolver.Server.IsValid() && !c.demo {
			why += "; if the system resolver is wrong here, ask a DNS server with --dns-server ADDR:PORT or give the addresses with --resolve HOST:PORT:ADDR"
		}
		return c.notProbed(s, why, "nothing to probe: ", stdout, say)
	case err != nil:
		return err
	}
	c.sizeFor(s)
	if c.preflight {
		return c.preflightOnly(ctx, s, stdout, say)
	}
	if !c.noPreflight {
		checks := s.Preflight(ctx)
		if ctx.Err() != nil {
			return &exitError{code: exitInterrupted, err: errors.New("interrupted during the preflight: no request was sent")}
		}
		stop := session.PreflightStop(s.Endpoints, checks, c.timeout)
		if err := render.Preflight(stderr, s.PreflightChecks(), render.PreflightOptions{Verified: !c.insecure, Stopping: stop != "", Width: renderOptions(stderr).Width, Quiet: c.quiet}); err != nil {
			say("%s", err)
		}
		if stop != "" {
			return c.notProbed(s, stop+" (--no-preflight sends the load anyway)", "", stdout, say)
		}
	}
	if !c.quiet {
		say("%s", c.plan(s))
	}
	if err := c.waitStart(ctx, say); err != nil {
		return err
	}
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
	werr := c.outputFlags.write(rep, rep.Interrupted, stdout, say)
	if demoLog != nil {
		demoLog.join(context.WithoutCancel(ctx), rep)
	}
	return werr
}

// notProbed writes the report of a run that sent nothing, because no
// target had an address or every endpoint failed its preflight (why): in
// every format and to -o, as any run's, the gate not judged; and exits 3
// with why on stderr after lead, or 4 when the report could not be
// written.
func (c *config) notProbed(s *session.Session, why, lead string, stdout io.Writer, say func(string, ...any)) error {
	werr := c.outputFlags.write(s.NotProbed(why), false, stdout, say)
	if ee := (*exitError)(nil); errors.As(werr, &ee) && ee.code == exitWrite {
		return werr
	}
	return &exitError{code: exitNoAddress, err: errors.New(lead + why)}
}

// config is the probe command's options: everything `pinprobe [flags]
// URL...` says, and what validate and load make of it.
type config struct {
	rate         rateValue
	duration     time.Duration
	requests     int64
	concurrency  int
	paceGrain    time.Duration
	connReqs     connRequestsValue
	connAge      time.Duration
	groupBy      []string
	untilSettled bool
	only4        bool
	only6        bool
	resolve      resolveValue
	dnsServer    string
	newConn      bool
	method       string
	headers      headerValue
	body         string
	timeout      time.Duration
	cacert       string
	insecure     bool
	http         choiceValue
	client       choiceValue
	failStatus   string
	outputFlags
	quiet       bool
	preflight   bool
	noPreflight bool
	noRequestID bool
	samples     int
	interval    time.Duration
	reResolve   time.Duration
	demo        bool
	help        bool
	version     bool
	urls        []string

	targetsFile string
	vantage     string
	startAtFlag string

	// Filled by validate and load.
	bodyBytes []byte
	specs     []targetSpec
	fail      report.FailStatus
	tls       *tls.Config
	dns       netip.AddrPort
	setRate   bool // --rate given
	setDur    bool // --duration given
	setConc   bool // --concurrency given
	startAt   time.Time
}

// maxSamples keeps a typo from exhausting the machine: samples per endpoint,
// each at most ~9 KiB (probe.MaxEvidenceHeaderBytes and BodyPrefix).
const maxSamples = 100

// newFlagSet declares the probe command's flags, each filling its field of
// c; probeHelp orders them for --help.
func newFlagSet(c *config) *pflag.FlagSet {
	fs := newCommandFlagSet("pinprobe")
	c.rate = rateValue{rate: 10}
	fs.VarP(&c.rate, "rate", "r", "`RATE` in requests/s over all endpoints, split evenly; \"max\" = closed model: -c workers per endpoint, back to back")
	durationVarP(fs, &c.duration, "duration", "d", 30*time.Second, "s", [2]string{"30s", "5m"}, "send for `DURATION`, e.g. 30s, 5m (0 = until -n or Ctrl-C)")
	countVarP(fs, &c.requests, "requests", "n", 0, "requests", 1000, "stop after `N` requests in total, whichever of -d/-n comes first (0 = no limit)")
	countVarP(fs, &c.concurrency, "concurrency", "c", 0, "requests in flight", 50, "most requests in flight per endpoint; a request due while `N` are busy is dropped and counted (default: enough for every planned request to take the whole --timeout, within the descriptor limit)")
	durationVarP(fs, &c.paceGrain, "pace-grain", "", 0, "ms", [2]string{"10ms", "5ms"}, "send the requests due within each `DURATION` together at its start, on as many connections: less CPU at a fixed rate (bombardier's pacing is 10ms), burstier load (0 = each request at its own time; at most 100ms)")
	fs.BoolVar(&c.untilSettled, "until-verdict", false, "stop once the whole verdict is settled (every fault proven at a level that holds over the repeated looks, every other address and instance shown under 5% failures, every address on 17 connections or more), or at -d/-n, the report then saying what stayed open")

	c.addAddressFlags(fs)
	c.addConnFlags(fs)
	c.addRequestFlags(fs)
	c.addGroupFlags(fs)
	c.outputFlags.add(fs)
	fs.StringVar(&c.startAtFlag, "start-at", "", "wait until `TIME` (RFC 3339, +DURATION optional: 2026-12-05T17:00:00Z+90s; @FILE reads it from FILE) to send the first request, so processes started apart send together; a time already past starts at once, saying how late (at most 24h ahead, 1h past)")
	fs.StringVar(&c.vantage, "vantage", "", "record the run as probed from `NAME` (a zone, region or machine: letters, digits, '.', '_', '-'; @FILE reads it from FILE), so `pinprobe report` of runs from several places tells them apart (default: the host name)")
	countVarP(fs, &c.samples, "samples", "", 5, "samples", 5, "keep `N` failed requests per endpoint as evidence, plus one success (0 = none)")
	durationVarP(fs, &c.interval, "interval", "", 0, "s", [2]string{"1s", "250ms"}, "timeline buckets `DURATION` wide (default 1s, doubled as needed to stay under ~300 buckets; an explicit width doubles only past 10,000)")
	fs.BoolVarP(&c.quiet, "quiet", "q", false, "on stderr only warnings and errors (a failed preflight, --insecure, an interruption; the demo's trace): no progress bar, plan or passed preflight")
	fs.BoolVar(&c.preflight, "preflight", false, "only check TCP (+TLS) to every address, send no request; exit 1 if any fails")
	fs.BoolVar(&c.noPreflight, "no-preflight", false, "skip the per-address TCP (+TLS) check before the load")
	fs.BoolVar(&c.demo, "demo", false, "probe a built-in reproduction of the incident on loopback (5s at 30 req/s unless -d/-r say otherwise)")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	fs.BoolVar(&c.version, "version", false, "print the version")
	return fs
}

// The flag groups the probe and the watch share, with one meaning each.

// addAddressFlags declares which addresses are probed: -4, -6, --resolve,
// --dns-server and --re-resolve.
func (c *config) addAddressFlags(fs *pflag.FlagSet) {
	fs.BoolVarP(&c.only4, "ipv4", "4", false, "only IPv4 addresses")
	fs.BoolVarP(&c.only6, "ipv6", "6", false, "only IPv6 addresses")
	fs.Var(&c.resolve, "resolve", "use these addresses for HOST:PORT instead of DNS, curl's syntax (repeatable)")
	fs.StringVar(&c.dnsServer, "dns-server", "", "resolve with the DNS server at `ADDR:PORT` instead of the system resolver")
	durationVarP(fs, &c.reResolve, "re-resolve", "", 30*time.Second, "s", [2]string{"30s", "1m"}, "resolve again every `DURATION` during the run: new addresses get streams, vanished ones stop (0 = off)")
}

// addConnFlags declares how connections are used: --new-conn,
// --conn-requests and --conn-age.
func (c *config) addConnFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.newConn, "new-conn", false, "a fresh TCP (+TLS) connection for every request (default: keep-alive)")
	c.connReqs = connRequestsValue{auto: true}
	fs.Var(&c.connReqs, "conn-requests", "most requests per connection, so a run samples many connections (auto: at least 4, enough for ~32 connections per endpoint, and 4 with --until-verdict; 0 = unlimited reuse)")
	durationVarP(fs, &c.connAge, "conn-age", "", 30*time.Second, "s", [2]string{"30s", "2m"}, "do not reuse a connection older than `DURATION` (0 = no limit)")
}

// addRequestFlags declares the request and how it is sent: -X, -H, --body,
// --targets, --timeout, TLS (--cacert, --insecure), --client, --http and
// --no-request-id.
func (c *config) addRequestFlags(fs *pflag.FlagSet) {
	c.http = choiceValue{value: "auto", choices: []string{"1.1", "2", "auto"}}
	fs.StringVarP(&c.method, "method", "X", "GET", "request `METHOD`")
	fs.VarP(&c.headers, "header", "H", "request header `\"NAME: VALUE\"` (repeatable)")
	fs.StringVar(&c.body, "body", "", "request `BODY`; @FILE reads it from FILE (at most 16 MiB; @- is standard input)")
	fs.StringVar(&c.targetsFile, "targets", "", "probe the targets in `FILE`: each a \"[METHOD] URL\" line, its header lines and an optional @BODYFILE line (a list of URLs will do; at most 4 MiB)")
	durationVarP(fs, &c.timeout, "timeout", "", 10*time.Second, "s", [2]string{"10s", "500ms"}, "give each request at most `DURATION`, from connect to the last body byte")
	fs.StringVar(&c.cacert, "cacert", "", "trust the CA certificates in PEM `FILE` instead of the system roots (at most 1 MiB)")
	fs.BoolVar(&c.insecure, "insecure", false, "do not verify TLS certificates")
	c.client = choiceValue{value: "auto", choices: []string{"auto", "fast", "std"}}
	fs.Var(&c.client, "client", "request path `KIND`: auto (pinprobe's own HTTP/1.1 client wherever HTTP/1.1 is spoken, net/http for HTTP/2), fast (HTTP/1.1 only) or std (net/http always, for comparison)")
	fs.Var(&c.http, "http", "HTTP `VERSION`: 1.1, 2 or auto (HTTP/2 where TLS ALPN offers it)")
	fs.BoolVar(&c.noRequestID, "no-request-id", false, "do not add a fresh X-Request-Id to each request (a -H X-Request-Id always wins)")
}

// addGroupFlags declares how responses are judged and grouped:
// --group-by and --fail-status.
func (c *config) addGroupFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&c.groupBy, "group-by", nil, "bucket the responses by this response `HEADER` (an instance or backend name, e.g. X-Served-By; repeatable; one no response carries is said beside the verdict); well-known instance headers are grouped when present")
	fs.StringVar(&c.failStatus, "fail-status", "5xx", "`STATUSES` that count as failures: classes, codes and ranges, e.g. 5xx,429,520-530")
}

// probeHelp is `pinprobe --help`: its text, then its flags under headings.
var probeHelp = commandHelp{"probe", "pinprobe " + release + `: find which backend address is behind an intermittent HTTP
failure.

Usage:
  pinprobe [flags] URL...          probe every A and AAAA address of each host
  pinprobe --demo                  probe a built-in reproduction of the incident
  pinprobe report [flags] FILE...  re-render (and merge) saved JSON reports
  pinprobe compare BEFORE AFTER    what changed between two saved reports
  pinprobe logs REPORT LOG...      join a saved run with the gateway's access
                                   logs: which backend failed
  pinprobe watch [flags] URL...    probe until stopped: Prometheus metrics and
                                   a line when an address starts failing
  pinprobe help [COMMAND]          this help, or that of COMMAND
  pinprobe version                 print the version (as --version does)
`, []flagGroup{
	{"Load", []string{"rate", "duration", "requests", "concurrency", "pace-grain", "until-verdict", "start-at"}},
	{"Addresses", []string{"ipv4", "ipv6", "resolve", "dns-server", "re-resolve", "preflight", "no-preflight"}},
	{"Request", []string{"targets", "method", "header", "body", "timeout", "http", "client", "cacert", "insecure", "no-request-id"}},
	{"Connections", []string{"conn-requests", "conn-age", "new-conn"}},
	{"Report", []string{"fail-status", "group-by", "format", "brief", "detail", "output", "vantage", "samples", "interval", "quiet"}},
	{"Release gate (exit 1 unless every check passes, proven)", []string{"max-failure-rate", "max-p99", "fail-on-verdict", "confidence"}},
	{"Other", []string{"demo", "help", "version"}},
}}

// parseArgs fills a config from the command line and validates it.
func parseArgs(args []string) (*config, *pflag.FlagSet, error) {
	c := &config{}
	fs := newFlagSet(c)
	if err := parseFlags(fs, args, &c.help, ""); err != nil {
		return nil, fs, err
	}
	c.urls, c.setRate, c.setDur, c.setConc = fs.Args(), fs.Changed("rate"), fs.Changed("duration"), fs.Changed("concurrency")
	if c.help || c.version {
		return c, fs, nil
	}
	if err := c.validate(); err != nil {
		return nil, fs, err
	}
	if err := c.outputFlags.validate(); err != nil {
		return nil, fs, err
	}
	return c, fs, nil
}

// validate checks the flags against each other (the report's and the
// gate's are outputFlags.validate's) and loads what they name.
func (c *config) validate() error {
	badGroup := slices.IndexFunc(c.groupBy, func(h string) bool { return !httpguts.ValidHeaderFieldName(strings.TrimSpace(h)) })
	switch {
	case c.demo && len(c.urls) > 0:
		shown := make([]string, len(c.urls))
		for i, u := range c.urls {
			shown[i] = probe.RedactRawURL(u)
		}
		return usagef("--demo probes its own gateway: drop the URL arguments (%s)", strings.Join(shown, " "))
	case c.demo && c.targetsFile != "":
		return usagef("--demo probes its own gateway: drop --targets %s", c.targetsFile)
	case !c.demo && len(c.urls) == 0 && c.targetsFile == "":
		return usagef("no URL given: pinprobe [flags] URL... (or --targets FILE, or pinprobe --demo)")
	case c.duration < 0:
		return usagef("--duration %s: must not be negative", c.duration)
	case c.requests < 0:
		return usagef("--requests %d: must not be negative", c.requests)
	case c.setConc && (c.concurrency < 1 || c.concurrency > probe.MaxConcurrency):
		return usagef("--concurrency %d: must be 1 to %d", c.concurrency, probe.MaxConcurrency)
	case c.client.value == "fast" && c.http.value == "2":
		return usagef("--client fast speaks HTTP/1.1 only: --http 2 needs --client auto or std")
	case c.paceGrain < 0 || c.paceGrain > probe.MaxPaceGrain:
		return usagef("--pace-grain %s: must be 0 to %s", c.paceGrain, probe.MaxPaceGrain)
	case c.paceGrain > 0 && c.rate.max:
		return usagef("--pace-grain %s paces a fixed rate: --rate max sends back to back", c.paceGrain)
	case c.connAge < 0:
		return usagef("--conn-age %s: must not be negative", c.connAge)
	case len(c.groupBy) > report.MaxGroupBy:
		return usagef("--group-by given %d times: at most %d headers", len(c.groupBy), report.MaxGroupBy)
	case slices.ContainsFunc(c.groupBy, func(h string) bool { return len(strings.TrimSpace(h)) > report.MaxHeaderName }):
		return usagef("--group-by: a header name longer than %d bytes", report.MaxHeaderName)
	case badGroup >= 0:
		return usagef("--group-by %q: not a header name (letters, digits and !#$%%&'*+-.^_`|~ only, no colon)", c.groupBy[badGroup])
	case c.newConn && !c.connReqs.auto && c.connReqs.n != 1:
		return usagef("--new-conn and --conn-requests %d exclude each other (--new-conn is --conn-requests 1)", c.connReqs.n)
	case c.timeout <= 0:
		return usagef("--timeout %s: must be positive", c.timeout)
	case c.samples < 0 || c.samples > maxSamples:
		return usagef("--samples %d: must be 0 to %d", c.samples, maxSamples)
	case c.interval < 0 || (c.interval > 0 && c.interval < 10*time.Millisecond):
		return usagef("--interval %s: must be at least 10ms (or 0 for automatic)", c.interval)
	case c.reResolve < 0 || (c.reResolve > 0 && c.reResolve < time.Second):
		return usagef("--re-resolve %s: must be at least 1s (or 0 for off)", c.reResolve)
	case c.only4 && c.only6:
		return usagef("-4 and -6 exclude each other: give one (or neither for both families)")
	case c.preflight && c.noPreflight:
		return usagef("--preflight and --no-preflight exclude each other")
	case c.insecure && c.cacert != "":
		return usagef("--insecure and --cacert %s exclude each other", c.cacert)
	case c.duration == 0 && c.requests == 0 && c.rate.max:
		return usagef("--rate max needs a bound: --duration or --requests")
	}
	if !httpguts.ValidHeaderFieldName(c.method) { // a method is an HTTP token, like a field name
		return usagef("--method %q: not an HTTP method", c.method)
	}
	if err := c.checkVantageFlag(); err != nil {
		return err
	}
	if err := c.checkStartAt(time.Now()); err != nil {
		return err
	}
	if c.preflight && c.format.value == "log-lines" {
		return usagef("--format log-lines frames a report; --preflight writes its checks (--format json for them)")
	}
	fail, err := report.ParseFailStatus(c.failStatus)
	if err != nil {
		return usagef("--fail-status %s", err)
	}
	c.fail = fail
	if c.dnsServer != "" {
		ap, err := parseHostPort(c.dnsServer)
		if err != nil {
			return usagef("--dns-server %q: %s", c.dnsServer, err)
		}
		c.dns = ap
	}
	return nil
}

// parseHostPort parses "ADDR:PORT", brackets optional around IPv6 when
// the port is clear; port 53 when none is given.
func parseHostPort(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 {
			return netip.AddrPort{}, errors.New("port 0: want 1-65535")
		}
		return ap, nil
	}
	if i := strings.LastIndex(s, ":"); i > 0 && !strings.HasSuffix(s[:i], ":") {
		if _, err := netip.ParseAddr(strings.Trim(s[:i], "[]")); err == nil {
			return netip.AddrPort{}, fmt.Errorf("port %q: want 1-65535", s[i+1:])
		}
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a, 53), nil
	}
	return netip.AddrPort{}, errors.New("want an IP address and port, e.g. 127.0.0.1:53 or [::1]:53")
}

// load reads the files the flags name — --body @FILE, --cacert, --targets —
// each capped in size, from regular files or "-" (standard input). A signal
// stops it.
func (c *config) load(ctx context.Context, stdin io.Reader) error {
	if strings.HasPrefix(c.body, "@") {
		b, err := readInput(ctx, "--body", c.body[1:], maxBody, stdin)
		if err != nil {
			return err
		}
		c.bodyBytes = b
	} else if c.body != "" {
		c.bodyBytes = []byte(c.body)
	}
	if err := c.loadVantage(ctx, stdin); err != nil {
		return err
	}
	if err := c.loadStartAt(ctx, stdin); err != nil {
		return err
	}
	c.tls = &tls.Config{InsecureSkipVerify: c.insecure}
	if c.cacert != "" {
		pem, err := readInput(ctx, "--cacert", c.cacert, maxCACert, stdin)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return usagef("--cacert %s: no PEM certificate in the file", c.cacert)
		}
		c.tls.RootCAs = pool
	}
	for _, u := range c.urls {
		c.specs = append(c.specs, targetSpec{url: u})
	}
	if c.targetsFile != "" {
		data, err := readInput(ctx, "--targets", c.targetsFile, maxTargets, stdin)
		if err != nil {
			return err
		}
		specs, err := parseTargets(ctx, c.targetsFile, data, stdin)
		if err != nil {
			return err
		}
		c.specs = append(c.specs, specs...)
	}
	return nil
}

// preflightOnly is --preflight: check every endpoint, print the checks (JSON
// with --format json, and to -o), exit 1 when any fails.
func (c *config) preflightOnly(ctx context.Context, s *session.Session, stdout io.Writer, say func(string, ...any)) error {
	checks := s.Preflight(ctx)
	if ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted during the preflight")}
	}
	doc := s.PreflightChecks()
	save := func(w io.Writer) error { return report.PreflightJSON(w, doc) }
	print := save
	if c.format.value != "json" {
		write, err := render.PreflightDoc(c.format.value, renderOptions(stdout), render.PreflightOptions{Verified: !c.insecure})
		if err != nil {
			return err
		}
		print = func(w io.Writer) error { return write(w, doc) }
	}
	werr := emit(stdout, print, c.output, save, say)
	var failed error
	for _, ch := range checks {
		if ch.Err != nil {
			failed = &exitError{code: exitFail, err: errors.New("preflight failed"), quiet: true} // the checks say it
		}
	}
	return outcome(werr, failed, ctx.Err() != nil)
}

// plan describes the run about to start (render.PlanLine), e.g. "10
// requests/s in total (3.333 per endpoint); for 30 s over 3 endpoints of
// sign.example.com: 127.0.0.1, 127.0.0.2, ::1",
// and warns when some endpoints would get no request.
func (c *config) plan(s *session.Session) string {
	var b strings.Builder
	n := len(s.Endpoints)
	o := s.Config().Engine
	b.WriteString(render.PlanLine(s.Plan(), n, s.String()))
	if planned := probe.PlannedRequests(o, n); planned != nil {
		var total, none int64
		for _, k := range planned {
			total += k
			if k == 0 {
				none++
			}
		}
		if none > 0 {
			fmt.Fprintf(&b, ". Warning: %d request%s in all, and %d of the %d endpoints will get none, so they will not be judged: raise -r or -d", total, words.Plural(int(total)), none, n)
		}
	}
	return b.String()
}

// sizeFor sets what depends on the number of endpoints of s: the most
// requests in flight per endpoint (-c, or the session's default) and per
// connection (1 for --new-conn, --conn-requests, or for auto the session's).
func (c *config) sizeFor(s *session.Session) {
	n, e := len(s.Endpoints), &s.Config().Engine
	load := session.Load{Rate: c.rate.rate, Max: c.rate.max, Duration: c.duration, Requests: c.requests,
		Timeout: c.timeout, UntilVerdict: c.untilSettled}
	e.Concurrency, e.ConnRequests = c.concurrency, c.connReqs.n
	if !c.setConc {
		e.Concurrency = load.Concurrency(n)
	}
	switch {
	case c.newConn:
		e.ConnRequests = 1
	case c.connReqs.auto:
		e.ConnRequests = load.ConnRequests(n)
	}
}

// timelineInterval is --interval, or for 0 the automatic width.
func (c *config) timelineInterval() time.Duration {
	if c.interval > 0 {
		return c.interval
	}
	return session.TimelineInterval(c.duration)
}

// targets builds the request of every target: the URL arguments and the
// targets file's blocks, with the flags' method, headers and body where a
// block gives none (session.Targets); it says which --resolve entries name
// none of them.
func (c *config) targets(say func(string, ...any)) ([]*probe.Target, error) {
	specs := make([]session.Spec, len(c.specs))
	for i, sp := range c.specs {
		specs[i] = session.Spec{URL: sp.url, Method: sp.method, Header: sp.header, Body: sp.body, HasBody: sp.hasBody}
	}
	out, err := session.Targets(specs, session.Defaults{Method: c.method, Header: c.headers.lines, Body: c.bodyBytes})
	if err != nil {
		return nil, usagef("%s", err)
	}
	for _, w := range session.ResolveMismatches(c.resolve.entries, out) {
		say("%s", w)
	}
	return out, nil
}

// resolver is the resolver the flags ask for: --resolve, --dns-server,
// -4 or -6.
func (c *config) resolver() *probe.Resolver {
	r := &probe.Resolver{Static: c.resolve.entries, Server: c.dns}
	if c.only4 {
		r.Only = probe.IPv4
	} else if c.only6 {
		r.Only = probe.IPv6
	}
	return r
}

// startDemo is --demo: it starts the demo's gateway with its access log,
// points the run at it (resolver and target) with the demo's own rate and
// duration where the flags give none, and says what it started.
func (c *config) startDemo(resolver *probe.Resolver, say func(string, ...any), stderr io.Writer) (*demo.Gateway, *demoAccessLog, error) {
	log := newDemoAccessLog(say, stderr)
	g, err := demo.StartLogged(log.writer())
	if err != nil {
		log.close()
		return nil, nil, &exitError{code: exitNoAddress, err: err}
	}
	if g.Note != "" {
		say("%s", g.Note)
	}
	if g.PortNote != "" {
		say("demo: %s", g.PortNote)
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
	if c.quiet {
		return g, log, nil
	}
	say("demo: an application gateway on %s port %d; its %s instance was given an IPv6 backend it cannot reach",
		probe.JoinAddrs(g.Addrs), g.Port, g.Failing)
	if g.Shared.IsValid() {
		say("demo: %s fronts %d gateway instances, each connection kept on one; instance %s has the unreachable backend too",
			g.Shared, demo.Instances, g.Broken)
	}
	return g, log, nil
}

// sessionConfig is the session the flags ask for, of targets resolved by
// resolver; args are the command's, for the report (secrets redacted).
func (c *config) sessionConfig(ctx context.Context, args []string, targets []*probe.Target, resolver *probe.Resolver, say func(string, ...any)) session.Config {
	return session.Config{
		Targets:  targets,
		Resolver: resolver,
		Engine: probe.Options{
			ConnOptions: probe.ConnOptions{Timeout: c.timeout, NewConn: c.newConn, HTTP: probe.HTTPVersion(c.http.value),
				TLS: c.tls, ConnAge: c.connAge},
			Rate:      c.rate.rate,
			Max:       c.rate.max,
			PaceGrain: c.paceGrain,
			Duration:  c.duration,
			Requests:  c.requests,
			UserAgent: "pinprobe/" + version,
			Client:    probe.ClientKind(c.client.value),
			GroupBy:   session.GroupHeaders(c.groupBy),
			RequestID: !c.noRequestID,
			Evidence:  probe.Evidence{Failed: c.fail.Fails, Samples: c.samples},
		},
		Fail:         c.fail,
		Interval:     c.timelineInterval(),
		AutoInterval: c.interval == 0,
		ReResolve:    c.reResolve,
		UntilVerdict: c.untilSettled,
		GroupBy:      session.CanonicalHeaders(c.groupBy),
		// The plan in the report is the engine's options as it normalised
		// them (the session fills it): nothing here is typed twice.
		Meta: report.Report{
			Version: version,
			Vantage: c.vantage,
			Command: append([]string{"pinprobe"}, redactArgs(args)...),
		},
		Log:     say,
		Abandon: abandonOf(ctx),
	}
}
