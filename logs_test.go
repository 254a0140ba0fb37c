package main

// pinprobe logs end to end: real nginx and HAProxy gateways on loopback,
// each with a healthy upstream and a dead one, their access logs (default
// and custom formats) joined with the run pinprobe saved.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// joinRun runs `pinprobe logs --format json REPORT LOG... extra` and
// decodes the join, checked against its schema.
func joinRun(t *testing.T, reportPath string, logs []string, extra ...string) *join.Join {
	t.Helper()
	args := append([]string{"logs", "--format", "json"}, extra...)
	args = append(append(args, reportPath), logs...)
	code, stdout, stderr := pinprobe(t, args...)
	if code != 0 {
		t.Fatalf("pinprobe %s: exit %d; stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	checkSchema(t, kindLogs, []byte(stdout))
	var j join.Join
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("decode join: %v\n%s", err, stdout)
	}
	t.Logf("pinprobe logs %s: %s", strings.Join(extra, " "), j.Conclusion)
	t.Logf("  offset: %s; lines %+v", j.Offset.Describe(), j.Lines)
	return &j
}

// probeSaved runs pinprobe against host (resolved to 127.0.0.1 and ::1)
// and saves the report; it returns the report's path and the run's
// request count.
func probeSaved(t *testing.T, host string, n int) (string, *report.Report) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.json")
	// The built command, not the race-instrumented in-process run: a
	// request's start and the gateway's log line must lie within the
	// join's tolerance, and under the race detector on a loaded machine a
	// worker stalled 100 ms between the two (1 CI-like run in 15).
	code, stdout, stderr := pinprobeProcess(t, "-q", "--format", "json", "-o", path, "--rate", "400", "--requests", fmt.Sprint(n),
		"--resolve", host+":127.0.0.1,::1", "http://"+host+"/sign")
	if code != 0 {
		t.Fatalf("probe: exit %d; stderr:\n%s", code, stderr)
	}
	return path, decodeReport(t, []byte(stdout))
}

// checkTraced checks a join of a run against a gateway whose ::1 listener
// routes to the dead upstream dead and whose 127.0.0.1 listener to the
// healthy one ok: every request of the run found, the dead upstream named
// the failing backend, the healthy one cleared.
func checkTraced(t *testing.T, j *join.Join, rep *report.Report, dead, ok string) {
	t.Helper()
	if j.Lines.Run != rep.Totals.Requests || j.Missing.Requests != 0 {
		t.Errorf("%d lines of the run found of %d requests (missing %d); want every one", j.Lines.Run, rep.Totals.Requests, j.Missing.Requests)
	}
	if j.Lines.NoEndpoint != 0 {
		t.Errorf("%d lines not placed on an endpoint (%v); want none", j.Lines.NoEndpoint, j.Lines.NoEndpointAt)
	}
	var sawDead, sawOK bool
	for _, b := range j.Backends {
		switch {
		case strings.Contains(b.Name, dead):
			sawDead = true
			if b.Failed == 0 || b.Failed != b.Requests || b.Endpoints["::1"] != b.Requests {
				t.Errorf("dead backend %s: %d failed of %d, via %v; want all failed, all through ::1", b.Name, b.Failed, b.Requests, b.Endpoints)
			}
		case strings.Contains(b.Name, ok):
			sawOK = true
			if b.Failed != 0 || b.Endpoints["127.0.0.1"] != b.Requests {
				t.Errorf("healthy backend %s: %d failed of %d, via %v; want none failed, all through 127.0.0.1", b.Name, b.Failed, b.Requests, b.Endpoints)
			}
		default:
			t.Errorf("unexpected backend %q (%d requests)", b.Name, b.Requests)
		}
	}
	if !sawDead || !sawOK {
		t.Errorf("backends %+v; want the dead %s and the healthy %s", j.Backends, dead, ok)
	}
	if !strings.Contains(j.Conclusion, dead) || !strings.Contains(j.Conclusion, "routed to") {
		t.Errorf("conclusion %q; want it to name %s as where the failures were routed", j.Conclusion, dead)
	}
	cleared := false
	for _, f := range j.Findings {
		if strings.Contains(f.Text, ok) && strings.Contains(f.Text, "answered every request") {
			cleared = true
		}
	}
	if !cleared {
		t.Errorf("findings %+v; want %s cleared", j.Findings, ok)
	}
	for _, e := range j.Endpoints {
		if e.Address == "::1" && (e.TrailFailed == 0 || e.FailedMatched != e.TrailFailed) {
			t.Errorf("::1: %d of %d failed requests matched to their line; want every one", e.FailedMatched, e.TrailFailed)
		}
	}
}

// nginxPinFormat is the log_format the README suggests: everything the
// join reads.
const nginxPinFormat = `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent ` +
	`up=$upstream_addr us=$upstream_status rid=$http_x_request_id srv=$server_addr:$server_port rt=$request_time`

// TestLogsNginx: nginx on 127.0.0.1 and [::1], the IPv4 server proxying
// to a healthy upstream, the IPv6 server to a closed loopback port (nginx
// answers 502); nginx writes its access log in the default combined
// format and in the README's custom one. Both are joined with the run.
func TestLogsNginx(t *testing.T) {
	t.Parallel()
	upstream, dead := splitUpstreams(t)
	testserver.NginxBinary(t)
	port := testserver.FreePort(t, testserver.Lo4a, testserver.Lo6)
	listen := []netip.AddrPort{netip.AddrPortFrom(testserver.Lo4a, port), netip.AddrPortFrom(testserver.Lo6, port)}
	logs := t.TempDir()
	combined, custom := filepath.Join(logs, "combined.log"), filepath.Join(logs, "pin.log")
	logLines := fmt.Sprintf("access_log %s; access_log %s pin;", combined, custom)
	testserver.Nginx(t, fmt.Sprintf(`  log_format pin '%s';
  server { listen %s; %s location / { proxy_pass http://%s; } }
  server { listen %s; %s location / { proxy_pass http://%s; } }
`, nginxPinFormat, listen[0], logLines, upstream, listen[1], logLines, dead), listen...)

	reportPath, rep := probeSaved(t, fmt.Sprintf("gw.test:%d", port), 80)

	t.Run("custom log_format", func(t *testing.T) {
		j := joinRun(t, reportPath, []string{custom}, "--log-format", "log_format pin '"+nginxPinFormat+"';")
		if j.Lines.ByRequestID != rep.Totals.Requests {
			t.Errorf("%d lines placed by request ID; want all %d", j.Lines.ByRequestID, rep.Totals.Requests)
		}
		if !j.Offset.Measured || j.Offset.By != "request ID" || j.Offset.MS < -1100 || j.Offset.MS > 1100 {
			t.Errorf("offset %+v; want measured by request ID, within a second (one clock)", j.Offset)
		}
		checkTraced(t, j, rep, dead.String(), upstream.String())
		for _, b := range j.Backends {
			if strings.Contains(b.Name, dead.String()) && b.Family != "ipv6" {
				t.Errorf("dead backend %s: family %q; want ipv6", b.Name, b.Family)
			}
		}
		// The same log given twice (or rotated logs that overlap): each
		// request once, the copies counted.
		j = joinRun(t, reportPath, []string{custom, custom}, "--log-format", "log_format pin '"+nginxPinFormat+"';")
		if j.Lines.Duplicates != rep.Totals.Requests || len(j.Lines.DuplicatesAt) == 0 {
			t.Errorf("the log given twice: %d duplicates (%v); want %d", j.Lines.Duplicates, j.Lines.DuplicatesAt, rep.Totals.Requests)
		}
		checkTraced(t, j, rep, dead.String(), upstream.String())
	})
	t.Run("combined", func(t *testing.T) {
		j := joinRun(t, reportPath, []string{combined})
		if j.Lines.Run != rep.Totals.Requests || j.Lines.ByWindow != rep.Totals.Requests {
			t.Errorf("%d lines of the run (%d by address and time); want all %d", j.Lines.Run, j.Lines.ByWindow, rep.Totals.Requests)
		}
		if j.Offset.By != "time" || !strings.Contains(j.Offset.Why, "neither request IDs nor client ports") || j.Offset.MS < -1100 || j.Offset.MS > 1100 {
			t.Errorf("offset %+v; want it estimated from the times alone, within a second, and why", j.Offset)
		}
		for _, e := range j.Endpoints {
			if e.Logged != e.Requests || e.LoggedFailed != e.Failed {
				t.Errorf("%s: %d logged (%d failed) of %d sent (%d failed); want every one placed by its client's family", e.Address, e.Logged, e.LoggedFailed, e.Requests, e.Failed)
			}
		}
		if len(j.Backends) != 0 || !strings.Contains(j.Conclusion, "$upstream_addr") || j.Status != join.StatusUntraced {
			t.Errorf("backends %+v, status %q, conclusion %q; want none (combined logs no upstream), untraced, and the advice to log $upstream_addr", j.Backends, j.Status, j.Conclusion)
		}
		// Twice: no request counted twice.
		j = joinRun(t, reportPath, []string{combined, combined})
		if j.Lines.Run != rep.Totals.Requests || j.Lines.Duplicates != rep.Totals.Requests {
			t.Errorf("the combined log given twice: %d lines of the run, %d duplicates; want %d and %d", j.Lines.Run, j.Lines.Duplicates, rep.Totals.Requests, rep.Totals.Requests)
		}
	})
	t.Run("merged runs", func(t *testing.T) {
		// A second run through the same gateway (after the subtests
		// above: combined cannot tell two runs of one client apart),
		// merged with the first (pinprobe report): the join places the
		// requests of both by their IDs.
		second, rep2 := probeSaved(t, fmt.Sprintf("gw.test:%d", port), 40)
		merged := filepath.Join(t.TempDir(), "merged.json")
		if code, _, stderr := pinprobe(t, "report", "--format", "json", "-o", merged, reportPath, second); code != 0 {
			t.Fatalf("report: exit %d: %s", code, stderr)
		}
		j := joinRun(t, merged, []string{custom}, "--log-format", nginxPinFormat)
		want := rep.Totals.Requests + rep2.Totals.Requests
		if j.Run.Requests != want || j.Lines.Run != want || j.Lines.ByRequestID != want || j.Missing.Requests != 0 {
			t.Errorf("merged run of %d requests: %d lines placed (%d by request ID), %d missing; want every one by its ID", j.Run.Requests, j.Lines.Run, j.Lines.ByRequestID, j.Missing.Requests)
		}
		if !strings.Contains(j.Conclusion, dead.String()) {
			t.Errorf("conclusion %q; want %s named", j.Conclusion, dead)
		}
	})
}

// TestLogsHAProxy: HAProxy with a frontend on 127.0.0.1 routed to a
// healthy server and one on [::1] routed to a closed loopback port
// (HAProxy answers 503), logging to stdout in the default HTTP log
// format, then in a custom log-format with the captured X-Request-Id.
func TestLogsHAProxy(t *testing.T) {
	t.Parallel()
	upstream, dead := splitUpstreams(t)
	testserver.HAProxyBinary(t)
	const custom = `%ci:%cp [%tr] %ft %b/%s %si:%sp %ST %Ta %tsc %[capture.req.hdr(0)] %{+Q}r`
	// Sample fetches only, but for the status, the duration and the
	// termination state: an ISO time through utime, the date in ms, the
	// addresses, names and IDs, and a fetch pinprobe does not know
	// (be_server_timeout), which is skipped and said.
	const samples = `%[src]:%[src_port] %[dst]:%[dst_port] [%[date,utime(%Y-%m-%dT%H:%M:%S+00:00)]] %[date(0,ms)] %[fe_name] ` +
		`%[be_name]/%[srv_name] %[bc_dst]:%[bc_dst_port] %ST %Ta %tsc %[unique-id] %[capture.req.hdr(0)] %[be_server_timeout] %{+Q}r`
	for _, tt := range []struct {
		name, logFormat string
		args            []string
		warn            string
	}{
		{"httplog", "option httplog", nil, ""},
		{"custom log-format", "http-request capture req.hdr(X-Request-Id) len 80\n  log-format \"" + custom + "\"", []string{"--log-format", custom}, ""},
		{"sample fetches", "http-request capture req.hdr(X-Request-Id) len 80\n  unique-id-format %{+X}o\\ %ci:%cp_%fi:%fp_%Ts_%rt:%pid\n  log-format \"" + samples + "\"",
			[]string{"--log-format", `log-format "` + samples + `"`}, "warning: --log-format: %[be_server_timeout] is a sample fetch pinprobe does not know"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			port := testserver.FreePort(t, testserver.Lo4a, testserver.Lo6)
			listen := []netip.AddrPort{netip.AddrPortFrom(testserver.Lo4a, port), netip.AddrPortFrom(testserver.Lo6, port)}
			front := func(name string, at netip.AddrPort, be string) string {
				return fmt.Sprintf("frontend %s\n  mode http\n  bind %s\n  log stdout format raw local0\n  %s\n  default_backend %s\n\n", name, at, tt.logFormat, be)
			}
			p := testserver.HAProxy(t, front("fe_v4", listen[0], "be_ok")+front("fe_v6", listen[1], "be_dead")+
				fmt.Sprintf("backend be_ok\n  mode http\n  server ok %s\n\nbackend be_dead\n  mode http\n  retries 0\n  server dead %s\n", upstream, dead), listen...)
			reportPath, rep := probeSaved(t, fmt.Sprintf("gw.test:%d", port), 60)
			logPath := filepath.Join(t.TempDir(), "haproxy.log")
			if err := os.WriteFile(logPath, []byte(p.Log()), 0o644); err != nil {
				t.Fatal(err)
			}
			j := joinRun(t, reportPath, []string{logPath}, tt.args...)
			checkTraced(t, j, rep, "be_dead/dead", "be_ok/ok")
			// HAProxy's own reason, its termination state, in words: the
			// closed port refused every connection.
			if want := "; the gateway says: it could not connect to the backend: refused or reset (SC"; !strings.Contains(j.Conclusion, want) {
				t.Errorf("conclusion %q; want it to say %q", j.Conclusion, want)
			}
			if !j.Offset.Measured {
				t.Errorf("offset %+v; want measured", j.Offset)
			}
			if tt.args != nil && j.Lines.ByRequestID != rep.Totals.Requests {
				t.Errorf("%d lines placed by request ID; want all %d", j.Lines.ByRequestID, rep.Totals.Requests)
			}
			if tt.args != nil {
				for _, b := range j.Backends {
					if want := map[string]string{"be_dead/dead": "ipv6", "be_ok/ok": "ipv4"}[b.Name]; b.Family != want {
						t.Errorf("backend %s: family %q; want %q (from %%si)", b.Name, b.Family, want)
					}
				}
			}
			// pinprobe's preflight connects to each endpoint and closes:
			// HAProxy logs a <BADREQ> 400 for each, the run's own.
			if j.Lines.Preflight != int64(len(rep.Endpoints)) || j.Lines.OtherClients != 0 {
				t.Errorf("lines %+v; want the %d preflight connections counted as such, none of other clients", j.Lines, len(rep.Endpoints))
			}
			if tt.args == nil && j.Lines.ByPort == 0 {
				t.Errorf("no line placed by client port: %+v", j.Lines)
			}
			if tt.warn != "" {
				// What is not read is said, once; the text join names
				// the dead server.
				args := append(append([]string{"logs"}, tt.args...), reportPath, logPath)
				code, stdout, stderr := pinprobe(t, args...)
				if code != 0 || strings.Count(stderr, tt.warn) != 1 || !strings.Contains(stdout, "be_dead/dead") ||
					!strings.Contains(strings.Join(strings.Fields(stdout), " "), "it could not connect to the backend: refused or reset (SC--)") {
					t.Errorf("pinprobe %s: exit %d; stderr %q; want %q once, the dead server named, SC-- in words:\n%s", strings.Join(args, " "), code, stderr, tt.warn, stdout)
				}
				t.Logf("pinprobe logs, text:\n%s", stdout)
				for _, b := range j.Backends {
					if want := map[string]string{"be_dead/dead": "SC--", "be_ok/ok": ""}[b.Name]; want != "" && b.Reasons[want] != b.Failed {
						t.Errorf("backend %s: reasons %v; want all %d %s", b.Name, b.Reasons, b.Failed, want)
					}
				}
			}
		})
	}
}

// TestLogsEnvoy: a proxy on 127.0.0.1 routed to a healthy upstream and on
// [::1] to a closed loopback port (written 503, as Envoy answers a refused
// connection, flag UF). Real Envoy is not installed: the proxy's record of
// each request is written field for field in Envoy's default format (with
// the client's X-Request-Id kept, and with Envoy's own IDs as an edge
// proxy writes them), Istio's and a custom json_format, and each log is
// joined with the run.
func TestLogsEnvoy(t *testing.T) {
	t.Parallel()
	upstream, dead := splitUpstreams(t)
	var mu sync.Mutex
	var served []testserver.Proxied
	proxy := testserver.StartLoggingProxy(t, map[netip.Addr]*url.URL{
		testserver.Lo4a: {Scheme: "http", Host: upstream.String()}, testserver.Lo6: {Scheme: "http", Host: dead.String()},
	}, func(p *testserver.Proxied) {
		mu.Lock()
		defer mu.Unlock()
		served = append(served, *p)
	})
	clusters := map[string]string{upstream.String(): "outbound|80||sign-ok", dead.String(): "outbound|80||sign-dead"}
	reportPath, rep := probeSaved(t, fmt.Sprintf("gw.test:%d", proxy.Port), 60)

	type fields struct {
		start, method, path, proto, flags, details, failure, svcTime, client, local, agent, rid, host, upstream, cluster string
		status, ms                                                                                                       int
	}
	lineOf := func(pr testserver.Proxied, uuid bool, n int) fields {
		f := fields{start: pr.Start.UTC().Format("2006-01-02T15:04:05.000Z"), method: pr.Method, path: pr.Path, proto: pr.Proto, flags: "-",
			details: "via_upstream", failure: "-", svcTime: fmt.Sprint(pr.Duration.Milliseconds()), client: pr.Client.String(), local: pr.Server.String(),
			agent: pr.Agent, rid: pr.RequestID, host: pr.Host, upstream: pr.Backend.Host, cluster: clusters[pr.Backend.Host], status: pr.Status, ms: int(pr.Duration.Milliseconds())}
		if pr.Err != nil {
			// Envoy answers a refused connection 503, flag UF.
			f.status, f.flags, f.details, f.failure, f.svcTime = 503, "UF", "upstream_reset_before_response_started{connection_failure}", "delayed_connect_error:_Connection_refused", "-"
		}
		if uuid {
			f.rid = fmt.Sprintf("84961386-6d84-929d-98bd-%012x", n)
		}
		return f
	}
	write := func(name string, line func(f fields) string, uuid bool) string {
		var b strings.Builder
		mu.Lock()
		defer mu.Unlock()
		for i, pr := range served {
			b.WriteString(line(lineOf(pr, uuid, i)) + "\n")
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Envoy's default format; at the edge (use_remote_address) it
	// appends the client to X-Forwarded-For.
	def := func(f fields) string {
		return fmt.Sprintf(`[%s] "%s %s %s" %d %s 0 7 %d %s "%s" "%s" "%s" "%s" "%s"`, f.start, f.method, f.path, f.proto, f.status, f.flags,
			f.ms, f.svcTime, strings.Trim(f.client[:strings.LastIndexByte(f.client, ':')], "[]"), f.agent, f.rid, f.host, f.upstream)
	}
	istio := func(f fields) string {
		return fmt.Sprintf(`[%s] "%s %s %s" %d %s %s - "%s" 0 7 %d %s "-" "%s" "%s" "%s" "%s" %s - %s %s - default`, f.start, f.method, f.path, f.proto,
			f.status, f.flags, f.details, f.failure, f.ms, f.svcTime, f.agent, f.rid, f.host, f.upstream, f.cluster, f.local, f.client)
	}
	const jsonFormat = `{"start_time": "%START_TIME%", "client": "%DOWNSTREAM_REMOTE_ADDRESS%", "code": "%RESPONSE_CODE%", "flags": "%RESPONSE_FLAGS%", ` +
		`"upstream": "%UPSTREAM_HOST%", "cluster": "%UPSTREAM_CLUSTER%", "id": "%REQ(X-REQUEST-ID)%", "ms": "%DURATION%"}`
	jsonLine := func(f fields) string {
		b, err := json.Marshal(map[string]any{"start_time": f.start, "client": f.client, "code": f.status, "flags": f.flags,
			"upstream": f.upstream, "cluster": f.cluster, "id": f.rid, "ms": f.ms})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct {
		name, format string
		log          string
		args         []string
		by           func(l join.Lines) int64
	}{
		{"default", "Envoy default", write("default.log", def, false), nil, func(l join.Lines) int64 { return l.ByRequestID }},
		{"default, Envoy's own request IDs", "Envoy default", write("edge.log", def, true), nil, func(l join.Lines) int64 { return l.ByWindow }},
		{"Istio", "Istio (Envoy)", write("istio.log", istio, false), nil, func(l join.Lines) int64 { return l.ByRequestID }},
		{"json_format", "Envoy json_format", write("json.log", jsonLine, false), []string{"--log-type", "envoy", "--log-format", jsonFormat},
			func(l join.Lines) int64 { return l.ByRequestID }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := joinRun(t, reportPath, []string{tt.log}, tt.args...)
			if len(j.Logs) != 1 || j.Logs[0].Kind != "envoy" || j.Logs[0].Format != tt.format {
				t.Errorf("logs %+v; want one read as %s", j.Logs, tt.format)
			}
			if got := tt.by(j.Lines); got != rep.Totals.Requests {
				t.Errorf("lines %+v; want all %d placed the way the format allows", j.Lines, rep.Totals.Requests)
			}
			if tt.name == "default, Envoy's own request IDs" {
				// Placed by address and time: no line names its request,
				// but every one its backend.
				if j.Status != join.StatusTraced || !strings.Contains(j.Conclusion, dead.String()) || j.Lines.Failed != rep.Totals.Failed {
					t.Errorf("status %s, %q, %d failed lines; want traced to %s, all %d failures", j.Status, j.Conclusion, j.Lines.Failed, dead, rep.Totals.Failed)
				}
			} else {
				checkTraced(t, j, rep, dead.String(), upstream.String())
			}
			for _, b := range j.Backends {
				if b.Name == dead.String() && (b.Family != "ipv6" || b.Reasons["UF"] != b.Failed) {
					t.Errorf("dead backend %s: family %q, reasons %v; want ipv6, all %d UF", b.Name, b.Family, b.Reasons, b.Failed)
				}
			}
			if tt.name == "Istio" {
				code, stdout, stderr := pinprobe(t, "logs", reportPath, tt.log)
				if code != 0 || !strings.Contains(strings.Join(strings.Fields(stdout), " "), "The gateway's reasons: it could not connect to the backend (UF).") {
					t.Errorf("logs, text: exit %d, %s; want UF said in words:\n%s", code, stderr, stdout)
				}
				t.Logf("pinprobe logs, text:\n%s", stdout)
			}
		})
	}
}

// TestLogsDemo: --demo writes its gateway's access log, joins it with the
// run and ends on the backend that failed, with the command that joins
// them; that command, run, says the same.
func TestLogsDemo(t *testing.T) {
	t.Parallel()
	code, _, stderr := pinprobe(t, "--demo", "-q", "--duration", "2s", "--format", "json")
	if code != 0 {
		t.Fatalf("demo: exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) < 3 {
		t.Fatalf("stderr:\n%s", stderr)
	}
	said, note, command := lines[len(lines)-3], lines[len(lines)-2], lines[len(lines)-1]
	if !strings.Contains(said, "502s were routed to [::1]:") && !strings.Contains(said, "502s were routed to 127.") {
		t.Errorf("the demo's last finding %q; want the 502s routed to the unreachable backend", said)
	}
	// The instances read as instances: gw-3 and gw-v6 (gw-v4b without an
	// IPv6 loopback), never an address in brackets the report never shows.
	if !regexp.MustCompile(`by instances gw-3 and gw-v(6|4b)\.$`).MatchString(said) {
		t.Errorf("the demo's finding %q; want it to name instances gw-3 and gw-v6", said)
	}
	if !strings.HasPrefix(note, "pinprobe: demo: see it all with the command below; the demo's files stay in ") ||
		!strings.Contains(note, "until the next demo replaces them") {
		t.Errorf("the line before the command %q; want it to say where the demo's files stay", note)
	}
	// The command is pinprobe as it was run (here, the test binary), then
	// the logs command's arguments.
	const lead = " logs --log-format "
	_, rest, ok := strings.Cut(command, lead)
	if !ok {
		t.Fatalf("last line %q; want the command that joins the log, on a line of its own", command)
	}
	// Undo the shell quoting of the three arguments.
	var args []string
	for ; rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] == '\'' {
			end := strings.Index(rest[1:], "'")
			args = append(args, rest[1:end+1])
			rest = rest[end+2:]
			continue
		}
		f, r, _ := strings.Cut(rest, " ")
		args, rest = append(args, f), r
	}
	if len(args) != 3 {
		t.Fatalf("command arguments %q; want the format, the report and the log", args)
	}
	j := joinRun(t, args[1], args[2:], "--log-format", args[0])
	if j.Conclusion != strings.TrimPrefix(said, "pinprobe: demo:   ") {
		t.Errorf("pinprobe logs says %q; the demo said %q", j.Conclusion, said)
	}
	if j.Missing.Requests != 0 || j.Lines.ByRequestID != j.Run.Requests {
		t.Errorf("lines %+v, missing %+v; want every request of the run placed by its ID", j.Lines, j.Missing)
	}
}

// savedRun probes one healthy loopback server with n requests and saves
// the report: a run to join bad logs with.
func savedRun(t *testing.T, n int) string {
	t.Helper()
	srv := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1",
		Each: func(int64, *http.Request) testserver.Answer { return testserver.Answer{Status: http.StatusOK} }}, testserver.Lo4a)
	path := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := pinprobe(t, "-q", "-o", path, "--format", "json", "--rate", "200", "--requests", fmt.Sprint(n),
		fmt.Sprintf("http://127.0.0.1:%d/", srv.Port()))
	if code != 0 {
		t.Fatalf("probe: exit %d; stderr:\n%s", code, stderr)
	}
	return path
}

// TestLogsBadInput: a log in no known format, a --log-format with an
// unknown variable, a wrong --log-type, files missing or given twice on
// standard input: one line naming what is wrong, exit 2. A truncated gzip
// log and a huge line are read around and counted; nothing panics.
func TestLogsBadInput(t *testing.T) {
	t.Parallel()
	rep := savedRun(t, 20)
	dir := t.TempDir()
	write := func(name, data string) string { return writeIn(t, dir, name, []byte(data)) }
	text := write("notes.txt", "hello\nthis is no access log\n")
	good := `127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 200 1 "-" "x"` + "\n"
	goodLog := write("access.log", good)
	repData, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	second := write("zb.json", string(repData))
	junk := make([]byte, 1<<20)
	for i := range junk {
		junk[i] = byte(i*7919 + i>>8*131)
	}
	binary := write("junk.bin", "{"+string(junk))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", rep, text}, "read log " + text + ": no known access-log format"},
		{[]string{"logs", "--log-format", `$remote_addr [$time_local] $upstream_adr`, rep, goodLog}, "unknown variable $upstream_adr (did you mean $upstream_addr?)"},
		{[]string{"logs", "--log-format", `%ci:%cp [%tr] %STT`, rep, goodLog}, "unknown variable %STT (did you mean %ST?)"},
		{[]string{"logs", "--log-type", "iis", rep, goodLog}, `--log-type "iis": want one of nginx, haproxy, azure, alb, envoy, traefik, gcp`},
		{[]string{"logs", rep, second, goodLog}, second + " is a pinprobe report, not an access log: merge the runs first with `pinprobe report --format json"},
		{[]string{"logs", rep, binary}, "read log " + binary + ": no known access-log format"},
		{[]string{"logs", "--log-type", "alb", "--log-format", "$remote_addr", rep, goodLog}, "--log-format is for nginx, HAProxy and Envoy"},
		{[]string{"logs", "--log-type", "traefik", "--log-format", "$remote_addr", rep, goodLog}, "--log-format is for nginx, HAProxy and Envoy"},
		{[]string{"logs", "--log-type", "gcp", rep, goodLog}, "read log " + goodLog + ": no known access-log format in its first 1 lines (tried Google Cloud's load balancer JSON, as gcloud logging read --format=json prints it)"},
		{[]string{"logs", "--log-format", "%ci [%tr] %UPSTREAM_HOST%", rep, goodLog}, "say which the format is with --log-type envoy or --log-type haproxy"},
		{[]string{"logs", rep}, "want a saved report and at least one access log"},
		{[]string{"logs", "-", "-"}, "standard input) is given 2 times"},
		{[]string{"logs", "--client", "gw.example", rep, goodLog}, `--client "gw.example": not an IP address`},
		{[]string{"logs", rep, filepath.Join(dir, "absent.log")}, "no such file"},
		{[]string{"logs", goodLog, goodLog}, "read report"},
	} {
		refused(t, tt.want, tt.args...)
	}

	// A --log-format that matches no line of the log: the headline says so
	// (it said "The logs hold no request"), and why; JSON says where.
	code, stdout, stderr := pinprobe(t, "logs", "--log-format", `$remote_addr:$remote_port [$time_local] "$request" $status`, rep, goodLog)
	if want := "NOTHING JOINED The format matched no line: none of the 1 line read from " + goodLog; code != exitOK || !strings.HasPrefix(strings.Join(strings.Fields(stdout), " "), want) ||
		!strings.Contains(strings.Join(strings.Fields(stdout), " "), "line 1 reads as nginx combined: leave out --log-format") {
		t.Errorf("logs with a format of no line: exit %d, %q%s; want 0, %q…, line 1 reads as nginx combined", code, stdout, stderr, want)
	}
	code, stdout, _ = pinprobe(t, "logs", "--format", "json", "--log-format", `$remote_addr:$remote_port [$time_local] "$request" $status`, rep, goodLog)
	checkSchema(t, kindLogs, []byte(stdout))
	if code != exitOK || !strings.Contains(stdout, `"unmatched": {`) || !strings.Contains(stdout, `"reads_as": "nginx combined"`) {
		t.Errorf("logs --format json with a format of no line: exit %d; want the first line's unmatched, read as nginx combined:\n%s", code, stdout)
	}

	// A truncated gzip stream: the lines before the cut are joined, the
	// cut is said in the log's entry.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for range 5000 {
		zw.Write([]byte(good))
	}
	zw.Close()
	cut := write("cut.log.gz", gz.String()[:gz.Len()/2])
	huge := write("huge.log", good+strings.Repeat("x", 1<<20)+"\n"+good)
	j := joinRun(t, rep, []string{cut, huge})
	if l := j.Logs[0]; !l.Gzip || !strings.Contains(l.Error, "gzip stream ends early") || l.Records == 0 || l.Records >= 5000 {
		t.Errorf("truncated gzip: %+v; want some records and the cut said", l)
	}
	if l := j.Logs[1]; l.TooLong != 1 || l.Records != 2 {
		t.Errorf("huge line: %+v; want 2 records and 1 line too long", l)
	}
	// Standard input.
	var out, errOut bytes.Buffer
	if code := runWith(t.Context(), []string{"logs", "--format", "json", rep, "-"}, strings.NewReader(good), &out, &errOut); code != 0 {
		t.Fatalf("log on standard input: exit %d: %s", code, errOut.String())
	}
	checkSchema(t, kindLogs, out.Bytes())
	if !strings.Contains(out.String(), `"name": "standard input"`) {
		t.Errorf("log on standard input not named so:\n%s", out.String())
	}
}

// TestLogsFormats: every --format of the join renders the same join, and
// a hostile string from a log reaches none as markup or a control
// character; -o writes the JSON document.
func TestLogsFormats(t *testing.T) {
	rep := savedRun(t, 10)
	dir := t.TempDir()
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var saved0 struct {
		StartedAt time.Time `json:"started_at"`
	}
	if err := json.Unmarshal(data, &saved0); err != nil {
		t.Fatal(err)
	}
	// A line of the run (its client, within its window) that names a
	// backend with markup and a terminal escape.
	hostile := `127.0.0.1 [` + saved0.StartedAt.Format("02/Jan/2006:15:04:05 -0700") + `] "GET / HTTP/1.1" 502 1 up=<script>alert(1)</script>|x` +
		"\x1b[31m" + ` us=502` + "\n"
	logPath := filepath.Join(dir, "gw.log")
	if err := os.WriteFile(logPath, []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	format := `$remote_addr [$time_local] "$request" $status $body_bytes_sent up=$upstream_addr us=$upstream_status`
	saved := filepath.Join(dir, "join.json")
	for _, f := range []string{"text", "markdown", "html", "json"} {
		code, stdout, stderr := pinprobe(t, "logs", "--format", f, "-o", saved, "--log-format", format, rep, logPath)
		if code != 0 {
			t.Fatalf("--format %s: exit %d: %s", f, code, stderr)
		}
		if strings.Contains(stdout, "\x1b") || (f == "markdown" || f == "html") && strings.Contains(strings.ReplaceAll(stdout, `\<`, ""), "<script>") || !strings.Contains(stdout, "alert(1)") {
			t.Errorf("--format %s: the log's markup or escape reached the output, or the backend is not shown:\n%s", f, stdout)
		}
		if !strings.Contains(stdout, "BY PINPROBE ENDPOINT") && !strings.Contains(strings.ToUpper(stdout), "BY PINPROBE ENDPOINT") && f != "json" {
			t.Errorf("--format %s: no endpoint section:\n%s", f, stdout)
		}
	}
	checkSchemaFile(t, kindLogs, saved)
	code, stdout, _ := pinprobe(t, "logs", "--help")
	if code != 0 || !strings.Contains(stdout, "--log-format") || !strings.Contains(stdout, "--max-offset") || !strings.Contains(stdout, "Exit codes") {
		t.Errorf("logs --help: exit %d:\n%s", code, stdout)
	}
}
