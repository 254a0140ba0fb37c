package accesslog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// readAll opens log with o and reads every record.
func readAll(t *testing.T, log string, o Options) (*Reader, []Record) {
	t.Helper()
	r, err := Open(strings.NewReader(log), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var out []Record
	for {
		var rec Record
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return r, out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, rec)
	}
}

// readLine reads line with o into one record of format, and checks it.
func readLine(t *testing.T, line string, o Options, format string, w want) (*Reader, Record) {
	t.Helper()
	r, recs := readAll(t, line+"\n", o)
	if len(recs) != 1 || r.Format() != format {
		t.Fatalf("%d records as %q (stats %+v); want 1 as %q", len(recs), r.Format(), r.Stats(), format)
	}
	w.check(t, recs[0])
	return r, recs[0]
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// want is what a test expects of a record; zero fields are not checked.
type want struct {
	time       string
	atEnd      bool
	noZone     bool
	client     string
	port       uint16
	status     int
	backend    string
	backendAt  string // the backend's address, when the log says it
	bstatus    string
	instance   string
	listener   string
	requestID  string
	reason     string
	uri        string
	host       string
	tries      int
	resolution time.Duration
}

func (w want) check(t *testing.T, r Record) {
	t.Helper()
	if w.time != "" && !r.Time.Equal(mustTime(w.time)) {
		t.Errorf("time %v; want %s", r.Time, w.time)
	}
	if r.AtEnd != w.atEnd || r.NoZone != w.noZone {
		t.Errorf("at end %v, no zone %v; want %v, %v", r.AtEnd, r.NoZone, w.atEnd, w.noZone)
	}
	if w.client != "" && r.Client != netip.MustParseAddr(w.client) {
		t.Errorf("client %v; want %s", r.Client, w.client)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if want != got {
			t.Errorf("%s %v; want %v", name, got, want)
		}
	}
	check("port", r.ClientPort, w.port)
	check("status", r.Status, w.status)
	check("backend", r.Backend(), w.backend)
	check("backend status", r.BackendStatus(), w.bstatus)
	check("instance", r.Instance, w.instance)
	check("listener", r.Listener, w.listener)
	check("request id", r.RequestID, w.requestID)
	check("reason", r.Reason, w.reason)
	if w.uri != "" {
		check("uri", r.URI, w.uri)
	}
	if w.host != "" {
		check("host", r.Host, w.host)
	}
	if w.tries != 0 {
		check("tries", len(r.Tries), w.tries)
	}
	if w.backendAt != "" {
		if len(r.Tries) == 0 || r.Tries[len(r.Tries)-1].Addr.String() != w.backendAt {
			t.Errorf("backend address %v; want %s", r.Tries, w.backendAt)
		}
	}
	if w.resolution != 0 {
		check("resolution", r.Resolution, w.resolution)
	}
}

// nginxPin is a custom nginx format that logs everything a join reads.
const nginxPin = `'$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent ' 
    '"$http_user_agent" up=$upstream_addr us=$upstream_status rid=$http_x_request_id ' 
    'srv=$server_addr:$server_port host=$hostname rt=$request_time'`

// TestFormats: one line of every format, detected or given, read into
// what a join needs.
func TestFormats(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		o          Options
		format     string
		want       want
	}{
		{"nginx combined", `127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET /sign?x=1 HTTP/1.1" 502 157 "-" "pinprobe/0.1.0"`, Options{},
			"nginx combined", want{time: "2026-12-01T16:40:21Z", atEnd: true, client: "127.0.0.1", status: 502, uri: "/sign?x=1", resolution: time.Second}},
		{"nginx combined and more", `::1 - bob [01/Dec/2026:17:40:21 +0100] "GET / HTTP/1.1" 200 1 "-" "a \"quoted\" agent" "10.0.0.1" 0.002`, Options{},
			"nginx combined", want{time: "2026-12-01T16:40:21Z", atEnd: true, client: "::1", status: 200}},
		{"nginx custom", `::1:36414 [01/Dec/2026:16:40:21 +0000] "GET /sign HTTP/1.1" 502 157 "pinprobe/0.1.0" up=[::1]:9, 127.0.0.1:8080 us=502, 200 rid=pinprobe-376a1b4c-2-1 srv=::1:47080 host=gw1 rt=0.250`,
			Options{Format: nginxPin}, "nginx log_format",
			want{time: "2026-12-01T16:40:20.75Z", client: "::1", port: 36414, status: 502, backend: "127.0.0.1:8080", backendAt: "127.0.0.1:8080", bstatus: "200", tries: 2,
				instance: "gw1", listener: "[::1]:47080", requestID: "pinprobe-376a1b4c-2-1"}},
		{"nginx no upstream", `127.0.0.1:5 [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 404 0 "-" up=- us=- rid=- srv=127.0.0.1:80 host=gw1 rt=0.000`,
			Options{Format: nginxPin}, "nginx log_format",
			want{time: "2026-12-01T16:40:21Z", client: "127.0.0.1", port: 5, status: 404, instance: "gw1", listener: "127.0.0.1:80"}},
		{"nginx msec and iso", `1796143221.250 2026-12-01T16:40:21+00:00 10.1.2.3 502 pool`,
			Options{Format: `$msec $time_iso8601 $remote_addr $status $upstream_addr`}, "nginx log_format",
			want{time: "2026-12-01T16:40:21.25Z", atEnd: true, client: "10.1.2.3", status: 502, backend: "pool", resolution: time.Millisecond}},
		{"haproxy httplog", `127.0.0.1:34170 [01/Dec/2026:16:40:21.500] fe_v4 be_ok/s1 0/0/0/1/1 200 87 - - ---- 1/1/0/0/0 0/0 "GET /sign HTTP/1.1"`, Options{},
			"HAProxy httplog", want{time: "2026-12-01T16:40:21.5Z", noZone: true, client: "127.0.0.1", port: 34170, status: 200, backend: "be_ok/s1", listener: "fe_v4", uri: "/sign"}},
		{"haproxy ipv6 dead server", `::1:36414 [01/Dec/2026:16:40:21.433] fe_v6 be_dead/dead 0/0/-1/-1/3 503 217 - - SC-- 1/1/0/0/3 0/0 "GET /sign HTTP/1.1"`, Options{},
			"HAProxy httplog", want{time: "2026-12-01T16:40:21.433Z", noZone: true, client: "::1", port: 36414, status: 503, backend: "be_dead/dead", listener: "fe_v6", reason: "SC--"}},
		{"haproxy captured id and syslog", `<134>Dec  1 16:40:21 gw2 haproxy[123]: 127.0.0.1:34170 [01/Dec/2026:16:40:21.500] fe~ be/s1 0/0/0/1/1 200 87 - - ---- 1/1/0/0/0 0/0 {pinprobe-376a1b4c-1-2|sign.test} "GET /sign HTTP/1.1"`, Options{},
			"HAProxy httplog", want{time: "2026-12-01T16:40:21.5Z", noZone: true, client: "127.0.0.1", port: 34170, status: 200, backend: "be/s1", listener: "fe", instance: "gw2", requestID: "pinprobe-376a1b4c-1-2"}},
		{"haproxy no server", `10.0.0.9:1234 [01/Dec/2026:16:40:21.500] fe fe/<NOSRV> 0/-1/-1/-1/0 503 217 - - SC-- 1/1/0/0/0 0/0 "GET / HTTP/1.1"`, Options{},
			"HAProxy httplog", want{time: "2026-12-01T16:40:21.5Z", noZone: true, client: "10.0.0.9", port: 1234, status: 503, listener: "fe", reason: "SC--"}},
		{"haproxy custom", `127.0.0.1:50000 fe 127.0.0.1:8443 be/s2 ::1:9 [01/Dec/2026:16:40:21 +0000] 502 pinprobe-aaaaaaaa-0-7 "GET /x HTTP/1.1" 12`,
			Options{Format: `%ci:%cp %ft %fi:%fp %b/%s %si:%sp [%trg] %ST %[capture.req.hdr(0)] %{+Q}r %Ta`}, "HAProxy log-format",
			want{time: "2026-12-01T16:40:21Z", client: "127.0.0.1", port: 50000, status: 502, backend: "be/s2", backendAt: "[::1]:9", listener: "fe", requestID: "pinprobe-aaaaaaaa-0-7"}},
		{"alb", `https 2026-12-01T16:40:21.186641Z app/my-lb/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 502 502 34 366 "GET https://www.example.com:443/sign?token=x HTTP/1.1" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337281-1d84f3d73c47ec4e58577259" "www.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" 1 2026-12-01T16:40:21.185000Z "forward" "-" "-" "10.0.0.1:80" "502" "-" "-" TID_1234`, Options{},
			"AWS ALB", want{time: "2026-12-01T16:40:21.185Z", client: "192.168.131.39", port: 2817, status: 502, backend: "10.0.0.1:80", backendAt: "10.0.0.1:80", bstatus: "502",
				listener: "app/my-lb/50dc6c495c0c9188:443", uri: "/sign?token=x", host: "www.example.com", resolution: time.Microsecond}},
		{"alb not routed", `http 2026-12-01T16:40:21.186641Z app/my-lb/50dc 192.168.131.39:2817 - -1 -1 -1 503 - 34 366 "GET http://www.example.com:80/ HTTP/1.1" "curl" - - - "Root=1" "-" "-" 0 2026-12-01T16:40:21.186000Z "forward" "-" "TargetNotFound" "-" "-"`, Options{},
			"AWS ALB", want{time: "2026-12-01T16:40:21.186Z", client: "192.168.131.39", port: 2817, status: 503, listener: "app/my-lb/50dc:80", reason: "TargetNotFound"}},
	} {
		t.Run(tt.name, func(t *testing.T) { readLine(t, tt.line, tt.o, tt.format, tt.want) })
	}
}

// TestAzureExports: the AGWAccessLogs columns (an older revision without
// ClientPort and ErrorInfo, a newer one with them), AzureDiagnostics and a
// storage account's records, as CSV and JSON, with the portal's time
// format and byte-order mark; records of other categories counted apart;
// the columns the join reads that a log lacks named in its format.
func TestAzureExports(t *testing.T) {
	agwOld := "\ufeffTimeGenerated [UTC],ClientIp,HttpMethod,RequestUri,Host,HttpStatus,ServerRouted,ServerStatus,InstanceId,ListenerName,TimeTaken\n" +
		`"12/1/2026, 4:40:21.750 PM",203.0.113.5,GET,/sign,sign.example.com,502,"[2001:db8::9]:443",502,appgw_2,listener-https,0.250` + "\n"
	agwNew := "TimeGenerated,ClientIp,ClientPort,HttpMethod,RequestUri,Host,HttpStatus,ServerRouted,ServerStatus,InstanceId,ListenerName,TimeTaken,ErrorInfo\n" +
		"2026-12-01T16:40:21.7500000Z,203.0.113.5,50123,GET,/sign,sign.example.com,502,10.0.0.4:443,502,appgw_0,listener-https,0.250,ERRORINFO_UPSTREAM_CLOSED_CONNECTION\n"
	diag := "TimeGenerated [UTC],Category,clientIP_s,clientPort_d,httpMethod_s,requestUri_s,host_s,httpStatus_d,serverRouted_s,serverStatus_s,instanceId_s,listenerName_s,timeTaken_d\n" +
		"2026-12-01T16:40:21.750Z,ApplicationGatewayAccessLog,203.0.113.5,50123,GET,/sign,sign.example.com,502,10.0.0.4:443,502,appgw_1,l1,0.25\n" +
		"2026-12-01T16:40:21.750Z,ApplicationGatewayFirewallLog,203.0.113.5,,GET,/sign,sign.example.com,,,,appgw_1,,\n"
	agwJSON := `[{"TimeGenerated":"2026-12-01T16:40:21.75Z","ClientIp":"203.0.113.5","ClientPort":50123,"HttpStatus":502,"ServerRouted":"10.0.0.4:443","ServerStatus":"502","InstanceId":"appgw_0","ListenerName":"l1","TimeTaken":0.25,"RequestUri":"/sign"}]`
	diagJSON := `{"tables":[{"name":"PrimaryResult","columns":[{"name":"TimeGenerated","type":"datetime"},{"name":"clientIP_s","type":"string"},{"name":"clientPort_d","type":"real"},{"name":"httpStatus_d","type":"real"},{"name":"serverRouted_s","type":"string"},{"name":"serverStatus_s","type":"string"},{"name":"instanceId_s","type":"string"},{"name":"listenerName_s","type":"string"},{"name":"timeTaken_d","type":"real"}],"rows":[["2026-12-01T16:40:21.75Z","203.0.113.5",50123,502,"10.0.0.4:443","502","appgw_1","l1",0.25]]}]}`
	storage := `{"records": [{"timeStamp": "2026-12-01T16:40:21+00:00", "listenerName": "l1", "operationName": "ApplicationGatewayAccess", "category": "ApplicationGatewayAccessLog",
 "properties": {"instanceId": "appgw_2", "clientIP": "203.0.113.5", "clientPort": 50123, "httpMethod": "GET", "requestUri": "/sign", "httpStatus": 502, "timeTaken": 0.25,
  "serverRouted": "10.0.0.4:443", "serverStatus": "502", "error_info": "ERRORINFO_NO_ERROR"}},
 {"time": "2026-12-01T16:40:22Z", "category": "ApplicationGatewayFirewallLog", "properties": {"instanceId": "appgw_2"}}]}`
	jsonLines := `{"timeStamp": "2026-12-01T16:40:21.75Z", "category": "ApplicationGatewayAccessLog", "properties": {"instanceId": "appgw_0", "clientIP": "203.0.113.5", "clientPort": 50123, "httpStatus": 200, "serverRouted": "10.0.0.4:443", "serverStatus": "200"}}
{"timeStamp": "2026-12-01T16:40:21.75Z", "category": "ApplicationGatewayAccessLog", "properties": {"instanceId": "appgw_0", "clientIP": "203.0.113.5", "clientPort": 50124, "httpStatus": 200, "serverRouted": "10.0.0.4:443", "serverStatus": "200"}}
`
	for _, tt := range []struct {
		name, log, format string
		n                 int
		other             int64
		want              want
	}{
		{"AGWAccessLogs old revision", agwOld, "Azure AGWAccessLogs (CSV; without ClientPort, ErrorInfo)", 1, 0, want{time: "2026-12-01T16:40:21.5Z", client: "203.0.113.5", status: 502,
			backend: "[2001:db8::9]:443", backendAt: "[2001:db8::9]:443", bstatus: "502", instance: "appgw_2", listener: "listener-https", host: "sign.example.com"}},
		{"AGWAccessLogs", agwNew, "Azure AGWAccessLogs (CSV)", 1, 0, want{time: "2026-12-01T16:40:21.5Z", client: "203.0.113.5", port: 50123, status: 502,
			backend: "10.0.0.4:443", bstatus: "502", instance: "appgw_0", listener: "listener-https", reason: "ERRORINFO_UPSTREAM_CLOSED_CONNECTION"}},
		{"AzureDiagnostics", diag, "Azure AzureDiagnostics (CSV; without error_info_s)", 1, 1, want{time: "2026-12-01T16:40:21.5Z", client: "203.0.113.5", port: 50123, status: 502,
			backend: "10.0.0.4:443", bstatus: "502", instance: "appgw_1", listener: "l1"}},
		{"AGWAccessLogs JSON", agwJSON, "Azure AGWAccessLogs (JSON; without ErrorInfo)", 1, 0, want{time: "2026-12-01T16:40:21.5Z", client: "203.0.113.5", port: 50123, status: 502,
			backend: "10.0.0.4:443", bstatus: "502", instance: "appgw_0", listener: "l1"}},
		{"AzureDiagnostics API table", diagJSON, "Azure AzureDiagnostics (JSON; without error_info_s)", 1, 0, want{time: "2026-12-01T16:40:21.5Z", client: "203.0.113.5", port: 50123, status: 502,
			backend: "10.0.0.4:443", bstatus: "502", instance: "appgw_1", listener: "l1"}},
		{"storage records", storage, "Azure diagnostic records (JSON)", 1, 1, want{time: "2026-12-01T16:40:20.75Z", client: "203.0.113.5", port: 50123, status: 502,
			backend: "10.0.0.4:443", bstatus: "502", instance: "appgw_2", listener: "l1", uri: "/sign"}},
		{"storage JSON lines", jsonLines, "Azure diagnostic records (JSON; without listenerName, timeTaken, error_info)", 2, 0, want{time: "2026-12-01T16:40:21.75Z", atEnd: true, client: "203.0.113.5", port: 50123, status: 200,
			backend: "10.0.0.4:443", bstatus: "200", instance: "appgw_0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, recs := readAll(t, tt.log, Options{})
			if r.Format() != tt.format || r.Kind() != Azure {
				t.Errorf("format %q (%s); want %q", r.Format(), r.Kind(), tt.format)
			}
			if len(recs) != tt.n || r.Stats().Other != tt.other {
				t.Fatalf("%d records, %d other (stats %+v); want %d, %d", len(recs), r.Stats().Other, r.Stats(), tt.n, tt.other)
			}
			tt.want.check(t, recs[0])
			if port := r.Logged().Has(FieldClientPort); port != (tt.want.port != 0) {
				t.Errorf("logs the client port: %v; want %v", port, tt.want.port != 0)
			}
		})
	}
}

// TestBadInput: what is no access log, a truncated gzip stream, a huge
// line, lines of another format among good ones, and a custom format that
// names an unknown variable: a clear error, or a counted skip.
func TestBadInput(t *testing.T) {
	good := `127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 200 1 "-" "x"` + "\n"
	if _, err := Open(strings.NewReader("hello\nworld\n"), Options{}); !errors.Is(err, ErrFormat) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a text file: %v; want ErrFormat on one line", err)
	}
	if _, err := Open(strings.NewReader("hello\n"), Options{Kind: ALB}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "alb") {
		t.Errorf("a text file as an ALB log: %v; want ErrFormat naming alb", err)
	}
	for _, tt := range []struct{ format, want string }{
		{`$remote_addr [$time_local] $upstream_adr`, "unknown variable $upstream_adr (did you mean $upstream_addr?)"},
		{`$remote_addr [$time_local] $my_map_var`, "--log-var my_map_var"},
		{`%ci:%cp [%tr] %STT`, "unknown variable %STT (did you mean %ST?)"},
		{`$remote_addr $status`, "logs no time"},
		{`[$time_local] $status`, "no client address"},
		{`plain text`, "neither nginx"},
	} {
		_, err := Open(strings.NewReader(good), Options{Format: tt.format})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--log-format %q: %v; want one line saying %q", tt.format, err, tt.want)
		}
	}
	if _, err := Open(strings.NewReader(good), Options{Format: `$remote_addr [$time_local] $my_map_var`, Vars: []string{"my_map_var"}}); err != nil {
		t.Errorf("a variable declared with --log-var: %v", err)
	}

	// A huge line and junk among good lines: counted, with their numbers.
	log := good + strings.Repeat("x", 3*MaxLine) + "\n" + "not a log line\n" + good
	r, recs := readAll(t, log, Options{})
	st := r.Stats()
	if len(recs) != 2 || st.TooLong != 1 || st.Skipped != 1 || len(st.SkippedAt) != 1 || st.SkippedAt[0] != 3 {
		t.Errorf("%d records, stats %+v; want 2 records, 1 too long, 1 skipped at line 3", len(recs), st)
	}
	if recs[1].Line != 4 {
		t.Errorf("second record at line %d; want 4", recs[1].Line)
	}

	// A truncated gzip stream: the lines before the cut, and the cut said.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for range 2000 {
		zw.Write([]byte(good))
	}
	zw.Close()
	cut := gz.Bytes()[:gz.Len()/2]
	r, recs = readAll(t, string(cut), Options{})
	if st := r.Stats(); st.Err == nil || !strings.Contains(st.Err.Error(), "gzip") || len(recs) == 0 || len(recs) >= 2000 || !r.Gzip() {
		t.Errorf("truncated gzip: %d records, err %v; want some lines and the cut said", len(recs), st.Err)
	}
	r, recs = readAll(t, gz.String(), Options{})
	if len(recs) != 2000 || r.Stats().Err != nil {
		t.Errorf("whole gzip: %d records, err %v; want 2000", len(recs), r.Stats().Err)
	}
	// A JSON record cut off, and one too long.
	_, recs = readAll(t, `[{"TimeGenerated":"2026-12-01T16:40:21Z","ClientIp":"203.0.113.5","HttpStatus":200}, {"TimeGenerated":"2026-`, Options{})
	if len(recs) != 1 {
		t.Errorf("cut JSON: %d records; want the whole one", len(recs))
	}
	r, recs = readAll(t, `[{"x":"`+strings.Repeat("y", 2*MaxLine)+`"}, {"TimeGenerated":"2026-12-01T16:40:21Z","ClientIp":"203.0.113.5","HttpStatus":200}]`, Options{})
	if len(recs) != 1 || r.Stats().TooLong != 1 {
		t.Errorf("a huge JSON record: %d records, stats %+v; want 1, 1 too long", len(recs), r.Stats())
	}
}

// TestHugeLineMemory: a line far longer than MaxLine costs no more than
// MaxLine or so of memory: it is read through, not held.
func TestHugeLineMemory(t *testing.T) {
	const size = 64 << 20
	src := io.MultiReader(strings.NewReader(`127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 200 1 "-" "x"`+"\n"),
		io.LimitReader(repeatReader('x'), size), strings.NewReader("\n"))
	var before, after runtimeMem
	before.read()
	r, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		var rec Record
		if err := r.Next(&rec); err != nil {
			break
		}
		n++
	}
	after.read()
	if n != 1 || r.Stats().TooLong != 1 {
		t.Errorf("%d records, stats %+v; want 1 and the huge line skipped", n, r.Stats())
	}
	if grew := after.total - before.total; grew > 8<<20 {
		t.Errorf("reading a %d MiB line allocated %d MiB; want it read through within a few MiB", size>>20, grew>>20)
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
