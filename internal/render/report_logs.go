package render

import "github.com/pinprobe/pinprobe/internal/words"

// logsSection is the queries that find the run's requests in the logs of
// the gateway that answered (of each gateway pinprobe knows, when none
// was recognised), and what to filter any other access log on.
func logsSection(v *View) Section {
	l, d := &v.Logs, documents
	s := Section{Heading: "Find these requests in your logs", ID: "logs", Nav: "Log queries", Blocks: []Block{Para{Only: d,
		Text: "pinprobe sent every request between " + utc(v.r.StartedAt) + " and " + utc(v.r.EndedAt) + " by this machine's clock. The queries below add " + words.Num(logMargin.Seconds()) + " s on each side; widen the window if that clock may be off."}}}
	add := func(b ...Block) { s.Blocks = append(s.Blocks, b...) }
	if !l.Known {
		add(Para{Only: d, Text: "pinprobe recognised no gateway's error page in the failures, so here are the queries for the gateways it knows; use the one in front of this host."})
	}
	// query is g's query of kind, after its title when titled (else the
	// paragraph before it says what it finds), when g has one.
	query := func(g *GatewayLogs, kind string, titled bool) {
		if q := g.Query(kind); q != nil {
			if titled {
				add(Para{Only: d, Text: q.Title + ":"})
			}
			add(Code{Only: d, Info: q.Lang, Text: q.Text})
		}
	}
	for i := range l.Gateways {
		g := &l.Gateways[i]
		switch g.Name {
		case GatewayAzure:
			add(Para{Only: d, Title: "Azure Application Gateway v2: AGWAccessLogs", Text: "For a gateway whose diagnostic setting sends its access log to a Log Analytics workspace in resource-specific mode. Which listener and backend (ServerRouted) answered pinprobe's requests, and with what:"})
			query(g, LogAGWSummary, false)
			query(g, LogAGWRows, true)
			query(g, LogAGWFailing, true)
			if l.PortFilter {
				add(Para{Only: d, Text: "If these return nothing, delete the port line: a NAT or proxy between this machine and the gateway changes the client port."})
			}
			add(Para{Only: d, Title: "Azure Application Gateway: AzureDiagnostics", Text: "For a diagnostic setting in the older Azure diagnostics mode, where the access log lands in the shared AzureDiagnostics table:"})
			query(g, LogAzureDiagnostics, false)
		case GatewayAWS:
			add(Para{Only: d, Title: "AWS Application Load Balancer: access logs in Athena", Text: "For an ALB whose access logs go to S3, queried through the alb_logs table of AWS's documented Athena definition. target_ip and target_port name the target that answered; an elb_status_code without a target_status_code is the load balancer's own error:"})
			query(g, LogALB, false)
			query(g, LogALBFailing, true)
		case GatewayNginx:
			add(Para{Only: d, Title: "nginx", Text: `nginx writes why it answered 502/504 to its error log, with the client and the upstream it tried (connect() failed (111: Connection refused) while connecting to upstream, client: …, upstream: "http://[2001:db8::9]:8080/"). Its times are the server's local time:`})
			query(g, LogNginx, false)
			add(Para{Only: d, Text: "To see the upstream of every request in the access log, add $upstream_addr $upstream_status $request_id to its log_format."})
		case GatewayHAProxy:
			add(Para{Only: d, Title: "HAProxy", Text: "With option httplog, each line starts with the client ip:port and names backend/server; the termination state (SC--: the server refused the connection, sH--: it timed out before the headers) says who ended the request:"})
			query(g, LogHAProxy, false)
			query(g, LogHAProxyFailing, true)
		}
	}
	add(Para{Only: d, Title: "Any other gateway, load balancer or backend", Text: "Filter its access log on:"})
	filters := List{Only: d}
	for _, f := range l.Filters {
		filters.Items = append(filters.Items, Item{Lead: f.Name, Spans: f.Value})
	}
	add(filters)
	return s
}
