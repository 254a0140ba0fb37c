package accesslog

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzOpen: whatever the bytes, Open returns a reader or an error, and
// Next ends (io.EOF or an error) without a panic, one record per line at
// most, with every format detected or given.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{
		`127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 200 1 "-" "x"` + "\n",
		`::1:36414 [01/Dec/2026:16:40:21.433] fe_v6 be_dead/dead 0/0/-1/-1/3 503 217 - - SC-- 1/1/0/0/3 0/0 "GET /sign HTTP/1.1"` + "\n",
		"TimeGenerated,ClientIp,HttpStatus\n2026-12-01T16:40:21Z,203.0.113.5,502\n",
		`[{"TimeGenerated":"2026-12-01T16:40:21Z","ClientIp":"203.0.113.5","HttpStatus":200}]`,
		`{"tables":[{"name":"t","columns":[{"name":"TimeGenerated"}],"rows":[["2026-12-01T16:40:21Z"]]}]}`,
		`{"records":[{"time":"2026-12-01T16:40:21Z","properties":{"clientIP":"::1"}}]}`,
		`https 2026-12-01T16:40:21.186641Z app/lb/1 192.0.2.1:2817 10.0.0.1:80 0.000 0.001 0.000 502 502 34 366 "GET https://h:443/ HTTP/1.1" "c"` + "\n",
		"\x1f\x8b\x08\x00",
		`10.0.0.1 - Client [10/Nov/2009:23:00:00 +0000] "GET /foo http" 123 132 "referer" "agent" - "foo" "http://10.0.0.2/toto" 123000ms` + "\n",
		traefikJSONLine + "\n",
		"[\n" + gcpEntries[2] + "\n]\n",
		`[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "10.44.1.27:80" outbound|8000||httpbin.foo.svc.cluster.local 10.44.1.23:37652 10.0.45.184:8000 10.44.1.23:46520 - default` + "\n",
		`{"t":"2026-12-01T16:40:21.433Z","c":"[::1]:5","u":"[::1]:9","f":"UF"}` + "\n",
		"{\"records\":[{\"time\":\"2026-12-01T16:40:21Z\",\"properties\":{\"clientIP\":\"::1\",\"requestQuery\":\"SERVER-ROUTED=10.4.0.4&SERVER-STATUS=502\"}}],\"x\":[\"]\"]}\n{\"records\":[]}\n",
		"{\n  \"tables\": [\n    {\"name\": \"t\", \"columns\": [{\"name\": \"TimeGenerated\"}, {\"name\": \"ClientIp\"}], \"rows\": [[\"2026-12-01T16:40:21Z\", \"::1\"]]},\n    {\"columns\": [], \"rows\": []}\n  ]\n}\n",
		"\ufeff[{\"TimeGenerated\":\"2026-12-01T16:40:21Z\",\"ClientIp\":\"203.0.113.5\"}]",
		"\xff\xfe1\x002\x007\x00.\x000\x00.\x000\x00.\x001\x00 \x00-\x00\n\x00\x00\xd8",
		"2026-12-01T16:40:21Z\t203.0.113.5\t502\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	formats := []Options{{}, {Kind: Nginx}, {Kind: HAProxy}, {Kind: Azure}, {Kind: ALB}, {Kind: Traefik}, {Kind: GCP},
		{Format: `$remote_addr:$remote_port [$time_local] "$request" $status up=$upstream_addr us=$upstream_status`},
		{Format: `%ci:%cp [%tr] %ft %b/%s %si:%sp %ST %{+Q}r`},
		{Format: `%[src]:%[src_port] [%[date,utime(%Y-%m-%dT%H:%M:%S%z)]] %[be_name]/%[srv_name] %ST %[date(0,ms)]`},
		{Kind: Envoy}, {Format: `{"t":"%START_TIME%","c":"%DOWNSTREAM_REMOTE_ADDRESS%","u":"%UPSTREAM_HOST%","f":"%RESPONSE_FLAGS%"}`, Kind: Envoy}}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		o := formats[int(which)%len(formats)]
		o.MaxLine = 4096
		r, err := Open(bytes.NewReader(data), o)
		if err != nil {
			return
		}
		lines := int64(bytes.Count(data, []byte("\n"))) + 1
		var n int64
		for {
			var rec Record
			err := r.Next(&rec)
			if errors.Is(err, io.EOF) || err != nil {
				break
			}
			n++
			if n > lines+int64(len(data)) {
				t.Fatalf("%d records from %d bytes", n, len(data))
			}
		}
	})
}

// FuzzStrftime: whatever the value and the format, parseStrftime returns
// without a panic, and a time it reads lies within the bounds.
func FuzzStrftime(f *testing.F) {
	f.Add("2026-12-01T16:40:21.433+01:00", "%Y-%m-%dT%H:%M:%S.%N%z")
	f.Add("Tue Dec  1 04:40:21 PM UTC", "%a %b %e %I:%M:%S %p %Z")
	f.Add("1796143221.5", "%s.%6f")
	f.Fuzz(func(t *testing.T, v, format string) {
		if tm, _, _, ok := parseStrftime(v, format, true); ok && (tm.Before(minTime) || !tm.Before(maxTime)) {
			t.Fatalf("parseStrftime(%q, %q) = %v: out of bounds", v, format, tm)
		}
	})
}

// FuzzFormat: whatever --log-format says, under whatever --log-type,
// Open compiles it or refuses it on one line, and reading a line with it
// ends without a panic.
func FuzzFormat(f *testing.F) {
	f.Add(`%[src]:%[src_port] [%[date,utime(%Y-%m-%dT%H:%M:%S%z)]] %[be_name]/%[srv_name] %ST`, `::1:5 [2026-12-01T16:40:21+0000] b/s 503`, uint8(0))
	f.Add(EnvoyIstio, `[2020-11-25T21:26:18.409Z] "GET / HTTP/1.1" 503 UF - - "-" 0 0 1 - "-" "a" "b" "h" "[::1]:9" c - - [::1]:5 - -`, uint8(0))
	f.Add(`{"t":"%START_TIME(%s.%3f)%","c":"%DOWNSTREAM_REMOTE_ADDRESS%"}`, `{"t":"1796143221.433","c":"[::1]:5"}`, uint8(4))
	f.Add(`$remote_addr [$time_local] "$request" $status`, `::1 [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 200`, uint8(1))
	kinds := []Kind{"", Nginx, HAProxy, Azure, Envoy}
	f.Fuzz(func(t *testing.T, format, line string, which uint8) {
		r, err := Open(strings.NewReader(line+"\n"), Options{Format: format, Kind: kinds[int(which)%len(kinds)], MaxLine: 4096})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal of %q on several lines: %v", format, err)
			}
			return
		}
		for i := 0; i < 3; i++ {
			var rec Record
			if r.Next(&rec) != nil {
				break
			}
		}
	})
}
