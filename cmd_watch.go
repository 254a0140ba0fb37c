package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/pinprobe/pinprobe/internal/detect"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/session"
	"github.com/pinprobe/pinprobe/internal/watch"
)

// Defaults of the watch: a load a production fleet does not notice, and
// a retire grace longer than a DNS rotation.
const (
	watchRate   = 4 // requests/s over all endpoints: 1/s per address of a host of four
	watchListen = ":9786"
)

// watchCommand is `pinprobe watch [flags] URL...`: probe every address of
// each host until stopped, and serve what it sees as Prometheus metrics.
// It exits 0 when stopped, 2 on a usage error or a listener it cannot
// open; a failing target never ends it.
func watchCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, fs, err := parseWatchArgs(args)
	if err != nil {
		return err
	}
	if c.help {
		watchHelp.write(stdout, fs)
		return nil
	}
	if err := c.load(ctx, stdin); err != nil {
		if errors.Is(err, errInterrupted) {
			return nil
		}
		return err
	}
	say := sayer(stderr)
	if c.webConfig != "" {
		if err := web.Validate(c.webConfig); err != nil {
			return usagef("watch: --web-config %s: %s", c.webConfig, err)
		}
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return usagef("watch: --listen %s: %s", c.listen, cause(err))
	}
	defer ln.Close()
	targets, err := c.targets(say)
	if err != nil {
		return err
	}
	cfg := c.sessionConfig(ctx, append([]string{"watch"}, args...), targets, c.resolver(), say)
	cfg.Engine.Duration, cfg.Engine.Requests = c.duration, 0
	vantage := ""
	if c.vantageSet {
		vantage = c.vantage
	}
	w := watch.New(watch.Options{GroupBy: cfg.Engine.GroupBy, Retire: c.retire, MaxBackends: c.maxBackends, Vantage: vantage,
		Detector: detect.Default, Events: stderr, JSON: c.events.value == "json"})
	page := &livePage{w: w, vantage: vantage}
	srv := &http.Server{Handler: watchMux(page), ReadHeaderTimeout: 10 * time.Second}
	if c.webConfig == "" {
		go srv.Serve(ln)
	} else {
		// TLS and basic auth as an exporter's web config says (the
		// exporter toolkit's own reading of it, checked above).
		flags := &web.FlagConfig{WebListenAddresses: &[]string{c.listen}, WebSystemdSocket: new(bool), WebConfigFile: &c.webConfig}
		go web.Serve(ln, srv, flags, slog.New(slog.DiscardHandler))
	}
	defer srv.Close()

	s, err := c.resolveUntil(ctx, cfg, say)
	if s == nil {
		return err // stopped before any address was found
	}
	c.sizeFor(s)
	base, protected := "http://"+ln.Addr().String(), ""
	if c.webConfig != "" {
		base, protected = webScheme(c.webConfig)+"://"+ln.Addr().String(), " (protected as "+c.webConfig+" says)"
	}
	where := base + "/metrics" + protected + ", the live page on " + base + "/"
	say("watching at %g req/s: %s; metrics on %s", c.rate.rate, s.String(), where)
	var done func(*report.Report)
	if c.output != "" {
		kept := newKeptWindows(c.output, c.keep, say)
		defer kept.close()
		done = kept.add
	}
	win := s.Windows(c.window, done)
	page.win.Store(win)
	return s.Watch(ctx, w, win)
}

// resolveUntil resolves the targets, and while none has an address asks
// again every --re-resolve (every 30s when it is 0): a watch waits for its
// fleet rather than exit. nil when ctx ended first.
func (c *watchConfig) resolveUntil(ctx context.Context, cfg session.Config, say func(string, ...any)) (*session.Session, error) {
	every := c.reResolve
	if every <= 0 {
		every = 30 * time.Second
	}
	log := cfg.Log
	for said := false; ; said = true {
		if said {
			cfg.Log = func(string, ...any) {} // said once is enough
		}
		s, err := session.New(ctx, cfg)
		if s != nil {
			s.Config().Log = log
		}
		switch {
		case errors.Is(err, session.ErrInterrupted):
			return nil, nil
		case err == nil:
			return s, nil
		case !errors.Is(err, session.ErrNoAddress):
			return nil, err
		}
		if !said {
			say("no address for any target yet: asking again every %s", every)
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(every):
		}
	}
}

// cause is a listen error without its "listen tcp ADDR: " prefix.
func cause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// watchConfig is the watch command's options: the probe's addressing,
// request, connection and grouping flags (config's fields, declared by
// the same methods), and the watch's own.
type watchConfig struct {
	config
	listen      string
	webConfig   string
	events      choiceValue
	retire      time.Duration
	maxBackends int
	vantageSet  bool // --vantage given: its label on every series
	window      time.Duration
	keep        int
	keepSet     bool // --keep given
}

// newWatchFlagSet declares the watch's flags, and every other flag of the
// probe hidden, so that one is refused with a line that says why.
func newWatchFlagSet(c *watchConfig, refused *[]string) *pflag.FlagSet {
	fs := newCommandFlagSet("pinprobe watch")
	c.rate = rateValue{rate: watchRate}
	fs.VarP(&c.rate, "rate", "r", "`RATE` in requests/s over all endpoints, split evenly; the default suits production: 1 req/s per address of a host of four")
	durationVarP(fs, &c.duration, "duration", "d", 0, "s", [2]string{"1h", "30s"}, "stop after `DURATION` (0 = until SIGTERM or Ctrl-C)")
	c.addAddressFlags(fs)
	c.addConnFlags(fs)
	c.addRequestFlags(fs)
	c.addGroupFlags(fs)
	fs.StringVar(&c.webConfig, "web-config", "", "protect the listener as the exporter web configuration `FILE` says (Prometheus exporters' format: tls_server_config, basic_auth_users with bcrypt hashes)")
	fs.StringVar(&c.listen, "listen", watchListen, "serve Prometheus metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9786; port 0 picks one)")
	c.events = choiceValue{value: "text", choices: []string{"text", "json"}}
	fs.Var(&c.events, "events", "each start and end of a suspect as one line on stderr: `FORMAT` text or json (JSON lines)")
	durationVarP(fs, &c.retire, "retire-after", "", watch.DefaultRetire, "s", [2]string{"10m", "1h"}, "delete the series of an address that left DNS, or of an instance header's value no longer seen, `DURATION` after")
	durationVarP(fs, &c.window, "window", "", watchWindow, "s", [2]string{"5m", "1m"}, "judge each `DURATION` of requests as a report of its own: the live page on the listener's / shows the window in progress and the last that ended")
	fs.StringVarP(&c.output, "output", "o", "", "keep each window's report (JSON) in `DIR`, the newest --keep of them")
	countVarP(fs, &c.keep, "keep", "", watchKeep, "reports", 48, "with -o, keep the newest `N` windows' reports and delete the older; the default is a day of 5-minute windows")
	fs.StringVar(&c.vantage, "vantage", "", "label every series vantage=`NAME` (a zone, region or machine; @FILE reads it from FILE, as a Kubernetes init step writes it), so that watches from several places tell theirs apart")
	countVarP(fs, &c.maxBackends, "max-backends", "", watch.DefaultMaxBackends, "values", 16, "give the `N` busiest values of the instance headers of each host their own series; the rest are \"other\"")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	probe := newFlagSet(&config{})
	probe.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		r := fs.VarPF(&refusedValue{name: f.Name, refused: refused, bool: f.Value.Type() == "bool"}, f.Name, f.Shorthand, "")
		r.Hidden = true
		if f.Value.Type() == "bool" {
			r.NoOptDefVal = "true"
		}
	})
	return fs
}

// refusedValue is a probe flag the watch does not take: setting it notes
// its name.
type refusedValue struct {
	name    string
	bool    bool
	refused *[]string
}

func (v *refusedValue) String() string { return "" }
func (v *refusedValue) Type() string {
	if v.bool {
		return "bool"
	}
	return "string"
}
func (v *refusedValue) Set(string) error {
	*v.refused = append(*v.refused, v.name)
	return nil
}

// watchHelp is `pinprobe watch --help`: its text, then its flags under headings.
var watchHelp = commandHelp{"watch", `pinprobe watch: probe every A and AAAA address of each host until stopped,
serve what it sees as Prometheus metrics, and say when an address, a family
or an instance starts and stops failing more than the rest (an outage when
every address fails).

Usage:
  pinprobe watch [flags] URL...

GET / on the listener is the report of the window in progress (the last
that ended with ?window=last) as HTML, ?format=markdown, text or json, with
the suspects since the watch began (as JSON: /suspects); -o DIR keeps each
window's report.
The flags that shape one run's report (-n, --until-verdict, the release
gates, --format, ...) are refused. A restart starts the detector afresh.
docs/watch.md lists the metrics and the detector's false alarms and delays.
`, []flagGroup{
	{"Load", []string{"rate", "duration"}},
	{"Addresses", []string{"ipv4", "ipv6", "resolve", "dns-server", "re-resolve"}},
	{"Request", []string{"targets", "method", "header", "body", "timeout", "http", "client", "cacert", "insecure", "no-request-id"}},
	{"Connections", []string{"conn-requests", "conn-age", "new-conn"}},
	{"Verdict and metrics", []string{"fail-status", "group-by", "listen", "web-config", "events", "retire-after", "max-backends", "vantage"}},
	{"Live page and reports", []string{"window", "output", "keep"}},
	{"Other", []string{"help"}},
}}

// parseWatchArgs fills a watchConfig from the command line and validates it.
func parseWatchArgs(args []string) (*watchConfig, *pflag.FlagSet, error) {
	c := &watchConfig{}
	var refused []string
	fs := newWatchFlagSet(c, &refused)
	if err := parseFlags(fs, args, &c.help, "watch: "); err != nil {
		return nil, fs, err
	}
	c.urls, c.setRate, c.setDur = fs.Args(), fs.Changed("rate"), fs.Changed("duration")
	c.vantageSet, c.keepSet = fs.Changed("vantage"), fs.Changed("keep")
	if c.help {
		return c, fs, nil
	}
	if len(refused) > 0 {
		return nil, fs, usagef("watch: --%s is a flag of a probe run, not of a watch: a watch runs until stopped, judging each --window (pinprobe watch --help lists its flags)", refused[0])
	}
	if err := c.validate(); err != nil {
		return nil, fs, err
	}
	return c, fs, nil
}

// validate checks the watch's own flags, then the probe's it shares; every
// refusal but --vantage's says it is the watch's.
func (c *watchConfig) validate() error {
	if err := c.checkVantageFlag(); err != nil {
		return err
	}
	refuse := func(format string, a ...any) error { return usagef("watch: "+format, a...) }
	switch {
	case len(c.urls) == 0 && c.targetsFile == "":
		return refuse("no URL given: pinprobe watch [flags] URL... (or --targets FILE)")
	case c.rate.max:
		return refuse("--rate max sends back to back: a watch needs a rate (default %d req/s)", watchRate)
	case c.duration < 0:
		return refuse("--duration %s: must not be negative", c.duration)
	case c.retire < time.Second:
		return refuse("--retire-after %s: must be at least 1s", c.retire)
	case c.maxBackends < 1 || c.maxBackends > 1000:
		return refuse("--max-backends %d: must be 1 to 1000", c.maxBackends)
	case c.window < time.Second || c.window > 24*time.Hour:
		return refuse("--window %s: must be 1s to 24h", c.window)
	case c.keep < 1:
		return refuse("--keep %d: must be at least 1", c.keep)
	case c.keepSet && c.output == "":
		return refuse("--keep keeps the windows' reports of -o DIR: give -o DIR too")
	}
	if c.output != "" {
		if err := checkWindowDir(c.output); err != nil {
			return refuse("-o %s: %s", c.output, cause(err))
		}
	}
	if err := c.config.validate(); err != nil {
		return refuse("%s", err)
	}
	return nil
}

// webScheme is the scheme the listener serves under the exporter web
// configuration file: https when it configures TLS. The file was checked
// (web.Validate) before.
func webScheme(file string) string {
	var cfg web.Config
	if b, err := os.ReadFile(file); err == nil && yaml.Unmarshal(b, &cfg) == nil &&
		(cfg.TLSConfig.TLSCertPath != "" || cfg.TLSConfig.TLSCert != "") {
		return "https"
	}
	return "http"
}
