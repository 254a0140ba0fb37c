package join

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/accesslog"
)

// The simulated incident as Traefik and Google Cloud's load balancer log
// it, their lines built field for field as accesslog's tests build them
// from the vendors' documentation.

// checkBackends checks that the dead backend dead failed every request it
// got, every one of the run's failures, and the others none.
func checkBackends(t *testing.T, j *Join, dead string, failed int64) {
	t.Helper()
	if len(j.Backends) == 0 || j.Backends[0].Name != dead || j.Backends[0].Failed != failed || j.Backends[0].Requests != failed {
		t.Fatalf("backends %+v; want %s first with all %d of its requests failed", j.Backends, dead, failed)
	}
	for _, b := range j.Backends[1:] {
		if b.Failed != 0 {
			t.Errorf("backend %s failed %d; want none", b.Name, b.Failed)
		}
	}
}

// failures counts the failed requests of reqs keep picks (all: every one).
func failures(reqs []simRequest, keep func(int) bool) (n int64) {
	for i, r := range reqs {
		if r.failed && keep(i) {
			n++
		}
	}
	return n
}

func all(int) bool { return true }

// TestTraefik: Traefik's common format, which has neither client ports
// nor request IDs (placed by the clients given and time, and said so),
// then its JSON with X-Request-Id kept (placed by ID).
func TestTraefik(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	const offset = 700 * time.Millisecond
	backend := func(r simRequest) string {
		if r.backend == deadBackend {
			return "https://" + deadBackend
		}
		return "https://" + r.backend
	}
	t.Run("common format", func(t *testing.T) {
		var b strings.Builder
		for i, r := range reqs {
			fmt.Fprintf(&b, `%s - - [%s] "GET /sign HTTP/1.1" %d 11 "-" "pinprobe/0.1.0" %d "sign-v%d@docker" "%s" 20ms`+"\n",
				r.client(), r.at.Add(offset).Format("02/Jan/2006:15:04:05 -0700"), r.status(), i+1, 4+2*r.ep, backend(r))
		}
		j := joinLog(t, rep, b.String(), runClients, accesslog.Options{})
		if j.Logs[0].Kind != "traefik" || j.Logs[0].Format != "Traefik common" {
			t.Errorf("log %+v; want Traefik common", j.Logs[0])
		}
		if j.Lines.Run != int64(len(reqs)) || j.Lines.ByWindow != j.Lines.Run || j.Missing.Requests != 0 {
			t.Errorf("lines %+v, missing %+v; want every request placed by address and time", j.Lines, j.Missing)
		}
		failed := failures(reqs, all)
		checkBackends(t, j, deadBackend, failed)
		if want := fmt.Sprintf("All %d 502s were routed to %s (IPv6).", failed, deadBackend); j.Conclusion != want {
			t.Errorf("conclusion %q; want %q", j.Conclusion, want)
		}
		if c := j.Logs[0].CannotTell; len(c) != 1 || !strings.Contains(c[0], "placed by client address and time") {
			t.Errorf("cannot tell %q; want the placement by address and time said", c)
		}
		if j.Offset.By != "time" {
			t.Errorf("offset %+v; want it from the times", j.Offset)
		}
	})
	t.Run("JSON with the request ID", func(t *testing.T) {
		var b strings.Builder
		for i, r := range reqs {
			host := r.client()
			addr := host + ":" + fmt.Sprint(r.port)
			if strings.Contains(host, ":") {
				addr = "[" + host + "]:" + fmt.Sprint(r.port)
			}
			sa := strings.TrimPrefix(backend(r), "https://")
			fmt.Fprintf(&b, `{"ClientAddr":%q,"ClientHost":%q,"ClientPort":"%d","DownstreamStatus":%d,"Duration":20000000,"OriginStatus":%d,"RequestCount":%d,"RequestHost":"sign.example.com","RequestMethod":"GET","RequestPath":"/sign","RouterName":"sign@docker","ServiceAddr":%q,"ServiceURL":{"Scheme":"https","Host":%q},"StartUTC":%q,"entryPointName":"websecure-v%d","level":"info","msg":"","request_X-Request-Id":%q,"time":%q}`+"\n",
				addr, host, r.port, r.status(), r.status(), i+1, sa, sa, r.at.Add(offset).Format(time.RFC3339Nano), 4+2*r.ep, r.id(), r.at.Add(offset).Format(time.RFC3339))
		}
		j := joinLog(t, rep, b.String(), Options{}, accesslog.Options{})
		if j.Lines.ByRequestID != int64(len(reqs)) || len(j.Logs[0].CannotTell) != 0 {
			t.Errorf("lines %+v, cannot tell %q; want every request placed by its ID, nothing said untold", j.Lines, j.Logs[0].CannotTell)
		}
		checkBackends(t, j, deadBackend, failures(reqs, all))
		if !j.Offset.Measured || j.Offset.By != "request ID" || j.Offset.MS < 699 || j.Offset.MS > 701 {
			t.Errorf("offset %+v; want 700 ms by request ID", j.Offset)
		}
		if len(j.Listeners) != 2 || j.Backends[0].BackendStatus["502"] == 0 {
			t.Errorf("listeners %+v, dead backend %+v; want the two entry points and the origin's status", j.Listeners, j.Backends[0])
		}
	})
}

// gcpLog is the requests of reqs keep picks, as Cloud Logging holds a
// Google Cloud load balancer's entries (the clock 400 ms behind), naming
// backend services, not instances.
func gcpLog(reqs []simRequest, keep func(int) bool) (out []string) {
	const offset = -400 * time.Millisecond
	for i, r := range reqs {
		if !keep(i) {
			continue
		}
		details, service, group := "response_sent_by_backend", "sign-be", "sign-ig-v4"
		if r.failed {
			details, service, group = "failed_to_connect_to_backend", "sign-be-v6", "sign-neg-v6"
		}
		out = append(out, fmt.Sprintf(`{"httpRequest":{"latency":"0.020s","remoteIp":%q,"requestMethod":"GET","requestUrl":"https://sign.example.com/sign","status":%d},"insertId":"i%d","jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","statusDetails":%q},"logName":"projects/sign-prod/logs/requests","resource":{"labels":{"backend_service_name":%q,"backend_name":%q,"forwarding_rule_name":"sign-fr-v%d","project_id":"sign-prod","target_proxy_name":"sign-proxy","url_map_name":"sign-map","zone":"global"},"type":"http_load_balancer"},"severity":"INFO","timestamp":%q,"trace":"projects/sign-prod/traces/%032x"}`,
			r.client(), r.status(), i, details, service, group, 4+2*r.ep, r.at.Add(offset).Format(time.RFC3339Nano), i))
	}
	return out
}

// TestGCPSampled: a Google Cloud load balancer's log of two requests in
// five (logConfig.sampleRate 0.4), naming backend services, not
// instances, and why it failed (statusDetails). The join counts the
// requests the sample lacks as a sample's, never as missing from the
// gateway, lists no gap, and says what the log cannot tell.
func TestGCPSampled(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	sampled := func(i int) bool { return i%5 == 0 || i%5 == 3 }
	entries := gcpLog(reqs, sampled)
	// As gcloud logging read --format=json prints them.
	j := joinLog(t, rep, "[\n  "+strings.Join(entries, ",\n  ")+"\n]\n", runClients, accesslog.Options{})
	failed := failures(reqs, sampled)
	dead := "sign-be-v6/sign-neg-v6"
	checkBackends(t, j, dead, failed)
	// With the load balancer's own reason, its statusDetails, in words.
	if want := fmt.Sprintf("All %d 502s of the log's sample were routed to %s; the gateway says: the load balancer could not connect to the backend (failed_to_connect_to_backend).", failed, dead); j.Conclusion != want {
		t.Errorf("conclusion %q; want %q", j.Conclusion, want)
	}
	if got := j.Backends[0].Reasons["failed_to_connect_to_backend"]; got != failed ||
		j.ReasonWords["failed_to_connect_to_backend"] != "the load balancer could not connect to the backend" {
		t.Errorf("reasons %v, words %v; want %d failed_to_connect_to_backend, said in words", j.Backends[0].Reasons, j.ReasonWords, failed)
	}
	held := int64(len(entries))
	if j.Lines.Run != held || !j.Missing.Sampled || j.Missing.Requests != int64(len(reqs))-held || len(j.Missing.Gaps) != 0 {
		t.Errorf("lines %+v, missing %+v; want the %d sampled lines placed, the rest a sample's, no gap", j.Lines, j.Missing, held)
	}
	var said bool
	for _, f := range j.Findings {
		if strings.Contains(f.Text, "are not in the log") || strings.Contains(f.Text, "did not log") {
			t.Errorf("finding %q: a sampled log's absent requests said to be missing", f.Text)
		}
		said = said || f.Kind == "absent" && strings.Contains(f.Text, fmt.Sprintf("The logs hold %d of the run's %d requests (40%%)", held, len(reqs))) &&
			strings.Contains(f.Text, "sampleRate") && strings.Contains(f.Text, "not missing from the gateway")
	}
	if !said {
		t.Errorf("findings %+v; want the sample said", j.Findings)
	}
	l := j.Logs[0]
	if l.Kind != "gcp" || l.Partial == "" || len(l.CannotTell) != 3 || !strings.Contains(strings.Join(l.CannotTell, " "), "backend service") {
		t.Errorf("log %+v; want gcp, partial, and the placement, the request ID and the instance said untold", l)
	}
}

// TestGCPWhole: a log sampled at 1.0 that holds every request of the run
// is no sample: its failures are the run's, and nothing is said missing.
func TestGCPWhole(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	j := joinLog(t, rep, strings.Join(gcpLog(reqs, all), "\n")+"\n", runClients, accesslog.Options{})
	if want := fmt.Sprintf("All %d 502s were routed to sign-be-v6/sign-neg-v6; the gateway says: the load balancer could not connect to the backend (failed_to_connect_to_backend).", failures(reqs, all)); j.Conclusion != want {
		t.Errorf("conclusion %q; want %q", j.Conclusion, want)
	}
	if j.Lines.Run != int64(len(reqs)) || j.Missing.Requests != 0 || !j.Missing.Sampled {
		t.Errorf("lines %+v, missing %+v; want every request, the log still said to be sampled", j.Lines, j.Missing)
	}
	for _, f := range j.Findings {
		if f.Kind == "absent" {
			t.Errorf("finding %q; want nothing said absent", f.Text)
		}
	}
}
