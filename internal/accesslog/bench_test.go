package accesslog

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// benchLogs are logs of each reader, a few thousand records each: the
// lines of the format tests, repeated.
var benchLogs = []struct {
	name, head, line, tail string
	o                      Options
}{
	{name: "nginx-combined", line: `127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET /sign?x=1 HTTP/1.1" 502 157 "-" "pinprobe/0.1.0"`},
	{name: "nginx-custom", line: `::1:36414 [01/Dec/2026:16:40:21 +0000] "GET /sign HTTP/1.1" 502 157 "pinprobe/0.1.0" up=[::1]:9, 127.0.0.1:8080 us=502, 200 rid=pinprobe-376a1b4c-2-1 srv=::1:47080 host=gw1 rt=0.250`, o: Options{Format: nginxPin}},
	{name: "haproxy", line: `<134>Dec  1 16:40:21 gw2 haproxy[123]: 127.0.0.1:34170 [01/Dec/2026:16:40:21.500] fe~ be/s1 0/0/0/1/1 200 87 - - ---- 1/1/0/0/0 0/0 {pinprobe-376a1b4c-1-2|sign.test} "GET /sign HTTP/1.1"`},
	{name: "alb", line: `https 2026-12-01T16:40:21.186641Z app/my-lb/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 502 502 34 366 "GET https://www.example.com:443/sign?token=x HTTP/1.1" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337281-1d84f3d73c47ec4e58577259" "www.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" 1 2026-12-01T16:40:21.185000Z "forward" "-" "-" "10.0.0.1:80" "502" "-" "-" TID_1234`},
	{name: "envoy-istio", line: `[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "10.44.1.27:80" outbound|8000||httpbin.foo.svc.cluster.local 10.44.1.23:37652 10.0.45.184:8000 10.44.1.23:46520 - default`},
	{name: "envoy-json", line: `{"authority":"httpbin:8000","bytes_received":0,"bytes_sent":135,"connection_termination_details":null,"downstream_local_address":"10.0.45.184:8000","downstream_remote_address":"10.44.1.23:46520","duration":4,"method":"GET","path":"/status/418","protocol":"HTTP/1.1","request_id":"84961386-6d84-929d-98bd-c5aee93b5c88","requested_server_name":null,"response_code":418,"response_code_details":"via_upstream","response_flags":"-","route_name":"default","start_time":"2020-11-25T21:26:18.409Z","upstream_cluster":"outbound|8000||httpbin.foo.svc.cluster.local","upstream_host":"10.44.1.27:80","upstream_local_address":"10.44.1.23:37652","upstream_service_time":"4","upstream_transport_failure_reason":null,"user_agent":"curl/7.73.0-DEV","x_forwarded_for":null}`},
	{name: "traefik-common", line: `198.51.100.7, 10.0.0.1 - - [01/Dec/2026:16:40:00 +0000] "GET /sign HTTP/1.1" 502 11 "-" "pinprobe/0.1.0" 42 "sign@docker" "https://[2001:db8::9]:443" 3ms`},
	{name: "traefik-json", line: traefikJSONLine},
	{name: "gcp", line: `{"httpRequest":{"latency":"0.003001s","remoteIp":"198.51.100.7:40001","requestMethod":"GET","requestUrl":"https://sign.example.com/sign?x=1","status":502},"jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","statusDetails":"failed_to_connect_to_backend"},"resource":{"labels":{"backend_service_name":"sign-be","backend_name":"sign-ig-b","forwarding_rule_name":"sign-fr-v4"},"type":"http_load_balancer"},"timestamp":"2026-12-01T16:40:00.200Z"}`},
	{name: "azure-csv", head: "TimeGenerated,ClientIp,ClientPort,HttpMethod,RequestUri,Host,HttpStatus,ServerRouted,ServerStatus,InstanceId,ListenerName,TimeTaken,ErrorInfo",
		line: "2026-12-01T16:40:21.7500000Z,203.0.113.5,50123,GET,/sign,sign.example.com,502,10.0.0.4:443,502,appgw_0,listener-https,0.250,ERRORINFO_UPSTREAM_CLOSED_CONNECTION"},
	{name: "azure-json", line: `{"timeStamp": "2026-12-01T16:40:21.75Z", "category": "ApplicationGatewayAccessLog", "properties": {"instanceId": "appgw_0", "clientIP": "203.0.113.5", "clientPort": 50123, "httpStatus": 200, "serverRouted": "10.0.0.4:443", "serverStatus": "200"}}`},
}

// BenchmarkReaders reads each reader's log whole; b.N logs.
func BenchmarkReaders(b *testing.B) {
	const n = 5000
	for _, bl := range benchLogs {
		var sb strings.Builder
		if bl.head != "" {
			sb.WriteString(bl.head + "\n")
		}
		for range n {
			sb.WriteString(bl.line + "\n")
		}
		log := sb.String()
		b.Run(bl.name, func(b *testing.B) {
			b.SetBytes(int64(len(log)))
			for b.Loop() {
				r, err := Open(strings.NewReader(log), bl.o)
				if err != nil {
					b.Fatal(err)
				}
				var rec Record
				got := 0
				for {
					err := r.Next(&rec)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					got++
				}
				if got != n {
					b.Fatalf("%d records; want %d", got, n)
				}
			}
		})
	}
}
