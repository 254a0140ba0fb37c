package render

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// logs writes the queries of v.Logs, each gateway's under its own heading,
// and what to filter any other access log on.
func (m *mdWriter) logs(l *LogsView) {
	m.printf("\npinprobe sent every request between %s and %s by this machine's clock. The queries below add %s on each side; widen the window if that clock may be off.\n",
		l.From, l.To, l.Margin)
	gateways := l.Gateways
	if !l.Known {
		m.printf("\npinprobe recognised no gateway's error page in the failures, so here are the queries for the gateways it knows; use the one in front of this host.\n")
	}
	for i := range gateways {
		g := &gateways[i]
		switch g.Name {
		case GatewayAzure:
			m.azure(l, g)
		case GatewayAWS:
			m.aws(g)
		case GatewayNginx:
			m.nginx(g)
		case GatewayHAProxy:
			m.haproxy(g)
		}
	}
	m.generic(l)
}

// query writes g's query of kind as a code block, after lead when there is one.
func (m *mdWriter) query(g *GatewayLogs, kind, lead string) {
	q := g.Query(kind)
	if q == nil {
		return
	}
	if lead != "" {
		m.printf("\n%s\n\n", lead)
	}
	m.code(q.Lang, q.Text)
}

func (m *mdWriter) azure(l *LogsView, g *GatewayLogs) {
	m.printf("\n### Azure Application Gateway v2: `AGWAccessLogs`\n\n")
	m.printf("For a gateway whose diagnostic setting sends its access log to a Log Analytics workspace in *resource-specific* mode. Which listener and backend (`ServerRouted`) answered pinprobe's requests, and with what:\n\n")
	m.query(g, LogAGWSummary, "")
	m.query(g, LogAGWRows, "The same requests one by one:")
	m.query(g, LogAGWFailing, "The requests of the failing connections only: `InstanceId` is the gateway instance that served each, `ServerRouted` the backend it chose:")
	if l.PortFilter {
		m.printf("\nIf these return nothing, delete the port line: a NAT or proxy between this machine and the gateway changes the client port.\n")
	}
	m.printf("\n### Azure Application Gateway: `AzureDiagnostics`\n\n")
	m.printf("For a diagnostic setting in the older *Azure diagnostics* mode, where the access log lands in the shared `AzureDiagnostics` table:\n\n")
	m.query(g, LogAzureDiagnostics, "")
}

// aws writes the Athena queries over an Application Load Balancer's
// access logs.
func (m *mdWriter) aws(g *GatewayLogs) {
	m.printf("\n### AWS Application Load Balancer: access logs in Athena\n\n")
	m.printf("For an ALB whose access logs go to S3, queried through the `alb_logs` table of AWS's documented Athena definition. `target_ip`/`target_port` name the target that answered; `elb_status_code` without a `target_status_code` is the load balancer's own error:\n\n")
	m.query(g, LogALB, "")
	m.query(g, LogALBFailing, "The failed requests of the failing connections only:")
}

// nginx shows where nginx says which upstream failed: its error log names
// the client, the upstream address and the reason of every failed proxying.
func (m *mdWriter) nginx(g *GatewayLogs) {
	m.printf("\n### nginx\n\n")
	m.printf("nginx writes why it answered 502/504 to its **error log**, with the client and the upstream it tried (`connect() failed (111: Connection refused) while connecting to upstream, client: …, upstream: \"http://[2001:db8::9]:8080/\"`). Its times are the server's local time:\n\n")
	m.query(g, LogNginx, "")
	m.printf("\nTo see the upstream of every request in the access log, add `$upstream_addr $upstream_status $request_id` to its `log_format`.\n")
}

// haproxy shows how to find the requests in HAProxy's log, whose httplog
// lines start with the client address and port and name the backend and
// server, with a termination state that says who ended the request.
func (m *mdWriter) haproxy(g *GatewayLogs) {
	m.printf("\n### HAProxy\n\n")
	m.printf("With `option httplog`, each line starts with the client `ip:port` and names `backend/server`; the termination state (e.g. `SC--`: the server refused the connection, `sH--`: it timed out before the headers) says who ended the request:\n\n")
	m.query(g, LogHAProxy, "")
	m.query(g, LogHAProxyFailing, "The lines of the failing connections only:")
}

// generic lists what to filter any access log on.
func (m *mdWriter) generic(l *LogsView) {
	m.printf("\n### Any other gateway, load balancer or backend\n\n")
	m.printf("Filter its access log on:\n\n")
	for _, f := range l.Filters {
		m.printf("- **%s:** %s\n", f.Name, mdSpans(f.Value))
	}
}

// mdSpans writes spans as Markdown: code as code spans, text from outside
// escaped.
func mdSpans(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch {
		case s.Code:
			b.WriteString(codeSpan(s.Text))
		case s.Outside:
			// Lists of addresses keep their brackets (see mdAddr).
			items := strings.Split(s.Text, ", ")
			for i, it := range items {
				items[i] = mdAddr(it)
			}
			b.WriteString(strings.Join(items, ", "))
		default:
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// requestPaths lists the distinct paths (with query) of the targets.
func requestPaths(r *report.Report) []string {
	var paths []string
	for _, t := range report.TargetsOf(r) {
		if u, err := url.Parse(t); err == nil {
			paths = append(paths, u.RequestURI())
		}
	}
	sort.Strings(paths)
	return slices.Compact(paths)
}

// codeSpan writes s as inline code, with a backtick fence longer than any
// run of backticks in it.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(words.SafeText(s, false)), " ")
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
