package main

// pinprobe logs with gateways that cannot run here (Traefik, Google
// Cloud's load balancer): a real reverse proxy on loopback, whose
// 127.0.0.1 routes to a healthy backend and whose [::1] to a closed port
// (it answers 502 itself), writes each request in those gateways' formats,
// field for field as their documentation gives them; pinprobe's saved run
// is joined with each log.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// gatewayLogs are the logs the proxy writes, one a format.
type gatewayLogs struct {
	mu                  sync.Mutex
	clf, json, gcp      strings.Builder
	gcpEntries, gcpFail int
}

// traefikCLF is a request as Traefik's common format writes it.
func traefikCLF(p *testserver.Proxied) string {
	return fmt.Sprintf("%s - - [%s] \"%s %s %s\" %d %d \"-\" \"%s\" %d \"sign@file\" \"%s\" %dms\n",
		p.Client.Addr(), p.Start.UTC().Format("02/Jan/2006:15:04:05 -0700"), p.Method, p.Path, p.Proto, p.Status, p.Bytes,
		p.Agent, p.N, p.Backend, p.Duration.Milliseconds())
}

// traefikRecord is a request as Traefik's JSON format writes it (logrus:
// keys sorted, ServiceURL a url.URL), X-Request-Id kept.
func traefikRecord(p *testserver.Proxied) string {
	rec := map[string]any{
		"ClientAddr": p.Client.String(), "ClientHost": p.Client.Addr().String(), "ClientPort": fmt.Sprint(p.Client.Port()), "ClientUsername": "-",
		"DownstreamContentSize": p.Bytes, "DownstreamStatus": p.Status, "Duration": p.Duration.Nanoseconds(),
		"OriginContentSize": p.Bytes, "OriginDuration": p.Duration.Nanoseconds(), "OriginStatus": p.Status, "Overhead": 0,
		"RequestAddr": p.Host, "RequestContentSize": 0, "RequestCount": p.N, "RequestHost": strings.Split(p.Host, ":")[0],
		"RequestMethod": p.Method, "RequestPath": p.Path, "RequestPort": "-", "RequestProtocol": p.Proto, "RequestScheme": "http",
		"RetryAttempts": 0, "RouterName": "sign@file", "ServiceAddr": p.Backend.Host, "ServiceName": "sign@file", "ServiceURL": p.Backend,
		"StartLocal": p.Start, "StartUTC": p.Start.UTC(), "entryPointName": "web", "level": "info", "msg": "",
		"request_User-Agent": p.Agent, "request_X-Request-Id": p.RequestID, "time": p.Start.UTC().Format(time.RFC3339),
	}
	b, _ := json.Marshal(rec)
	return string(b) + "\n"
}

// gcpEntry is a request as Cloud Logging holds a load balancer's, for a
// backend service per address family: the IPv6 one's NEG is the dead
// backend. No serverIp: the log names services, not instances.
func gcpEntry(p *testserver.Proxied) (string, bool) {
	service, group, details := "sign-be-v4", "sign-ig-v4", "response_sent_by_backend"
	if p.Client.Addr().Is6() {
		service, group = "sign-be-v6", "sign-neg-v6"
	}
	if p.Err != nil {
		details = "failed_to_connect_to_backend"
	}
	e := map[string]any{
		"httpRequest": map[string]any{"latency": fmt.Sprintf("%.6fs", p.Duration.Seconds()), "remoteIp": p.Client.Addr().String(),
			"requestMethod": p.Method, "requestUrl": "http://" + p.Host + p.Path, "status": p.Status, "userAgent": p.Agent,
			"responseSize": fmt.Sprint(p.Bytes)},
		"insertId": fmt.Sprintf("x%d", p.N),
		"jsonPayload": map[string]any{"@type": "type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry",
			"statusDetails": details, "backendTargetProjectNumber": "projects/123456789012"},
		"logName":          "projects/sign-prod/logs/requests",
		"receiveTimestamp": p.Start.Add(time.Second).UTC().Format(time.RFC3339Nano),
		"resource": map[string]any{"type": "http_load_balancer", "labels": map[string]string{"backend_service_name": service, "backend_name": group,
			"forwarding_rule_name": "sign-fr", "project_id": "sign-prod", "target_proxy_name": "sign-proxy", "url_map_name": "sign-map", "zone": "global"}},
		"severity": "INFO", "timestamp": p.Start.UTC().Format(time.RFC3339Nano),
		"trace": fmt.Sprintf("projects/sign-prod/traces/%032x", p.N),
	}
	b, _ := json.MarshalIndent(e, "  ", "  ")
	return string(b), p.Err != nil
}

// TestLogsTraefikAndGoogle: the run joined with the proxy's Traefik
// common log (placed by client address and time, and said so), its
// Traefik JSON log (placed by request ID) and its Google Cloud log of
// every other request (a sample: the requests it lacks are the sample's,
// not missing from the gateway).
func TestLogsTraefikAndGoogle(t *testing.T) {
	t.Parallel()
	okAt, deadAt := splitUpstreams(t)
	ok, dead := &url.URL{Scheme: "http", Host: okAt.String()}, &url.URL{Scheme: "http", Host: deadAt.String()}
	logs := &gatewayLogs{}
	proxy := testserver.StartLoggingProxy(t, map[netip.Addr]*url.URL{testserver.Lo4a: ok, testserver.Lo6: dead}, func(p *testserver.Proxied) {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		logs.clf.WriteString(traefikCLF(p))
		logs.json.WriteString(traefikRecord(p))
		// Google's logConfig.sampleRate 0.5: every other request.
		if p.N%2 == 0 {
			e, failed := gcpEntry(p)
			if logs.gcpEntries > 0 {
				logs.gcp.WriteString(",\n  ")
			}
			logs.gcp.WriteString(e)
			logs.gcpEntries++
			if failed {
				logs.gcpFail++
			}
		}
	})
	reportPath, rep := probeSaved(t, fmt.Sprintf("gw.test:%d", proxy.Port), 80)
	dir := t.TempDir()
	write := func(name, data string) string { return writeIn(t, dir, name, []byte(data)) }
	logs.mu.Lock()
	clf, js := write("traefik.log", logs.clf.String()), write("traefik.json", logs.json.String())
	gcp := write("gcp.json", "[\n  "+logs.gcp.String()+"\n]\n")
	sampled, sampledFailed := int64(logs.gcpEntries), int64(logs.gcpFail)
	logs.mu.Unlock()
	deadName, okName := dead.Host, ok.Host

	t.Run("Traefik common format", func(t *testing.T) {
		j := joinRun(t, reportPath, []string{clf})
		if j.Logs[0].Format != "Traefik common" || j.Lines.Run != rep.Totals.Requests || j.Lines.ByWindow != j.Lines.Run || j.Missing.Requests != 0 {
			t.Errorf("log %+v, lines %+v; want every request of the Traefik common log placed by address and time", j.Logs[0], j.Lines)
		}
		if c := j.Logs[0].CannotTell; len(c) != 1 || !strings.Contains(c[0], "placed by client address and time") {
			t.Errorf("cannot tell %q; want the placement by address and time said", c)
		}
		checkRouted(t, j, deadName, okName, rep.Totals.Failed, "")
		logText(t, reportPath, clf)
	})
	t.Run("Traefik JSON", func(t *testing.T) {
		j := joinRun(t, reportPath, []string{js})
		checkTraced(t, j, rep, deadName, okName)
		if j.Lines.ByRequestID != rep.Totals.Requests || len(j.Logs[0].CannotTell) != 0 {
			t.Errorf("lines %+v, cannot tell %q; want every request placed by its ID", j.Lines, j.Logs[0].CannotTell)
		}
		logText(t, reportPath, js)
	})
	t.Run("Google Cloud, sampled", func(t *testing.T) {
		j := joinRun(t, reportPath, []string{gcp})
		if j.Lines.Run != sampled || !j.Missing.Sampled || j.Missing.Requests != rep.Totals.Requests-sampled || len(j.Missing.Gaps) != 0 {
			t.Errorf("lines %+v, missing %+v; want the %d sampled lines placed, the rest the sample's", j.Lines, j.Missing, sampled)
		}
		checkRouted(t, j, "sign-be-v6/sign-neg-v6", "sign-be-v4/sign-ig-v4", sampledFailed, " of the log's sample")
		if b := j.Backends[0]; b.Reasons["failed_to_connect_to_backend"] != sampledFailed || j.ReasonWords["failed_to_connect_to_backend"] == "" {
			t.Errorf("backend %+v, words %v; want its failures' statusDetails, in words", b, j.ReasonWords)
		}
		for _, f := range j.Findings {
			if strings.Contains(f.Text, "not in the log") {
				t.Errorf("finding %q: the sample's absent requests said missing", f.Text)
			}
		}
		if text := logText(t, reportPath, gcp); !strings.Contains(text, "not missing from the gateway") {
			t.Errorf("the text join does not say the sample:\n%s", text)
		}
		// Markdown keeps every column: the reason, in words.
		_, md, _ := pinprobe(t, "logs", "--format", "markdown", reportPath, gcp)
		if !strings.Contains(md, "failed_to_connect_to_backend×") || !strings.Contains(md, "(the load balancer could not connect to the backend)") {
			t.Errorf("the Markdown join does not say the reason in words:\n%s", md)
		}
	})
}

// logText is `pinprobe logs REPORT LOG` as text, logged for a reader of
// the test's output.
func logText(t *testing.T, reportPath, log string) string {
	t.Helper()
	code, text, stderr := pinprobe(t, "logs", reportPath, log)
	if code != 0 {
		t.Errorf("pinprobe logs %s: exit %d: %s", log, code, stderr)
	}
	t.Logf("pinprobe logs run.json %s:\n%s", filepath.Base(log), text)
	return text
}

// checkRouted checks a join whose lines are placed: every failure (failed
// of them) routed to dead through ::1, the healthy backend ok cleared.
func checkRouted(t *testing.T, j *join.Join, dead, ok string, failed int64, of string) {
	t.Helper()
	if len(j.Backends) != 2 || j.Backends[0].Name != dead || j.Backends[0].Failed != failed || j.Backends[0].Requests != failed ||
		j.Backends[0].Endpoints["::1"] != failed || j.Backends[1].Name != ok || j.Backends[1].Failed != 0 {
		t.Errorf("backends %+v; want %s with all %d failures, through ::1, and %s with none", j.Backends, dead, failed, ok)
	}
	if want := fmt.Sprintf("All %d 502s%s were routed to %s", failed, of, dead); !strings.HasPrefix(j.Conclusion, want) {
		t.Errorf("conclusion %q; want %q…", j.Conclusion, want)
	}
}
