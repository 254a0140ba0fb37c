package main

import (
	"context"
	"errors"
	"io"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/accesslog"
	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/words"
)

// logsCommand is `pinprobe logs REPORT LOG...`: a saved run joined with a
// gateway's access logs, per backend, instance and listener.
func logsCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &logsConfig{}
	fs := newLogsFlagSet(c)
	if err := parseFileCommand(fs, args, "logs: ", &c.help, &c.files, c.validate); err != nil {
		return err
	}
	if c.help {
		logsHelp.write(stdout, fs)
		return nil
	}
	c.say = sayer(stderr)
	doc, err := c.join(ctx, stdin)
	if err != nil {
		return err
	}
	renderer, err := render.JoinForFormat(c.format.value, renderOptions(stdout))
	if err != nil {
		return usagef("%s", err)
	}
	return emit(stdout, func(w io.Writer) error { return renderer(w, doc) },
		c.output, func(w io.Writer) error { return join.JSON(w, doc) }, c.say)
}

// join reads the saved report (the first of c.files) and joins it with
// every access log after it. The demo calls it with the command it prints.
func (c *logsConfig) join(ctx context.Context, stdin io.Reader) (*join.Join, error) {
	reps, err := readReports(ctx, c.files[:1], stdin)
	if err != nil {
		return nil, err
	}
	j := join.New(reps[0], join.Options{MaxOffset: c.maxOffset, Clients: c.clients})
	for _, name := range c.files[1:] {
		if err := c.readLog(ctx, j, name, stdin); err != nil {
			return nil, err
		}
	}
	doc := j.Finish()
	doc.Run.File = c.files[0]
	return doc, nil
}

// readLog streams one access log into j: a file (plain or gzip), or "-"
// for standard input. A log in no format pinprobe knows is a usage error
// naming the file; a log cut short is read as far as it goes, and said.
func (c *logsConfig) readLog(ctx context.Context, j *join.Joiner, name string, stdin io.Reader) error {
	f, _, err := openInput("read log", name, stdin, true, giveFile, math.MaxInt64)
	if err != nil {
		return err
	}
	defer f.Close()
	shown := shownName(name)
	r, err := accesslog.Open(ctxReader{ctx, f}, accesslog.Options{Kind: accesslog.Kind(c.logType.value), Format: c.logFormat, Vars: c.logVars})
	if errors.Is(err, errInterrupted) || ctx.Err() != nil {
		return interruptedReading(shown)
	}
	var doc *accesslog.PinprobeDocError
	if errors.As(err, &doc) {
		if strings.HasPrefix(doc.Schema, "pinprobe.report/") {
			return usagef("%s is a pinprobe report, not an access log: merge the runs first with `pinprobe report --format json %s %s > merged.json`, then join merged.json with the logs", shown, c.files[0], shown)
		}
		return usagef("%s is a pinprobe document (%s), not an access log: give the saved report first, then the gateway's access logs", shown, doc.Schema)
	}
	if err != nil {
		return usagef("read log %s: %s", shown, err)
	}
	if !c.noted {
		// What a custom format leaves unread is said once, not per log.
		c.noted = true
		for _, n := range r.Notes() {
			if c.say != nil {
				c.say("warning: --log-format: %s", n)
			}
		}
	}
	if err := j.Add(shown, r); err != nil {
		if ctx.Err() != nil {
			return interruptedReading(shown)
		}
		return usagef("read log %s: %s", shown, bareErr(err))
	}
	return nil
}

// ctxReader stops reading once ctx ends: Ctrl-C while a large log streams.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, errInterrupted
	}
	return c.r.Read(p)
}

// logsConfig is the logs command's options.
type logsConfig struct {
	format    choiceValue
	output    string
	logType   choiceValue
	logFormat string
	logVars   []string
	clientStr []string
	clients   []netip.Addr
	maxOffset time.Duration
	help      bool
	files     []string
	// say writes a line to stderr (nil: nothing is said); noted is set
	// once the format's notes were said.
	say   func(format string, a ...any)
	noted bool
}

// newLogsFlagSet declares the logs command's flags, each filling its field
// of c; logsHelp orders them for --help.
func newLogsFlagSet(c *logsConfig) *pflag.FlagSet {
	fs := newCommandFlagSet("pinprobe logs")
	c.format = choiceValue{value: "text", choices: documentFormats}
	fs.Var(&c.format, "format", "join `FORMAT` on stdout: text, json (pinprobe.logs/v1), markdown or html")
	fs.StringVarP(&c.output, "output", "o", "", "also write the JSON join to `FILE`")
	kinds := []string{""}
	for _, k := range accesslog.Kinds {
		kinds = append(kinds, string(k))
	}
	c.logType = choiceValue{value: "", choices: kinds}
	fs.Var(&c.logType, "log-type", "the logs' `KIND`: nginx, haproxy, azure, alb, envoy, traefik or gcp (default: detected from the first lines)")
	fs.StringVar(&c.logFormat, "log-format", "", "the logs' custom `FORMAT`: an nginx log_format string ($remote_addr …, or the directive pasted from nginx.conf), a HAProxy log-format string (%ci:%cp …) or an Envoy format (%START_TIME% …, or a json_format object)")
	fs.StringArrayVar(&c.logVars, "log-var", nil, "a variable `NAME` of your nginx configuration's own (map, set) that --log-format names; repeatable")
	fs.StringArrayVar(&c.clientStr, "client", nil, "an `ADDRESS` the gateway sees pinprobe as (behind a NAT); repeatable (default: learned from the lines matched by request ID or client port, else the run's own addresses)")
	fs.DurationVar(&c.maxOffset, "max-offset", 2*time.Minute, "the largest clock offset between pinprobe and the gateway considered (a log of local times without a zone, HAProxy's %tr, is searched 14h further either way)")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

// logsHelp is `pinprobe logs --help`: its text, then its flags under headings.
var logsHelp = commandHelp{"logs", `pinprobe logs: join a saved run with the gateway's access logs, to name the
backend behind its failures.

Usage:
  pinprobe logs [flags] REPORT.json LOG...
  (- reads the report or one log from standard input)

Logs may be gzip-compressed, UTF-8 or UTF-16 (with a byte-order mark).
Formats: nginx (combined, or --log-format with
your log_format; log $upstream_addr, $upstream_status, $remote_port and
$http_x_request_id to name backends and match single requests), HAProxy
(option httplog, or --log-format with its variables and sample fetches:
date with utime or ltime, src, srv_name…; a fetch pinprobe does not know is
skipped with a warning), Azure Application Gateway exports
(AGWAccessLogs or AzureDiagnostics from Log Analytics: the portal's CSV,
az monitor log-analytics query -o json, the API's tables; the records
diagnostic settings send to Event Hub or storage, v1 or v2), AWS ALB
access logs, Envoy's (Istio, Envoy Gateway, Contour, Emissary: the default
format, Istio's text or JSON, or --log-format with a text_format or
json_format; %RESPONSE_FLAGS% is read as the reason), Traefik (common or
JSON; keep X-Request-Id with accessLog.fields.headers) and Google Cloud
load balancer logs (JSON, as gcloud logging read --format=json prints
them).

A line is the run's when it carries one of its request IDs, or else when its
client address is the run's and its time is in the run's window; the clock
offset between pinprobe and the gateway is measured from the lines matched
to single requests and printed. The run's lines are counted per backend (with
its address family), gateway instance and listener, each tested against the
rest of its kind; lines that could not be placed and requests of the run the
log lacks are counted and named, and each log says what its format cannot
tell. Google Cloud logs a sample of the requests (logConfig.sampleRate): the
requests its log lacks are the sample's, not missing from the gateway. An
offset measured from the times alone is kept within --max-offset: past it,
the log is of another time. A line to a path, host or listener none of the
run's endpoints has is "no known endpoint"; a request logged twice (a log
given twice, rotated files that overlap) is counted once, the copies named;
HAProxy's <BADREQ> line of pinprobe's preflight check is counted as such. A ✗
marks what a test found failing more than the rest.

The first word is the join's status: FAILURES TRACED, UNTRACED (failures, and
the logs name no backend), NO FAILURE or NOTHING JOINED. One report at a time:
merge runs first with pinprobe report --format json a.json b.json > merged.json.
`, []flagGroup{
	{"Logs", []string{"log-type", "log-format", "log-var"}},
	{"Join", []string{"client", "max-offset"}},
	{"Output", []string{"format", "output"}},
	{"Other", []string{"help"}},
}}

// validate checks the report and logs given, the clients, the format and
// that -o can be written.
func (c *logsConfig) validate() error {
	if len(c.files) < 2 {
		return usagef("logs: want a saved report and at least one access log (REPORT.json LOG...); got %d file%s", len(c.files), words.Plural(len(c.files)))
	}
	if stdin := len(c.files) - len(slices.DeleteFunc(slices.Clone(c.files), func(f string) bool { return f == "-" })); stdin > 1 {
		return usagef("logs: - (standard input) is given %d times", stdin)
	}
	for _, s := range c.clientStr {
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
		if err != nil {
			return usagef("--client %q: not an IP address", s)
		}
		c.clients = append(c.clients, a.Unmap())
	}
	if c.maxOffset < 0 || c.maxOffset > 24*time.Hour {
		return usagef("--max-offset %s: want 0 to 24h", c.maxOffset)
	}
	if c.logFormat != "" && slices.Contains([]string{"azure", "alb", "traefik", "gcp"}, c.logType.value) {
		return usagef("--log-format is for nginx, HAProxy and Envoy logs; %s logs have a format of their own", c.logType.value)
	}
	if err := accesslog.CheckFormat(accesslog.Options{Kind: accesslog.Kind(c.logType.value), Format: c.logFormat, Vars: c.logVars}); err != nil {
		return usagef("%s", err)
	}
	if len(c.logVars) > 0 && c.logFormat == "" {
		return usagef("--log-var declares variables of --log-format: give --log-format too")
	}
	return checkOutput(c.output)
}
