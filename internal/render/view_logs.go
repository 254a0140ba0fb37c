package render

import (
	"cmp"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// logMargin widens the log queries' time window on each side: a gateway may
// stamp a request when it ends, and two machines' clocks differ.
const logMargin = 5 * time.Second

// Gateways pinprobe has log queries for, named as Fingerprint.Producer
// names them.
const (
	GatewayAzure   = "Azure Application Gateway"
	GatewayAWS     = "AWS ELB/ALB"
	GatewayNginx   = "nginx"
	GatewayHAProxy = "HAProxy"
)

// Log query kinds: which log a query reads, and what it finds there.
const (
	LogAGWSummary       = "agw-summary"       // Azure AGWAccessLogs: the requests by listener and backend
	LogAGWRows          = "agw-rows"          // the same requests one by one
	LogAGWFailing       = "agw-failing"       // the requests of the failing connections, one by one
	LogAzureDiagnostics = "azure-diagnostics" // the summary from the older AzureDiagnostics table
	LogALB              = "alb"               // Athena over an ALB's access logs: the failed requests
	LogALBFailing       = "alb-failing"       // the requests of the failing connections
	LogNginx            = "nginx"             // nginx's error log, and the access log's lines of this client
	LogHAProxy          = "haproxy"           // HAProxy's httplog lines of this client
	LogHAProxyFailing   = "haproxy-failing"   // those of the failing connections
)

// LogsView is what to look for in the gateway's logs, and the queries
// that find it, chosen by the gateway that answered the failures.
type LogsView struct {
	// Known is set when a failure's page named its gateway: Gateways are
	// those that answered. Otherwise Gateways are every one pinprobe
	// knows, to pick from.
	Known    bool
	Gateways []GatewayLogs
	// PortFilter is set when the queries filter on the client ports,
	// which a NAT or proxy in between changes.
	PortFilter bool
	// FailingPorts are the client ports of the failing connections (see
	// View.Conns), sorted.
	FailingPorts []int
	// Filters say what to filter any other access log on.
	Filters []LogFilter
}

// GatewayLogs is one gateway's queries.
type GatewayLogs struct {
	Name    string // GatewayAzure, …
	Queries []LogQuery
}

// LogQuery is one query, ready to paste.
type LogQuery struct {
	Kind  string // LogAGWSummary, …
	Lang  string // "kusto", "sql" or "sh"
	Title string // what it finds, in a plain sentence
	// Failing marks a query over the failing connections' ports alone.
	Failing bool
	Text    string
}

// LogFilter is one thing to filter an access log on.
type LogFilter struct {
	Name  string // "Time (UTC)", "Client ports", …
	Value []Span
}

// Span is a piece of a sentence: pinprobe's own words and numbers, text
// from outside (a host, a path, an error class: Outside, escaped where
// the format needs it), or Code (an ID, a flag).
type Span struct {
	Text    string
	Outside bool
	Code    bool
}

// Query returns the gateway's query of kind, nil when it has none.
func (g *GatewayLogs) Query(kind string) *LogQuery {
	if i := slices.IndexFunc(g.Queries, func(q LogQuery) bool { return q.Kind == kind }); i >= 0 {
		return &g.Queries[i]
	}
	return nil
}

// logs finds the queries of the gateways whose pages the failures carried,
// in the fingerprints' order (most failures first), or of every one
// pinprobe knows.
func (v *View) logs(r *report.Report) {
	q := &logQuery{from: r.StartedAt.Add(-logMargin).UTC(), to: r.EndedAt.Add(logMargin).UTC(), client: r.Client, fail: report.FailStatusOf(r)}
	q.hosts, q.paths = targetParts(r)
	if p := clientPorts(r.Client); p != nil {
		q.ports = "in (" + wrapInts(p) + ")"
	} else if c := r.Client; c.PortsCount > 0 {
		q.ports = fmt.Sprintf("between (%d .. %d)", c.PortMin, c.PortMax)
	}
	l := &v.Logs
	l.PortFilter = q.ports != ""
	for _, c := range v.Conns {
		for _, row := range c.Rows {
			l.FailingPorts = append(l.FailingPorts, int(row.LocalPort))
		}
	}
	slices.Sort(l.FailingPorts)
	l.FailingPorts = slices.Compact(l.FailingPorts)
	var gateways []string
	for _, f := range r.Fingerprints {
		if f.Producer != "" {
			gateways = append(gateways, f.Producer)
		}
	}
	gateways = words.Dedupe(gateways)
	l.Known = len(gateways) > 0
	if !l.Known {
		gateways = []string{GatewayAzure, GatewayAWS, GatewayNginx, GatewayHAProxy}
	}
	for _, name := range gateways {
		g := GatewayLogs{Name: name}
		// add adds a query that says something; one over the failing
		// connections' ports when there are any.
		add := func(kind, text, title string) {
			failing := strings.HasSuffix(kind, "-failing")
			if text != "" && (!failing || len(l.FailingPorts) > 0) {
				lang := cmp.Or(map[string]string{GatewayAzure: "kusto", GatewayAWS: "sql"}[name], "sh")
				g.Queries = append(g.Queries, LogQuery{Kind: kind, Lang: lang, Failing: failing, Text: text, Title: title})
			}
		}
		switch name {
		case GatewayAzure:
			fq := *q
			fq.ports = "in (" + wrapInts(l.FailingPorts) + ")"
			add(LogAGWSummary, q.agw(true), "Which listener and backend (ServerRouted) answered pinprobe's requests, and with what")
			add(LogAGWRows, q.agw(false), "The same requests one by one")
			add(LogAGWFailing, fq.agw(false), "The requests of the failing connections only: InstanceId is the gateway instance that served each, ServerRouted the backend it chose")
			add(LogAzureDiagnostics, q.diagnostics(), "The same summary where the access log lands in the shared AzureDiagnostics table (the older Azure diagnostics mode)")
		case GatewayAWS:
			add(LogALB, q.athena(clientPorts(r.Client)), "The failed requests in an ALB's access logs, through Athena's alb_logs table: target_ip and target_port name the target that answered")
			add(LogALBFailing, q.athena(l.FailingPorts), "The failed requests of the failing connections only")
		case GatewayNginx:
			add(LogNginx, q.nginxLog(), "Why nginx answered 502/504: its error log names the client and the upstream it tried")
		case GatewayHAProxy:
			add(LogHAProxy, haproxyLog(clientAddrs(r.Client), clientPorts(r.Client)), "This client's lines in HAProxy's httplog: the backend/server that answered, and the termination state")
			add(LogHAProxyFailing, haproxyLog(nil, l.FailingPorts), "The lines of the failing connections only")
		}
		if len(g.Queries) > 0 { // pinprobe has no queries for some gateways it recognises
			l.Gateways = append(l.Gateways, g)
		}
	}
	l.Filters = logFilters(r, q)
}

// logFilters lists what to filter any access log on.
func logFilters(r *report.Report, q *logQuery) []LogFilter {
	said := func(s string) []Span { return []Span{{Text: s}} }
	out := []LogFilter{{"Time (UTC)", said(utc(r.StartedAt) + " to " + utc(r.EndedAt) + ", give or take a few seconds")}}
	if addrs := clientAddrs(r.Client); len(addrs) > 0 {
		out = append(out,
			LogFilter{"Client address", []Span{{Text: strings.Join(addrs, ", "), Outside: true},
				{Text: " (as this machine sees itself; behind a NAT the gateway sees the NAT's public address)"}}},
			LogFilter{"Client ports", said(portWords(r.Client))})
	}
	var dests []string
	for _, e := range r.Endpoints {
		dests = append(dests, hostPort(e.Address, e.Port))
	}
	for _, f := range []struct {
		name   string
		values []string
	}{{"Server address (the addresses probed)", words.Dedupe(dests)}, {"Host header", q.hosts}, {"Request path", q.paths}} {
		if len(f.values) > 0 {
			out = append(out, LogFilter{f.name, []Span{{Text: strings.Join(f.values, ", "), Outside: true}}})
		}
	}
	out = append(out, LogFilter{"X-Request-Id", requestIDWords(r)}, LogFilter{"Status", failureWords(r, q.fail)})
	return out
}

// logQuery holds what the queries filter on.
type logQuery struct {
	from, to     time.Time // the run's window, logMargin wider each side
	hosts, paths []string  // Host header values, request paths
	ports        string    // "in (…)" or "between (a .. b)"; "" when no port is known
	client       report.Client
	fail         report.FailStatus
}

// clientPorts lists the client's ports when it has few enough to list,
// nil when there are more (the queries then take the range).
func clientPorts(c report.Client) []int {
	if c.PortsCount > 0 && c.PortsCount <= maxListedPorts && len(c.Ports) == c.PortsCount {
		return c.Ports
	}
	return nil
}

// clientAddrs lists the client's addresses that are IP addresses, as a log
// writes them (without a zone), each once: the queries and commands
// pinprobe suggests hold nothing else of a saved report's
// client.local_addresses.
func clientAddrs(c report.Client) []string {
	var out []string
	for _, s := range c.LocalAddresses {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.WithZone("").String())
		}
	}
	return words.Dedupe(out)
}

// wrapInts joins v with ", ", twelve to a line.
func wrapInts(v []int) string {
	var lines []string
	for c := range slices.Chunk(v, 12) {
		lines = append(lines, joinInts(c, ", "))
	}
	return strings.Join(lines, ",\n    ")
}

// failExpr is a KQL predicate true for the statuses that count as failures.
func (q *logQuery) failExpr(col string) string {
	parts := failRanges(q.fail, col, "%s == %d", "%s between (%d .. %d)")
	switch len(parts) {
	case 0:
		return "false"
	case 1:
		return parts[0]
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

// withNote is a filter line of a query and the comment that says when
// to delete it: after the line, or, for a filter of several lines, on a
// line of its own before them, naming the filter by where it ends ("delete
// this line" would break the query, and a count of lines would be wrong
// once a terminal wraps them).
func withNote(line, note string) string {
	if !strings.Contains(line, "\n") {
		return line + "  " + note + "\n"
	}
	note = strings.Replace(note, "delete this line", "delete the filter below, to its closing parenthesis,", 1)
	note = strings.Replace(note, "drop this line", "drop the filter below, to its closing parenthesis,", 1)
	return note + "\n" + line + "\n"
}

// agw returns the AGWAccessLogs query: a summary by backend when summary is
// set, else the requests one by one. Columns an older revision of the table
// may lack are read through column_ifexists, so it runs on every workspace.
func (q *logQuery) agw(summary bool) string {
	end := q.summarize("Listener, ServerRouted, HttpStatus, ServerStatus, ErrorInfo, InstanceId")
	if !summary {
		end = "| project TimeGenerated, ClientIp, Port, Listener, Host, RequestUri, HttpStatus, ServerStatus, ServerRouted,\n" +
			"    ServerResponseLatency, TimeTaken, ErrorInfo, TransactionId, InstanceId, BackendPoolName, BackendSettingName\n| order by TimeGenerated asc\n"
	}
	return q.kusto("AGWAccessLogs\n", "Host in~ (%[1]s) or OriginalHost in~ (%[1]s)",
		`Port = toint(column_ifexists("ClientPort", int(null))), Listener = tostring(column_ifexists("ListenerName", "")),`+"\n"+
			`    ErrorInfo = tostring(column_ifexists("ErrorInfo", ""))`, end)
}

// diagnostics returns the same summary for the AzureDiagnostics table.
func (q *logQuery) diagnostics() string {
	return q.kusto("AzureDiagnostics\n"+`| where Category == "ApplicationGatewayAccessLog"`+"\n", "host_s in~ (%s)",
		`HttpStatus = toint(httpStatus_d), ServerRouted = tostring(column_ifexists("serverRouted_s", "")),`+"\n"+
			`    ServerStatus = tostring(column_ifexists("serverStatus_s", "")), Port = toint(column_ifexists("clientPort_d", real(null))),`+"\n"+
			`    Listener = tostring(column_ifexists("listenerName_s", ""))`,
		q.summarize("Listener, ServerRouted, HttpStatus, ServerStatus, instanceId_s"))
}

// kusto is a query of an Azure table: head, the run's window, the hosts
// filter, the columns extended, the client ports, then end.
func (q *logQuery) kusto(head, hosts, extend, end string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s| where TimeGenerated between (datetime(%s) .. datetime(%s))\n", head, q.from.Format(mdTime), q.to.Format(mdTime))
	if len(q.hosts) > 0 {
		quoted := make([]string, len(q.hosts))
		for i, h := range q.hosts {
			quoted[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(h) + `"`
		}
		fmt.Fprintf(&b, "| where "+hosts+"\n", strings.Join(quoted, ", "))
	}
	b.WriteString("| extend " + extend + "\n")
	if q.ports != "" {
		b.WriteString(withNote("| where isnull(Port) or Port "+q.ports, "// the client ports pinprobe used: delete this line if a NAT or proxy sits between it and the gateway"))
	}
	return b.String() + end
}

// summarize counts the requests and failures by the columns by.
func (q *logQuery) summarize(by string) string {
	return fmt.Sprintf("| summarize Requests = count(), Failed = countif(%s), FirstSeen = min(TimeGenerated), LastSeen = max(TimeGenerated)\n"+
		"    by %s\n| order by Failed desc, Requests desc\n", q.failExpr("HttpStatus"), by)
}

// athena is an Athena query over an Application Load Balancer's access
// logs, in the table layout of AWS's documented CREATE TABLE (alb_logs):
// the failed requests of the run, from ports when there are any, else from
// the client's port range.
func (q *logQuery) athena(ports []int) string {
	var b strings.Builder
	b.WriteString("SELECT time, client_ip, client_port, target_ip, target_port, elb_status_code, target_status_code,\n")
	b.WriteString("       request_url, trace_id, error_reason, target_processing_time\n")
	b.WriteString("FROM alb_logs\n")
	fmt.Fprintf(&b, "WHERE time BETWEEN '%s' AND '%s'\n", q.from.Format(mdTime), q.to.Format(mdTime))
	const note = "-- pinprobe's client ports; drop this line behind a NAT"
	if c := q.client; len(ports) > 0 {
		b.WriteString(withNote("  AND client_port IN ("+wrapInts(ports)+")", note))
	} else if c.PortsCount > 0 {
		b.WriteString(withNote(fmt.Sprintf("  AND client_port BETWEEN %d AND %d", c.PortMin, c.PortMax), note))
	}
	fmt.Fprintf(&b, "  AND (%s)\n", cmp.Or(strings.Join(failRanges(q.fail, "elb_status_code", "%s = %d", "%s BETWEEN %d AND %d"), " OR "), "FALSE"))
	b.WriteString("ORDER BY time\n")
	return b.String()
}

// failRanges says each range of the statuses that fail as a predicate on
// col: one (col, status) for a single status, many (col, low, high) else.
func failRanges(fail report.FailStatus, col, one, many string) []string {
	var parts []string
	for _, r := range fail.Ranges() {
		if r[0] == r[1] {
			parts = append(parts, fmt.Sprintf(one, col, r[0]))
		} else {
			parts = append(parts, fmt.Sprintf(many, col, r[0], r[1]))
		}
	}
	return parts
}

// The shell commands below are built from pinprobe's own words, times it
// formats, numbers, and addresses that parsed as IP addresses (clientAddrs),
// and each argument made of them is quoted (words.ShellQuote): pasting one runs
// what it says and nothing else, whatever a saved report held.

// nginxLog finds the run in nginx's logs: its error log names the client,
// the upstream address and the reason of every failed proxying.
func (q *logQuery) nginxLog() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# the error log during the run (adjust the times to the server's time zone)\n")
	fmt.Fprintf(&b, "awk %s /var/log/nginx/error.log | grep upstream\n", words.ShellQuote(fmt.Sprintf(`$1" "$2 >= "%s" && $1" "$2 <= "%s"`,
		q.from.Format("2006/01/02 15:04:05"), q.to.Format("2006/01/02 15:04:05"))))
	if addrs := clientAddrs(q.client); len(addrs) > 0 {
		fmt.Fprintf(&b, "# the access log's lines from this client (the default format has no client port)\n")
		fmt.Fprintf(&b, "grep -E %s /var/log/nginx/access.log | grep ' \" [0-9]* ' \n", words.ShellQuote("^("+strings.Join(regexpQuote(addrs), "|")+") "))
	}
	return b.String()
}

// haproxyLog finds requests in HAProxy's log, whose httplog lines start
// with the client address and port: those from ports when there are any,
// else those from the client addresses (IP addresses: see clientAddrs); ""
// when there is neither.
func haproxyLog(addrs []string, ports []int) string {
	p := slices.DeleteFunc(slices.Clone(ports), func(n int) bool { return n <= 0 || n >= 1<<16 })
	switch {
	case len(p) > 0:
		return fmt.Sprintf("grep -E %s /var/log/haproxy.log\n", words.ShellQuote(":("+joinInts(p, "|")+`) \[`))
	case len(addrs) > 0:
		return fmt.Sprintf("grep -E %s /var/log/haproxy.log\n", words.ShellQuote("("+strings.Join(regexpQuote(addrs), "|")+`):[0-9]+ \[`))
	}
	return ""
}

func regexpQuote(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = regexp.QuoteMeta(s)
	}
	return out
}

var requestIDPattern = regexp.MustCompile(`^(pinprobe-[0-9a-f]+-)[0-9]+-[0-9]+$`)

// requestIDWords says which X-Request-Id values to look for: the run's
// prefix when pinprobe made them (each unique), and the samples' values.
func requestIDWords(r *report.Report) []Span {
	var ids, prefixes []string
	for _, e := range r.Endpoints {
		for _, s := range e.Samples {
			if m := requestIDPattern.FindStringSubmatch(s.RequestID); m != nil {
				prefixes = append(prefixes, m[1])
			}
			if s.RequestID != "" {
				ids = append(ids, s.RequestID)
			}
		}
	}
	own := len(prefixes) == len(ids) // every ID is one pinprobe made
	if len(ids) == 0 {
		return []Span{{Text: "none in this report: no request was kept as a sample ("}, {Text: "--samples 0", Code: true},
			{Text: "), or the run used "}, {Text: "--no-request-id", Code: true}}
	}
	codes := func(lead string, v []string, sep string) []Span {
		out := []Span{{Text: lead}}
		for i, id := range v {
			if i > 0 {
				out = append(out, Span{Text: sep})
			}
			out = append(out, Span{Text: id, Code: true})
		}
		return out
	}
	ids = words.Dedupe(ids)
	if !own {
		return codes("the samples above carried ", ids, ", ")
	}
	sort.Strings(prefixes)
	out := codes("every request carried a unique one, starting with ", slices.Compact(prefixes), " or ")
	out = append(out, Span{Text: ". Gateways usually pass it on to the backend, so its logs may have it too. "})
	return append(out, codes("The samples above: ", ids, ", ")...)
}

// failureWords lists the failing statuses to look for, and the failures that
// have no status to look for.
func failureWords(r *report.Report, fail report.FailStatus) []Span {
	statuses := map[string]int64{}
	for k, v := range r.Totals.Status {
		if n, err := strconv.Atoi(k); err == nil && fail.Fails(n) {
			statuses[k] = v
		}
	}
	var out []Span
	if len(statuses) > 0 {
		out = append(out, Span{Text: "failed requests were answered " + counts(statuses, " ×")})
	}
	if len(r.Totals.Errors) > 0 {
		if len(out) > 0 {
			out = append(out, Span{Text: "; "})
		}
		out = append(out, Span{Text: counts(r.Totals.Errors, " ×"), Outside: true},
			Span{Text: " got no HTTP response at all, so no log shows a status for them: look for refused, reset or timed-out connections at those times"})
	}
	if len(out) == 0 {
		return []Span{{Text: "no request failed"}}
	}
	return out
}

// targetParts returns the Host headers pinprobe sent (with and without the
// port, as a gateway may log either) and the request paths, sorted, once.
func targetParts(r *report.Report) (hosts, paths []string) {
	for _, t := range report.TargetsOf(r) {
		if u, err := url.Parse(t); err == nil {
			paths = append(paths, u.RequestURI())
			if u.Host != "" {
				hosts = append(hosts, u.Host, u.Hostname())
			}
		}
	}
	slices.Sort(hosts)
	slices.Sort(paths)
	return slices.Compact(hosts), slices.Compact(paths)
}
