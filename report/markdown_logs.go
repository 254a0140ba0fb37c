package report

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// logMargin widens the log queries' time window on each side: a gateway may
// stamp a request when it ends, and two machines' clocks differ.
const logMargin = 5 * time.Second

// The column names below are those of Azure Monitor's reference for the
// AGWAccessLogs table (learn.microsoft.com/azure/azure-monitor/reference/
// tables/agwaccesslogs) and for AzureDiagnostics (…/tables/azurediagnostics);
// columns a workspace may lack are read through column_ifexists, so the
// queries run everywhere.

// logQuery holds what the queries filter on.
type logQuery struct {
	from, to string   // KQL datetime literals
	hosts    []string // Host header values
	ports    string   // "in (…)" or "between (a .. b)"; "" when no port is known
	fail     FailStatus
}

func newLogQuery(r *Report, fail FailStatus) *logQuery {
	q := &logQuery{
		from:  "datetime(" + r.StartedAt.Add(-logMargin).UTC().Format(mdTime) + ")",
		to:    "datetime(" + r.EndedAt.Add(logMargin).UTC().Format(mdTime) + ")",
		hosts: hostHeaders(r),
		fail:  fail,
	}
	c := r.Client
	switch {
	case c.PortsCount == 0:
	case c.PortsCount <= maxListedPorts && len(c.Ports) == c.PortsCount:
		q.ports = "in (" + wrapInts(c.Ports, 12, "\n    ") + ")"
	default:
		q.ports = fmt.Sprintf("between (%d .. %d)", c.PortMin, c.PortMax)
	}
	return q
}

// wrapInts joins v with ", ", breaking the line after every n values.
func wrapInts(v []int, n int, indent string) string {
	var b strings.Builder
	for i, p := range v {
		if i > 0 {
			b.WriteString(", ")
			if i%n == 0 {
				b.WriteString(indent)
			}
		}
		b.WriteString(strconv.Itoa(p))
	}
	return b.String()
}

// failExpr is a KQL predicate true for the statuses that count as failures.
func (q *logQuery) failExpr(col string) string {
	var parts []string
	for lo := 100; lo <= 599; lo++ {
		if !q.fail.Fails(lo) {
			continue
		}
		hi := lo
		for hi+1 <= 599 && q.fail.Fails(hi+1) {
			hi++
		}
		if lo == hi {
			parts = append(parts, fmt.Sprintf("%s == %d", col, lo))
		} else {
			parts = append(parts, fmt.Sprintf("%s between (%d .. %d)", col, lo, hi))
		}
		lo = hi
	}
	switch len(parts) {
	case 0:
		return "false"
	case 1:
		return parts[0]
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

func kqlStrings(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	return strings.Join(q, ", ")
}

const portNote = "  // the client ports pinprobe used: delete this line if a NAT or proxy sits between it and the gateway"

// agw returns the AGWAccessLogs query: a summary by backend when summary is
// set, else the requests one by one.
func (q *logQuery) agw(summary bool) string {
	var b strings.Builder
	b.WriteString("AGWAccessLogs\n")
	fmt.Fprintf(&b, "| where TimeGenerated between (%s .. %s)\n", q.from, q.to)
	if len(q.hosts) > 0 {
		h := kqlStrings(q.hosts)
		fmt.Fprintf(&b, "| where Host in~ (%s) or OriginalHost in~ (%s)\n", h, h)
	}
	// Columns an older revision of the table may lack are read through
	// column_ifexists, so the query runs on every workspace.
	b.WriteString(`| extend Port = toint(column_ifexists("ClientPort", int(null))), Listener = tostring(column_ifexists("ListenerName", "")),` + "\n")
	b.WriteString(`    ErrorInfo = tostring(column_ifexists("ErrorInfo", ""))` + "\n")
	if q.ports != "" {
		fmt.Fprintf(&b, "| where isnull(Port) or Port %s%s\n", q.ports, portNote)
	}
	if summary {
		fmt.Fprintf(&b, "| summarize Requests = count(), Failed = countif(%s), FirstSeen = min(TimeGenerated), LastSeen = max(TimeGenerated)\n", q.failExpr("HttpStatus"))
		b.WriteString("    by Listener, ServerRouted, HttpStatus, ServerStatus, ErrorInfo, InstanceId\n")
		b.WriteString("| order by Failed desc, Requests desc\n")
	} else {
		b.WriteString("| project TimeGenerated, ClientIp, Port, Listener, Host, RequestUri, HttpStatus, ServerStatus, ServerRouted,\n")
		b.WriteString("    ServerResponseLatency, TimeTaken, ErrorInfo, TransactionId, InstanceId, BackendPoolName, BackendSettingName\n")
		b.WriteString("| order by TimeGenerated asc\n")
	}
	return b.String()
}

// diagnostics returns the same summary for the AzureDiagnostics table.
func (q *logQuery) diagnostics() string {
	var b strings.Builder
	b.WriteString("AzureDiagnostics\n")
	b.WriteString(`| where Category == "ApplicationGatewayAccessLog"` + "\n")
	fmt.Fprintf(&b, "| where TimeGenerated between (%s .. %s)\n", q.from, q.to)
	if len(q.hosts) > 0 {
		fmt.Fprintf(&b, "| where host_s in~ (%s)\n", kqlStrings(q.hosts))
	}
	b.WriteString(`| extend HttpStatus = toint(httpStatus_d), ServerRouted = tostring(column_ifexists("serverRouted_s", "")),` + "\n")
	b.WriteString(`    ServerStatus = tostring(column_ifexists("serverStatus_s", "")), Port = toint(column_ifexists("clientPort_d", real(null))),` + "\n")
	b.WriteString(`    Listener = tostring(column_ifexists("listenerName_s", ""))` + "\n")
	if q.ports != "" {
		fmt.Fprintf(&b, "| where isnull(Port) or Port %s%s\n", q.ports, portNote)
	}
	fmt.Fprintf(&b, "| summarize Requests = count(), Failed = countif(%s), FirstSeen = min(TimeGenerated), LastSeen = max(TimeGenerated)\n", q.failExpr("HttpStatus"))
	b.WriteString("    by Listener, ServerRouted, HttpStatus, ServerStatus, instanceId_s\n")
	b.WriteString("| order by Failed desc, Requests desc\n")
	return b.String()
}

func (m *mdWriter) logs(r *Report) {
	q := newLogQuery(r, m.fail)
	m.printf("\n## Find these requests in your logs\n\n")
	m.printf("pinprobe sent every request between %s and %s by this machine's clock. The queries below add %s on each side; widen the window if that clock may be off.\n",
		utc(r.StartedAt), utc(r.EndedAt), strings.TrimSuffix(logMargin.String(), "s")+" s")
	gateways := answeredBy(r)
	known := len(gateways) > 0
	if !known && m.brief {
		gateways = nil
	} else if !known {
		// No error page was recognised: offer every gateway pinprobe knows.
		gateways = []string{"Azure Application Gateway", "AWS ELB/ALB", "nginx", "HAProxy"}
		m.printf("\npinprobe recognised no gateway's error page in the failures, so here are the queries for the gateways it knows; use the one in front of this host.\n")
	}
	for _, g := range gateways {
		switch g {
		case "Azure Application Gateway":
			m.azure(q)
		case "AWS ELB/ALB":
			m.aws(r, q)
		case "nginx":
			m.nginx(r)
		case "HAProxy":
			m.haproxy(r)
		}
	}
	m.generic(r, q)
}

// failingPorts lists the client ports of the failing connections, sorted.
func failingPorts(v *View) []int {
	if v == nil {
		return nil
	}
	var ports []int
	for _, c := range v.Conns {
		for _, r := range c.Rows {
			ports = append(ports, int(r.Port))
		}
	}
	sort.Ints(ports)
	return slices.Compact(ports)
}

// answeredBy lists the recognised gateways that produced failures, in the
// order of the fingerprints (most failures first).
func answeredBy(r *Report) []string {
	var out []string
	for _, f := range r.Fingerprints {
		if f.Producer != "" {
			out = append(out, f.Producer)
		}
	}
	return dedupe(out)
}

func (m *mdWriter) azure(q *logQuery) {
	m.printf("\n### Azure Application Gateway v2: `AGWAccessLogs`\n\n")
	m.printf("For a gateway whose diagnostic setting sends its access log to a Log Analytics workspace in *resource-specific* mode. Which listener and backend (`ServerRouted`) answered pinprobe's requests, and with what:\n\n")
	m.code("kusto", q.agw(true))
	if !m.brief {
		m.printf("\nThe same requests one by one:\n\n")
		m.code("kusto", q.agw(false))
	}
	if ports := failingPorts(m.view); len(ports) > 0 {
		m.printf("\nThe requests of the failing connections only: `InstanceId` is the gateway instance that served each, `ServerRouted` the backend it chose:\n\n")
		fq := *q
		fq.ports = "in (" + wrapInts(ports, 12, "\n    ") + ")"
		m.code("kusto", fq.agw(false))
	}
	if q.ports != "" {
		m.printf("\nIf these return nothing, delete the port line: a NAT or proxy between this machine and the gateway changes the client port.\n")
	}
	if m.brief {
		return
	}
	m.printf("\n### Azure Application Gateway: `AzureDiagnostics`\n\n")
	m.printf("For a diagnostic setting in the older *Azure diagnostics* mode, where the access log lands in the shared `AzureDiagnostics` table:\n\n")
	m.code("kusto", q.diagnostics())
}

// aws writes an Athena query over an Application Load Balancer's access
// logs, in the table layout of AWS's documented CREATE TABLE (alb_logs).
func (m *mdWriter) aws(r *Report, q *logQuery) {
	m.printf("\n### AWS Application Load Balancer: access logs in Athena\n\n")
	m.printf("For an ALB whose access logs go to S3, queried through the `alb_logs` table of AWS's documented Athena definition. `target_ip`/`target_port` name the target that answered; `elb_status_code` without a `target_status_code` is the load balancer's own error:\n\n")
	var b strings.Builder
	b.WriteString("SELECT time, client_ip, client_port, target_ip, target_port, elb_status_code, target_status_code,\n")
	b.WriteString("       request_url, trace_id, error_reason, target_processing_time\n")
	b.WriteString("FROM alb_logs\n")
	fmt.Fprintf(&b, "WHERE time BETWEEN '%s' AND '%s'\n", r.StartedAt.Add(-logMargin).UTC().Format(mdTime), r.EndedAt.Add(logMargin).UTC().Format(mdTime))
	if c := r.Client; c.PortsCount > 0 && c.PortsCount <= maxListedPorts && len(c.Ports) == c.PortsCount {
		fmt.Fprintf(&b, "  AND client_port IN (%s)  -- pinprobe's client ports; drop this line behind a NAT\n", wrapInts(c.Ports, 12, "\n    "))
	} else if c.PortsCount > 0 {
		fmt.Fprintf(&b, "  AND client_port BETWEEN %d AND %d  -- pinprobe's client ports; drop this line behind a NAT\n", c.PortMin, c.PortMax)
	}
	fmt.Fprintf(&b, "  AND (%s)\n", sqlFail(q.fail, "elb_status_code"))
	b.WriteString("ORDER BY time\n")
	m.code("sql", b.String())
}

// sqlFail is a SQL predicate true for the statuses that count as failures.
func sqlFail(fail FailStatus, col string) string {
	var parts []string
	for lo := 100; lo <= 599; lo++ {
		if !fail.Fails(lo) {
			continue
		}
		hi := lo
		for hi+1 <= 599 && fail.Fails(hi+1) {
			hi++
		}
		if lo == hi {
			parts = append(parts, fmt.Sprintf("%s = %d", col, lo))
		} else {
			parts = append(parts, fmt.Sprintf("%s BETWEEN %d AND %d", col, lo, hi))
		}
		lo = hi
	}
	if len(parts) == 0 {
		return "FALSE"
	}
	return strings.Join(parts, " OR ")
}

// nginx shows where nginx says which upstream failed: its error log names
// the client, the upstream address and the reason of every failed proxying.
func (m *mdWriter) nginx(r *Report) {
	m.printf("\n### nginx\n\n")
	m.printf("nginx writes why it answered 502/504 to its **error log**, with the client and the upstream it tried (`connect() failed (111: Connection refused) while connecting to upstream, client: …, upstream: \"http://[2001:db8::9]:8080/\"`). Its times are the server's local time:\n\n")
	from, to := r.StartedAt.Add(-logMargin), r.EndedAt.Add(logMargin)
	var b strings.Builder
	fmt.Fprintf(&b, "# the error log during the run (adjust the times to the server's time zone)\n")
	fmt.Fprintf(&b, "awk '$1\" \"$2 >= \"%s\" && $1\" \"$2 <= \"%s\"' /var/log/nginx/error.log | grep upstream\n",
		from.UTC().Format("2006/01/02 15:04:05"), to.UTC().Format("2006/01/02 15:04:05"))
	if c := r.Client; len(c.LocalAddresses) > 0 {
		fmt.Fprintf(&b, "# the access log's lines from this client (the default format has no client port)\n")
		fmt.Fprintf(&b, "grep -E '^(%s) ' /var/log/nginx/access.log | grep ' \" [0-9]* ' \n", strings.Join(regexpQuote(c.LocalAddresses), "|"))
	}
	m.code("sh", b.String())
	m.printf("\nTo see the upstream of every request in the access log, add `$upstream_addr $upstream_status $request_id` to its `log_format`.\n")
}

// haproxy shows how to find the requests in HAProxy's log, whose httplog
// lines start with the client address and port and name the backend and
// server, with a termination state that says who ended the request.
func (m *mdWriter) haproxy(r *Report) {
	m.printf("\n### HAProxy\n\n")
	m.printf("With `option httplog`, each line starts with the client `ip:port` and names `backend/server`; the termination state (e.g. `SC--`: the server refused the connection, `sH--`: it timed out before the headers) says who ended the request:\n\n")
	var b strings.Builder
	if c := r.Client; c.PortsCount > 0 && c.PortsCount <= maxListedPorts && len(c.Ports) == c.PortsCount {
		ports := make([]string, len(c.Ports))
		for i, p := range c.Ports {
			ports[i] = strconv.Itoa(p)
		}
		fmt.Fprintf(&b, "grep -E ':(%s) \\[' /var/log/haproxy.log\n", strings.Join(ports, "|"))
	} else {
		fmt.Fprintf(&b, "grep -E '(%s):[0-9]+ \\[' /var/log/haproxy.log\n", strings.Join(regexpQuote(r.Client.LocalAddresses), "|"))
	}
	m.code("sh", b.String())
}

func regexpQuote(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = regexp.QuoteMeta(s)
	}
	return out
}

// generic lists what to filter any access log on.
func (m *mdWriter) generic(r *Report, q *logQuery) {
	m.printf("\n### Any other gateway, load balancer or backend\n\n")
	m.printf("Filter its access log on:\n\n")
	m.printf("- **Time (UTC):** %s to %s, give or take a few seconds\n", utc(r.StartedAt), utc(r.EndedAt))
	if c := r.Client; len(c.LocalAddresses) > 0 {
		m.printf("- **Client address:** %s (as this machine sees itself; behind a NAT the gateway sees the NAT's public address)\n", strings.Join(c.LocalAddresses, ", "))
		m.printf("- **Client ports:** %s\n", portWords(c))
	}
	var dests []string
	for _, e := range r.Endpoints {
		dests = append(dests, hostPort(e.Address, e.Port))
	}
	if dests = dedupe(dests); len(dests) > 0 {
		m.printf("- **Server address (the addresses probed):** %s\n", strings.Join(dests, ", "))
	}
	if len(q.hosts) > 0 {
		m.printf("- **Host header:** %s\n", mdText(strings.Join(q.hosts, ", ")))
	}
	if paths := requestPaths(r); len(paths) > 0 {
		m.printf("- **Request path:** %s\n", mdText(strings.Join(paths, ", ")))
	}
	m.printf("- **X-Request-Id:** %s\n", requestIDWords(r))
	m.printf("- **Status:** %s\n", failureWords(r, m.fail))
}

// requestPaths lists the distinct paths (with query) of the targets.
func requestPaths(r *Report) []string {
	var paths []string
	for _, t := range targetsOf(r) {
		if u, err := url.Parse(t); err == nil {
			paths = append(paths, u.RequestURI())
		}
	}
	sort.Strings(paths)
	return slices.Compact(paths)
}

var requestIDPattern = regexp.MustCompile(`^(pinprobe-[0-9a-f]+-)[0-9]+-[0-9]+$`)

// requestIDWords says which X-Request-Id values to look for: the run's
// prefix when pinprobe made them (each unique), and the samples' values.
func requestIDWords(r *Report) string {
	var ids, prefixes []string
	own := true // every ID is one pinprobe made
	for _, e := range r.Endpoints {
		for _, s := range e.Samples {
			if s.RequestID == "" {
				continue
			}
			ids = append(ids, s.RequestID)
			if m := requestIDPattern.FindStringSubmatch(s.RequestID); m != nil {
				prefixes = append(prefixes, m[1])
			} else {
				own = false
			}
		}
	}
	if len(ids) == 0 {
		return "none in this report: no request was kept as a sample (`--samples 0`), or the run used `--no-request-id`"
	}
	ids = dedupe(ids)
	for i, id := range ids {
		ids[i] = codeSpan(id)
	}
	if !own {
		return "the samples above carried " + strings.Join(ids, ", ")
	}
	sort.Strings(prefixes)
	prefixes = slices.Compact(prefixes)
	for i, p := range prefixes {
		prefixes[i] = codeSpan(p)
	}
	return "every request carried a unique one, starting with " + strings.Join(prefixes, " or ") +
		". Gateways usually pass it on to the backend, so its logs may have it too. The samples above: " + strings.Join(ids, ", ")
}

// failureWords lists the failing statuses to look for, and the failures that
// have no status to look for.
func failureWords(r *Report, fail FailStatus) string {
	statuses := map[string]int64{}
	for k, v := range r.Totals.Status {
		if n, err := strconv.Atoi(k); err == nil && fail.Fails(n) {
			statuses[k] = v
		}
	}
	var parts []string
	if len(statuses) > 0 {
		parts = append(parts, "failed requests were answered "+counts(statuses, " ×"))
	}
	if len(r.Totals.Errors) > 0 {
		parts = append(parts, mdText(counts(r.Totals.Errors, " ×"))+" got no HTTP response at all, so no log shows a status for them: look for refused, reset or timed-out connections at those times")
	}
	if len(parts) == 0 {
		return "no request failed"
	}
	return strings.Join(parts, "; ")
}

// codeSpan writes s as inline code, with a backtick fence longer than any
// run of backticks in it.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(safeText(s, false)), " ")
	n := 1
	for _, run := range backtickRun.FindAllString(s, -1) {
		n = max(n, len(run)+1)
	}
	fence := strings.Repeat("`", n)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
