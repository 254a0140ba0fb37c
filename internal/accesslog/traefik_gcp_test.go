package accesslog

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Lines as Traefik and Google Cloud write them, field for field from
// their documentation and published samples: Traefik's own formatter
// tests (its common format), a Traefik JSON record as Traefik 2 and 3
// write it (ServiceURL marshalled as Go's url.URL), and Cloud Logging
// entries of an external Application Load Balancer.

// traefikJSONLine is a record of Traefik's JSON access log: its keys as
// logrus sorts them, with request_X-Request-Id where
// accessLog.fields.headers keeps it.
const traefikJSONLine = `{"ClientAddr":"[2001:db8:77::7]:40002","ClientHost":"2001:db8:77::7","ClientPort":"40002","ClientUsername":"-","DownstreamContentSize":11,"DownstreamStatus":502,"Duration":3128456,"OriginContentSize":11,"OriginDuration":3012876,"OriginStatus":502,"Overhead":115580,"RequestAddr":"sign.example.com","RequestContentSize":0,"RequestCount":122,"RequestHost":"sign.example.com","RequestMethod":"GET","RequestPath":"/sign","RequestPort":"-","RequestProtocol":"HTTP/1.1","RequestScheme":"https","RetryAttempts":0,"RouterName":"sign@docker","ServiceAddr":"[2001:db8::9]:443","ServiceName":"sign@docker","ServiceURL":{"Scheme":"https","Opaque":"","User":null,"Host":"[2001:db8::9]:443","Path":"","RawPath":"","OmitHost":false,"ForceQuery":false,"RawQuery":"","Fragment":"","RawFragment":""},"StartLocal":"2026-12-01T17:40:00.1Z","StartUTC":"2026-12-01T16:40:00.1Z","entryPointName":"websecure","level":"info","msg":"","request_X-Request-Id":"pinprobe-abcdef12-1-1","time":"2026-12-01T16:40:00Z"}`

// gcpEntries are Cloud Logging entries of a load balancer's requests: the
// published sample (a CDN cache hit, remoteIp without a port), and
// requests answered by a backend and failed by the load balancer.
var gcpEntries = []string{
	`{"insertId":"1oek5rg3l3fxj7","jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","cacheId":"SFO-fbae48ad","statusDetails":"response_from_cache"},"httpRequest":{"requestMethod":"GET","requestUrl":"http://81.2.69.193/static/us/three-cats.jpg","requestSize":"577","status":304,"responseSize":"157","userAgent":"Mozilla/5.0","remoteIp":"89.160.20.156","cacheHit":true,"cacheLookup":true},"resource":{"type":"http_load_balancer","labels":{"zone":"global","url_map_name":"URL_MAP_NAME","forwarding_rule_name":"FORWARDING_RULE_NAME","target_proxy_name":"TARGET_PROXY_NAME","backend_service_name":"","project_id":"PROJECT_ID"}},"timestamp":"2020-06-08T23:41:30.078651Z","severity":"INFO","logName":"projects/PROJECT_ID/logs/requests","trace":"projects/PROJECT_ID/traces/241d69833e64b3bf83fabac8c873d992","receiveTimestamp":"2020-06-08T23:41:30.588272510Z","spanId":"7b6537d3672e08e1"}`,
	`{"httpRequest":{"latency":"0.020112s","remoteIp":"2001:db8:77::7","requestMethod":"GET","requestSize":"83","requestUrl":"https://sign.example.com/sign","responseSize":"1532","serverIp":"10.0.0.4","status":200,"userAgent":"pinprobe/0.1.0"},"insertId":"w4ihq8f7n1z5b","jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","backendTargetProjectNumber":"projects/123456789012","remoteIp":"2001:db8:77::7","statusDetails":"response_sent_by_backend"},"logName":"projects/sign-prod/logs/requests","receiveTimestamp":"2026-12-01T16:40:01.2Z","resource":{"labels":{"backend_service_name":"sign-be","forwarding_rule_name":"sign-fr-v6","project_id":"sign-prod","target_proxy_name":"sign-proxy","url_map_name":"sign-map","zone":"global"},"type":"http_load_balancer"},"severity":"INFO","spanId":"4a6b9a1e0c2f7d35","timestamp":"2026-12-01T16:40:00.100Z","trace":"projects/sign-prod/traces/0b7e4c2a9f1d8e3b5a6c7d8e9f0a1b2c"}`,
	`{"httpRequest":{"latency":"0.003001s","remoteIp":"198.51.100.7:40001","requestMethod":"GET","requestUrl":"https://sign.example.com/sign?x=1","status":502},"jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","statusDetails":"failed_to_connect_to_backend"},"resource":{"labels":{"backend_service_name":"sign-be","backend_name":"sign-ig-b","forwarding_rule_name":"sign-fr-v4"},"type":"http_load_balancer"},"timestamp":"2026-12-01T16:40:00.200Z"}`,
}

// TestTraefikAndGCP: each line read into what a join needs.
func TestTraefikAndGCP(t *testing.T) {
	for _, tt := range []struct {
		name, log string
		o         Options
		format    string
		want      want
		dur       time.Duration
		logged    []string
	}{
		{"traefik common, documented sample", `10.0.0.1 - Client [10/Nov/2009:23:00:00 +0000] "GET /foo http" 123 132 "referer" "agent" - "foo" "http://10.0.0.2/toto" 123000ms`, Options{},
			"Traefik common", want{time: "2009-11-10T23:00:00Z", client: "10.0.0.1", status: 123, backend: "10.0.0.2", backendAt: "10.0.0.2:80", listener: "foo", uri: "/foo", resolution: time.Second},
			123 * time.Second, []string{"time", "backend", "listener", "duration"}},
		{"traefik common, nothing routed", `10.0.0.1 - Client [10/Nov/2009:23:00:00 +0000] "GET /foo http" - - "-" "-" 0 "-" "-" 123000ms`, Options{},
			"Traefik common", want{time: "2009-11-10T23:00:00Z", client: "10.0.0.1", uri: "/foo"}, 123 * time.Second, nil},
		{"traefik common, IPv6 backend and X-Forwarded-For", `198.51.100.7, 10.0.0.1 - - [01/Dec/2026:16:40:00 +0000] "GET /sign HTTP/1.1" 502 11 "-" "pinprobe/0.1.0" 42 "sign@docker" "https://[2001:db8::9]:443" 3ms`, Options{Kind: Traefik},
			"Traefik common", want{time: "2026-12-01T16:40:00Z", client: "198.51.100.7", status: 502, backend: "[2001:db8::9]:443", backendAt: "[2001:db8::9]:443", listener: "sign@docker"}, 3 * time.Millisecond, nil},
		{"traefik json", traefikJSONLine, Options{}, "Traefik (JSON)",
			want{time: "2026-12-01T16:40:00.1Z", client: "2001:db8:77::7", port: 40002, status: 502, backend: "[2001:db8::9]:443", backendAt: "[2001:db8::9]:443", bstatus: "502",
				listener: "websecure", requestID: "pinprobe-abcdef12-1-1", uri: "/sign", host: "sign.example.com", resolution: time.Microsecond},
			3128456, []string{"time", "client port", "request ID", "backend", "backend status", "listener", "duration"}},
		{"gcp sample: a cache hit", gcpEntries[0], Options{}, "Google Cloud load balancer (JSON)",
			want{time: "2020-06-08T23:41:30.078651Z", client: "89.160.20.156", status: 304, listener: "FORWARDING_RULE_NAME", uri: "/static/us/three-cats.jpg", host: "81.2.69.193"}, -1, nil},
		{"gcp: the backend answered", gcpEntries[1], Options{Kind: GCP}, "Google Cloud load balancer (JSON)",
			want{time: "2026-12-01T16:40:00.1Z", client: "2001:db8:77::7", status: 200, backend: "10.0.0.4", bstatus: "200", listener: "sign-fr-v6"}, 20112 * time.Microsecond, nil},
		{"gcp: no connection to the backend", gcpEntries[2], Options{}, "Google Cloud load balancer (JSON)",
			want{time: "2026-12-01T16:40:00.2Z", client: "198.51.100.7", port: 40001, status: 502, backend: "sign-be/sign-ig-b", listener: "sign-fr-v4", reason: "failed_to_connect_to_backend", uri: "/sign?x=1"},
			3001 * time.Microsecond, nil},
		{"gcp regional: the backend timed out", `{"httpRequest":{"latency":"30.001s","remoteIp":"198.51.100.7","requestMethod":"GET","requestUrl":"https://sign.example.com/sign","status":502},"jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","backendTargetProjectNumber":"projects/123456789012","proxyStatus":"http_request_error; error=http_response_timeout","statusDetails":"backend_timeout"},"resource":{"labels":{"backend_name":"sign-neg-b","backend_target_name":"sign-be","backend_target_type":"BACKEND_SERVICE","backend_type":"NETWORK_ENDPOINT_GROUP","forwarding_rule_name":"sign-fr","network_name":"sign-net","project_id":"sign-prod","region":"europe-west1","target_proxy_name":"sign-proxy","url_map_name":"sign-map"},"type":"http_external_regional_lb_rule"},"timestamp":"2026-12-01T16:40:00.300Z"}`,
			Options{}, "Google Cloud load balancer (JSON)",
			want{time: "2026-12-01T16:40:00.3Z", client: "198.51.100.7", status: 502, backend: "sign-be/sign-neg-b", listener: "sign-fr", reason: "backend_timeout"}, 30001 * time.Millisecond, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, rec := readLine(t, tt.log, tt.o, tt.format, tt.want)
			if rec.Duration != tt.dur {
				t.Errorf("duration %v; want %v", rec.Duration, tt.dur)
			}
			if tt.logged != nil && !reflect.DeepEqual(r.Logged().Names(), tt.logged) {
				t.Errorf("logs %v; want %v", r.Logged().Names(), tt.logged)
			}
		})
	}
}

// TestGCPExports: gcloud logging read --format=json prints an indented
// array (keys sorted); a sink writes one entry a line; other logs'
// entries in it are counted as other; the log says it may be sampled and
// what it cannot tell.
func TestGCPExports(t *testing.T) {
	array := "[\n  " + strings.Join(gcpEntries, ",\n  ") + ",\n  " +
		`{"insertId":"x","logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity","protoPayload":{"methodName":"v1.compute.backendServices.patch"},"resource":{"type":"gce_backend_service"},"timestamp":"2026-12-01T16:39:00Z"}` + "\n]\n"
	lines := strings.Join(gcpEntries, "\n") + "\n"
	for _, log := range []string{array, lines} {
		r, recs := readAll(t, log, Options{})
		if r.Kind() != GCP || len(recs) != 3 {
			t.Fatalf("%s, %d records; want gcp, 3 (stats %+v)", r.Kind(), len(recs), r.Stats())
		}
		if r.Partial() == "" || !strings.Contains(r.Partial(), "sampleRate") {
			t.Errorf("partial %q; want the sampling said", r.Partial())
		}
		// One record named the instance (serverIp): the log can tell it.
		if c := r.Cannot(); len(c) != 1 || !strings.HasPrefix(c[0], "the request ID") {
			t.Errorf("cannot %q; want only the request ID", c)
		}
	}
	r, _ := readAll(t, array, Options{})
	if r.Stats().Other != 1 {
		t.Errorf("stats %+v; want the audit entry counted as other", r.Stats())
	}
	r, _ = readAll(t, gcpEntries[2]+"\n", Options{})
	if c := r.Cannot(); len(c) != 2 || !strings.Contains(c[1], "backend service") {
		t.Errorf("cannot %q; want the instance said", c)
	}
}

// TestTraefikJSONTimes: a record whose StartUTC accessLog.fields.names
// drops is read by StartLocal (its zone kept), else by logrus's own time
// (to the second); a JSON log of another gateway given as Traefik's is
// counted as lines that did not parse, not as other logs.
func TestTraefikJSONTimes(t *testing.T) {
	base := strings.Replace(traefikJSONLine, `"StartUTC":"2026-12-01T16:40:00.1Z",`, "", 1)
	local := strings.Replace(base, `"StartLocal":"2026-12-01T17:40:00.1Z"`, `"StartLocal":"2026-12-01T17:40:00.1+01:00"`, 1)
	bare := strings.Replace(base, `"StartLocal":"2026-12-01T17:40:00.1Z",`, "", 1)
	for _, tt := range []struct {
		name, line string
		want       want
	}{
		{"StartLocal", local, want{time: "2026-12-01T16:40:00.1Z", resolution: time.Microsecond}},
		{"time", bare, want{time: "2026-12-01T16:40:00Z", resolution: time.Second}},
	} {
		_, recs := readAll(t, tt.line+"\n", Options{})
		if len(recs) != 1 {
			t.Fatalf("%s: %d records; want 1", tt.name, len(recs))
		}
		tt.want.client, tt.want.port, tt.want.status = "2001:db8:77::7", 40002, 502
		tt.want.backend, tt.want.bstatus, tt.want.listener, tt.want.requestID = "[2001:db8::9]:443", "502", "websecure", "pinprobe-abcdef12-1-1"
		tt.want.check(t, recs[0])
	}
	r, recs := readAll(t, `[{"TimeGenerated":"2026-12-01T16:40:21Z","ClientIp":"203.0.113.5","HttpStatus":200}]`, Options{Kind: Traefik})
	if st := r.Stats(); len(recs) != 0 || st.Skipped != 1 || st.Other != 0 {
		t.Errorf("an Azure record read as Traefik's: %d records, stats %+v; want it skipped, not other", len(recs), st)
	}
	// Traefik's own log on the same stdout, as docker logs gives both.
	own := `{"level":"error","error":"dial tcp [2001:db8::9]:443: connect: connection refused","time":"2026-12-01T16:40:00Z","message":"502 Bad Gateway"}`
	r, recs = readAll(t, own+"\n"+traefikJSONLine+"\n", Options{})
	if st := r.Stats(); len(recs) != 1 || st.Other != 1 || st.Skipped != 0 {
		t.Errorf("Traefik's access and own logs: %d records, stats %+v; want 1 record, 1 other", len(recs), st)
	}
}

// TestTraefikForwarded: a request that came through a proxy with
// X-Forwarded-For is the forwarded client's, without the proxy's port.
func TestTraefikForwarded(t *testing.T) {
	line := strings.Replace(strings.Replace(traefikJSONLine, `"ClientHost":"2001:db8:77::7"`, `"ClientHost":"198.51.100.7, 10.0.0.3"`, 1),
		`"ClientAddr":"[2001:db8:77::7]:40002"`, `"ClientAddr":"10.0.0.3:51000"`, 1)
	_, recs := readAll(t, line+"\n", Options{})
	if len(recs) != 1 || recs[0].Client.String() != "198.51.100.7" || recs[0].ClientPort != 0 {
		t.Errorf("records %+v; want the forwarded client 198.51.100.7, no port", recs)
	}
}
