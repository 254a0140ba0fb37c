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
	if q.ports != "" {
		fmt.Fprintf(&b, "| where ClientPort %s%s\n", q.ports, portNote)
	}
	errorInfo := `ErrorInfo = tostring(column_ifexists("ErrorInfo", ""))`
	if summary {
		fmt.Fprintf(&b, "| summarize Requests = count(), Failed = countif(%s), FirstSeen = min(TimeGenerated), LastSeen = max(TimeGenerated)\n", q.failExpr("HttpStatus"))
		fmt.Fprintf(&b, "    by ServerRouted, HttpStatus, ServerStatus, %s, InstanceId\n", errorInfo)
		b.WriteString("| order by Failed desc, Requests desc\n")
	} else {
		b.WriteString("| project TimeGenerated, ClientIp, ClientPort, Host, RequestUri, HttpStatus, ServerStatus, ServerRouted,\n")
		fmt.Fprintf(&b, "    ServerResponseLatency, TimeTaken, %s, TransactionId, InstanceId, BackendPoolName, BackendSettingName\n", errorInfo)
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
	if q.ports != "" {
		fmt.Fprintf(&b, "| where toint(clientPort_d) %s%s\n", q.ports, portNote)
	}
	b.WriteString(`| extend HttpStatus = toint(httpStatus_d), ServerRouted = tostring(column_ifexists("serverRouted_s", "")),` + "\n")
	b.WriteString(`    ServerStatus = tostring(column_ifexists("serverStatus_s", ""))` + "\n")
	fmt.Fprintf(&b, "| summarize Requests = count(), Failed = countif(%s), FirstSeen = min(TimeGenerated), LastSeen = max(TimeGenerated)\n", q.failExpr("HttpStatus"))
	b.WriteString("    by ServerRouted, HttpStatus, ServerStatus, instanceId_s\n")
	b.WriteString("| order by Failed desc, Requests desc\n")
	return b.String()
}

func (m *mdWriter) logs(r *Report) {
	q := newLogQuery(r, m.fail)
	m.printf("\n## Find these requests in your logs\n\n")
	m.printf("pinprobe sent every request between %s and %s by this machine's clock. The queries below add %s on each side; widen the window if that clock may be off.\n",
		utc(r.StartedAt), utc(r.EndedAt), strings.TrimSuffix(logMargin.String(), "s")+" s")

	m.printf("\n### Azure Application Gateway v2: `AGWAccessLogs`\n\n")
	m.printf("For a gateway whose diagnostic setting sends its access log to a Log Analytics workspace in *resource-specific* mode. Which backend (`ServerRouted`) answered pinprobe's requests, and with what:\n\n")
	m.code("kusto", q.agw(true))
	m.printf("\nThe same requests one by one:\n\n")
	m.code("kusto", q.agw(false))
	if q.ports != "" {
		m.printf("\nIf these return nothing, delete the `ClientPort` line: a NAT or proxy between this machine and the gateway changes the client port.\n")
	}

	m.printf("\n### Azure Application Gateway: `AzureDiagnostics`\n\n")
	m.printf("For a diagnostic setting in the older *Azure diagnostics* mode, where the access log lands in the shared `AzureDiagnostics` table:\n\n")
	m.code("kusto", q.diagnostics())

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
