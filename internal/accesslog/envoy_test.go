package accesslog

import (
	"strings"
	"testing"
	"time"
)

// TestEnvoy: Envoy's default format and Istio's, text and JSON, and
// custom text and JSON formats, each line built field for field from the
// documentation's examples (Envoy's access-log page, Istio's "Envoy
// Access Logs" task), read into what a join needs.
func TestEnvoy(t *testing.T) {
	const custom = `text_format: "[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %RESPONSE_CODE% %RESPONSE_FLAGS% %UPSTREAM_CLUSTER% %UPSTREAM_HOST% \"%REQ(X-REQUEST-ID)%\" %DURATION% %HOSTNAME%\n"`
	const customJSON = `{"t": "%START_TIME(%s.%3f)%", "client": "%DOWNSTREAM_REMOTE_ADDRESS%", "code": "%RESPONSE_CODE%", "flags": "%RESPONSE_FLAGS%",
		"up": "%UPSTREAM_HOST%", "id": "%REQ(X-REQUEST-ID)%", "cluster": "%UPSTREAM_CLUSTER%", "ms": "%DURATION%", "pod": "%ENVIRONMENT(POD_NAME)%"}`
	for _, tt := range []struct {
		name, line string
		o          Options
		format     string
		want       want
	}{
		{"default, the docs' example", `[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"`,
			Options{}, "Envoy default",
			want{time: "2016-04-15T20:17:00.31Z", client: "10.0.35.28", status: 204, backend: "10.0.2.1:80", backendAt: "10.0.2.1:80",
				requestID: "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2", host: "locations", uri: "/api/v1/locations", resolution: time.Millisecond}},
		{"default, a refused IPv6 upstream", `[2026-12-01T16:40:21.433Z] "GET /sign HTTP/1.1" 503 UF 0 91 1 - "127.0.0.1" "pinprobe/0.1.0" "pinprobe-376a1b4c-2-1" "sign.test" "[2001:db8::9]:443"`,
			Options{Kind: Envoy}, "Envoy default",
			want{time: "2026-12-01T16:40:21.433Z", client: "127.0.0.1", status: 503, backend: "[2001:db8::9]:443", backendAt: "[2001:db8::9]:443",
				requestID: "pinprobe-376a1b4c-2-1", reason: "UF"}},
		{"Istio, the docs' example", `[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "10.44.1.27:80" outbound|8000||httpbin.foo.svc.cluster.local 10.44.1.23:37652 10.0.45.184:8000 10.44.1.23:46520 - default`,
			Options{}, "Istio (Envoy)",
			want{time: "2020-11-25T21:26:18.409Z", client: "10.44.1.23", port: 46520, status: 418, backend: "10.44.1.27:80", backendAt: "10.44.1.27:80",
				listener: "10.0.45.184:8000", requestID: "84961386-6d84-929d-98bd-c5aee93b5c88", host: "httpbin:8000"}},
		{"Istio, no healthy upstream: the cluster", `[2026-12-01T16:40:21.433Z] "GET /sign HTTP/1.1" 503 UH no_healthy_upstream - "-" 0 19 0 - "-" "pinprobe/0.1.0" "pinprobe-376a1b4c-2-2" "sign.test" "-" outbound|443||sign.test - 10.0.45.184:443 [::1]:46520 - default`,
			Options{}, "Istio (Envoy)",
			want{time: "2026-12-01T16:40:21.433Z", client: "::1", port: 46520, status: 503, backend: "outbound|443||sign.test",
				listener: "10.0.45.184:443", requestID: "pinprobe-376a1b4c-2-2", reason: "UH"}},
		{"Istio JSON, keys sorted as Envoy writes them", `{"authority":"httpbin:8000","bytes_received":0,"bytes_sent":135,"connection_termination_details":null,"downstream_local_address":"10.0.45.184:8000","downstream_remote_address":"10.44.1.23:46520","duration":4,"method":"GET","path":"/status/418","protocol":"HTTP/1.1","request_id":"84961386-6d84-929d-98bd-c5aee93b5c88","requested_server_name":null,"response_code":418,"response_code_details":"via_upstream","response_flags":"-","route_name":"default","start_time":"2020-11-25T21:26:18.409Z","upstream_cluster":"outbound|8000||httpbin.foo.svc.cluster.local","upstream_host":"10.44.1.27:80","upstream_local_address":"10.44.1.23:37652","upstream_service_time":"4","upstream_transport_failure_reason":null,"user_agent":"curl/7.73.0-DEV","x_forwarded_for":null}`,
			Options{}, "Envoy JSON (Istio's or Envoy Gateway's keys)",
			want{time: "2020-11-25T21:26:18.409Z", client: "10.44.1.23", port: 46520, status: 418, backend: "10.44.1.27:80", backendAt: "10.44.1.27:80",
				listener: "10.0.45.184:8000", requestID: "84961386-6d84-929d-98bd-c5aee93b5c88", host: "httpbin:8000"}},
		{"Envoy Gateway's JSON, as a quickstart printed it", `{":authority":"backend:3000","bytes_received":0,"bytes_sent":466,"connection_termination_details":null,"downstream_local_address":"10.244.0.14:3000","downstream_remote_address":"10.244.0.12:34805","duration":1,"method":"GET","protocol":"HTTP/1.1","requested_server_name":null,"response_code":200,"response_code_details":"via_upstream","response_flags":"-","route_name":"httproute/envoy-gateway-system/backend/rule/0/match/0/backend","start_time":"2025-04-09T11:44:45.639Z","upstream_cluster":"httproute/envoy-gateway-system/backend/rule/0","upstream_host":"10.244.0.13:3000","upstream_local_address":"10.244.0.14:58822","upstream_transport_failure_reason":null,"user-agent":"curl/7.88.1","x-envoy-origin-path":"/","x-envoy-upstream-service-time":null,"x-forwarded-for":"10.244.0.12","x-request-id":"ab1e4da7-5f1d-45ea-bb4a-fa1ccd03b82b"}`,
			Options{}, "Envoy JSON (Istio's or Envoy Gateway's keys)",
			want{time: "2025-04-09T11:44:45.639Z", client: "10.244.0.12", port: 34805, status: 200, backend: "10.244.0.13:3000", backendAt: "10.244.0.13:3000",
				listener: "10.244.0.14:3000", requestID: "ab1e4da7-5f1d-45ea-bb4a-fa1ccd03b82b", host: "backend:3000", uri: "/"}},
		{"custom text_format, pasted", `[2026-12-01T16:40:21.433Z] [::1]:36414 [::1]:10000 503 UF,URX be_dead [::1]:9 "pinprobe-376a1b4c-2-3" 2 gw-7d9f`,
			Options{Format: custom}, "Envoy format",
			want{time: "2026-12-01T16:40:21.433Z", client: "::1", port: 36414, status: 503, backend: "[::1]:9", backendAt: "[::1]:9",
				listener: "[::1]:10000", requestID: "pinprobe-376a1b4c-2-3", reason: "UF,URX", instance: "gw-7d9f"}},
		{"custom json_format", `{"client":"127.0.0.1:36414","cluster":"be_ok","code":200,"flags":"-","id":"pinprobe-376a1b4c-1-3","ms":3,"pod":"envoy-0","t":"1796143221.433","up":"127.0.0.1:8080"}`,
			Options{Format: customJSON}, "Envoy json_format",
			want{time: "2026-12-01T16:40:21.433Z", client: "127.0.0.1", port: 36414, status: 200, backend: "127.0.0.1:8080", backendAt: "127.0.0.1:8080",
				requestID: "pinprobe-376a1b4c-1-3", instance: "envoy-0", resolution: time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r, _ := readLine(t, tt.line, tt.o, tt.format, tt.want); r.Kind() != Envoy {
				t.Errorf("kind %s; want envoy", r.Kind())
			}
		})
	}
}

// TestPercentKind: a --log-format of %s is Envoy's or HAProxy's when it
// leaves no doubt; otherwise one line asks for --log-type.
func TestPercentKind(t *testing.T) {
	for _, tt := range []struct {
		format string
		kind   Kind
		err    string
	}{
		{EnvoyDefault, Envoy, ""},
		{`[%START_TIME(%Y/%m/%dT%H:%M:%S%z %s)%] %DOWNSTREAM_REMOTE_ADDRESS% %UPSTREAM_HOST%`, Envoy, ""},
		{HAProxyHTTPLog, HAProxy, ""},
		{`%ci:%cp [%[date,utime(%Y-%m-%dT%H:%M:%S)]] %ST %B %{+Q}r`, HAProxy, ""},
		{`%ST%B %ci`, HAProxy, ""},
		{`%ci %UPSTREAM_HOST%`, "", "%UPSTREAM_HOST% is an Envoy operator and %ci a HAProxy variable"},
		{`%ST% %B%`, "", "--log-type envoy or --log-type haproxy"},
	} {
		k, err := percentKind(tt.format)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("percentKind(%q) = %q, %v; want an error saying %q", tt.format, k, err, tt.err)
		case tt.err == "" && (err != nil || k != tt.kind):
			t.Errorf("percentKind(%q) = %q, %v; want %s", tt.format, k, err, tt.kind)
		}
	}
	// Open says the same, and --log-type settles it.
	if r, err := Open(strings.NewReader(""), Options{Format: `[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %DURATION%`}); err != nil || r.Kind() != Envoy {
		t.Errorf("Open of an Envoy format: %v", err)
	}
	if _, err := Open(strings.NewReader(""), Options{Format: `%ci %UPSTREAM_HOST%`}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open of a format of both: %v; want one line", err)
	}
	// The other gateway's format under --log-type: the refusal says whose
	// it reads as.
	for _, tt := range []struct {
		kind   Kind
		format string
		want   string
	}{
		{HAProxy, EnvoyDefault, "give --log-type envoy"},
		{Envoy, HAProxyHTTPLog, "give --log-type haproxy"},
	} {
		if _, err := Open(strings.NewReader(""), Options{Kind: tt.kind, Format: tt.format}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("--log-type %s with the other's format: %v; want it to say %q", tt.kind, err, tt.want)
		}
	}
}

// TestEnvoyRefusals: a format the join cannot use is refused on one line
// that says why; what it cannot read is said.
func TestEnvoyRefusals(t *testing.T) {
	for _, tt := range []struct {
		format, err, note string
	}{
		{`%DOWNSTREAM_REMOTE_ADDRESS% %RESPONSE_CODE%`, "logs no time (%START_TIME%)", ""},
		{`[%START_TIME%] %RESPONSE_CODE% %UPSTREAM_HOST%`, "neither the client's address", ""},
		{`[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %BOGUS_OP%`, "", "%BOGUS_OP% is an operator pinprobe does not know"},
		{`[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %oops`, "starts no Envoy operator", ""},
		{`{"t": "%START_TIME%", "c": "%DOWNSTREAM_REMOTE_ADDRESS%", "n": {"x": "%UPSTREAM_HOST%"}}`, "", `key "n" holds no operator`},
		{`{"t": "%START_TIME%", `, "a JSON object", ""},
		// An empty value, or a lone %, is no operator (it once panicked).
		{`{"t": "%START_TIME%", "c": "%DOWNSTREAM_REMOTE_ADDRESS%", "a": ""}`, "", `key "a" holds "", not one operator`},
		{`[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %`, "starts no Envoy operator", ""},
	} {
		r, err := Open(strings.NewReader(""), Options{Kind: Envoy, Format: tt.format})
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v; want one line saying %q", tt.format, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.format, err)
		case len(r.Notes()) != 1 || !strings.Contains(r.Notes()[0], tt.note):
			t.Errorf("%s: notes %q; want %q", tt.format, r.Notes(), tt.note)
		}
	}
}

// TestEnvoyJSONUnmatched: a JSON log none of whose lines has a key of the
// json_format given says so, at its first line; a line that is no JSON
// says that.
func TestEnvoyJSONUnmatched(t *testing.T) {
	o := Options{Format: `{"t": "%START_TIME%", "c": "%DOWNSTREAM_REMOTE_ADDRESS%"}`}
	r, recs := readAll(t, "{\"foo\":1}\nnot json\n", o)
	st := r.Stats()
	if len(recs) != 0 || st.Skipped != 2 || st.Unmatched == nil || st.Unmatched.Line != 1 || st.Unmatched.FormatHas != `a key "c", "t"` {
		t.Errorf("records %d, stats %+v, unmatched %+v; want both lines skipped, the first without a key \"c\", \"t\"", len(recs), st, st.Unmatched)
	}
	r, _ = readAll(t, "not json\n", o)
	if u := r.Stats().Unmatched; u == nil || u.FormatHas != "{" || u.LineHas != "not json" {
		t.Errorf("unmatched %+v; want the format's { against the line's text", u)
	}
}
