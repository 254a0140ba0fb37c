package accesslog

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// v2Sample and v1Sample are the access records of Microsoft's diagnostic
// logs page (application-gateway-diagnostics.md), field for field.
const v2Sample = `{
    "timeStamp": "2021-10-14T22:17:11+00:00",
    "resourceId": "/SUBSCRIPTIONS/{subscriptionId}/RESOURCEGROUPS/{resourceGroupName}/PROVIDERS/MICROSOFT.NETWORK/APPLICATIONGATEWAYS/{applicationGatewayName}",
    "listenerName": "HTTP-Listener",
    "ruleName": "Storage-Static-Rule",
    "backendPoolName": "StaticStorageAccount",
    "backendSettingName": "StorageStatic-HTTPS-Setting",
    "operationName": "ApplicationGatewayAccess",
    "category": "ApplicationGatewayAccessLog",
    "properties": {
        "instanceId": "appgw_2",
        "clientIP": "185.42.129.24",
        "clientPort": 45057,
        "httpMethod": "GET",
        "originalRequestUriWithArgs": "\/",
        "requestUri": "\/",
        "requestQuery": "",
        "userAgent": "Mozilla\/5.0 (Windows NT 6.1; WOW64) AppleWebKit\/537.36 (KHTML, like Gecko) Chrome\/52.0.2743.116 Safari\/537.36",
        "httpStatus": 200,
        "httpVersion": "HTTP\/1.1",
        "receivedBytes": 184,
        "sentBytes": 466,
        "clientResponseTime": 0,
        "timeTaken": 0.034,
        "WAFEvaluationTime": "0.000",
        "WAFMode": "Detection",
        "transactionId": "592d1649f75a8d480a3c4dc6a975309d",
        "sslEnabled": "on",
        "sslCipher": "ECDHE-RSA-AES256-GCM-SHA384",
        "sslProtocol": "TLSv1.2",
        "sslClientVerify": "NONE",
        "sslClientCertificateFingerprint": "",
        "sslClientCertificateIssuerName": "",
        "serverRouted": "52.239.221.65:443",
        "serverStatus": "200",
        "serverResponseLatency": "0.028",
        "upstreamSourcePort": "21564",
        "originalHost": "20.110.30.194",
        "host": "20.110.30.194",
        "error_info":"ERRORINFO_NO_ERROR",
        "contentType":"application/json"
    }
}`

const v1Sample = `{
    "resourceId": "/SUBSCRIPTIONS/{subscriptionId}/RESOURCEGROUPS/PEERINGTEST/PROVIDERS/MICROSOFT.NETWORK/APPLICATIONGATEWAYS/{applicationGatewayName}",
    "operationName": "ApplicationGatewayAccess",
    "time": "2017-04-26T19:27:38Z",
    "category": "ApplicationGatewayAccessLog",
    "properties": {
        "instanceId": "ApplicationGatewayRole_IN_0",
        "clientIP": "191.96.249.97",
        "clientPort": 46886,
        "httpMethod": "GET",
        "requestUri": "/phpmyadmin/scripts/setup.php",
        "requestQuery": "X-AzureApplicationGateway-CACHE-HIT=0&SERVER-ROUTED=10.4.0.4&X-AzureApplicationGateway-LOG-ID=874f1f0f-6807-41c9-b7bc-f3cfa74aa0b1&SERVER-STATUS=404",
        "userAgent": "-",
        "httpStatus": 404,
        "httpVersion": "HTTP/1.0",
        "receivedBytes": 65,
        "sentBytes": 553,
        "timeTaken": 205,
        "sslEnabled": "off",
        "host": "www.contoso.com",
        "originalHost": "www.contoso.com"
    }
}`

// TestAzurePublishedSamples: the published samples in the records wrapper
// diagnostic settings write (Event Hub, storage), alone, together, as
// two payloads: every record read, the wrapper's end no error.
func TestAzurePublishedSamples(t *testing.T) {
	v2 := want{time: "2021-10-14T22:17:10.966Z", client: "185.42.129.24", port: 45057, status: 200, backend: "52.239.221.65:443", backendAt: "52.239.221.65:443",
		bstatus: "200", instance: "appgw_2", listener: "HTTP-Listener", host: "20.110.30.194", uri: "/"}
	v1 := want{time: "2017-04-26T19:27:37.795Z", client: "191.96.249.97", port: 46886, status: 404, backend: "10.4.0.4", backendAt: "10.4.0.4:0",
		bstatus: "404", instance: "ApplicationGatewayRole_IN_0", host: "www.contoso.com", uri: "/phpmyadmin/scripts/setup.php"}
	for _, tt := range []struct {
		name, log string
		want      []want
	}{
		{"v2 in records", `{"records": [` + v2Sample + `]}`, []want{v2}},
		{"v1 in records", "{\n  \"records\": [\n" + v1Sample + "\n  ]\n}\n", []want{v1}},
		{"both, two payloads", `{"records":[` + v2Sample + "]}\n" + `{"records":[` + v1Sample + "]}\n", []want{v2, v1}},
		{"both, records then other keys", `{"records":[` + v2Sample + "," + v1Sample + `], "note": {"a": ["]}"]}}`, []want{v2, v1}},
		{"JSON lines", strings.Join(strings.Fields(v2Sample), " ") + "\n" + strings.Join(strings.Fields(v1Sample), " ") + "\n", []want{v2, v1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, recs := readAll(t, tt.log, Options{})
			st := r.Stats()
			if len(recs) != len(tt.want) || st.Err != nil || st.Skipped != 0 || st.TooLong != 0 {
				t.Fatalf("%d records, stats %+v; want %d, read to the end", len(recs), st, len(tt.want))
			}
			for i, w := range tt.want {
				w.check(t, recs[i])
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestRecordsStreamed: a records wrapper far larger than memory is read
// a record at a time: its first record comes after reading little of it,
// a huge record inside it is skipped and counted, and what follows it is
// read.
func TestRecordsStreamed(t *testing.T) {
	rec := strings.Join(strings.Fields(v2Sample), " ")
	const n = 20_000 // about 30 MB
	body := io.MultiReader(strings.NewReader(`{"records": [`+rec),
		io.LimitReader(&repeatString{s: "," + rec}, int64(n*(len(rec)+1))),
		strings.NewReader(`, {"x": "`), io.LimitReader(repeatReader('y'), 2*MaxLine), strings.NewReader(`"}, `+rec+"]}\n"))
	src := &countingReader{r: body}
	r, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var first Record
	if err := r.Next(&first); err != nil {
		t.Fatal(err)
	}
	if src.n > 1<<20 {
		t.Errorf("the first record came after reading %d bytes; want it streamed", src.n)
	}
	got := 1
	for {
		var rec Record
		if err := r.Next(&rec); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got++
	}
	if st := r.Stats(); got != n+2 || st.TooLong != 1 || st.Err != nil {
		t.Errorf("%d records, stats %+v; want %d, 1 too long, read to the end", got, st, n+2)
	}
}

// repeatString reads s again and again.
type repeatString struct {
	s   string
	off int
}

func (r *repeatString) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

// TestJSONShapesSaid: JSON that is no export says where and what, on one
// line, once.
func TestJSONShapesSaid(t *testing.T) {
	for _, tt := range []struct{ log, want string }{
		{`{"tables": [7]}`, "line 1: not a JSON access log: a value where a table (an object) was expected"},
		{`{"tables": [{"name": "t", "rows": [["a"]], "columns": []}]}`, "rows come before its columns"},
		{"[\n" + v2Sample + "\n]\n]", fmt.Sprintf(`line %d: not a JSON access log: "]" where a record`, strings.Count(v2Sample, "\n")+4)},
	} {
		_, err := readErr(tt.log)
		if err == nil || errors.Is(err, io.EOF) {
			r, _ := readErr(tt.log)
			err = r.Stats().Err
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%.40q: %v; want one line saying %q", tt.log, err, tt.want)
		}
	}
}

// TestJSONNotAzure: JSON that holds no Azure record (another program's
// JSON lines, a wrapper of something else) is refused on one line that
// names where its records start, not joined as a log that matched
// nothing; a log of Azure's other categories only is read.
func TestJSONNotAzure(t *testing.T) {
	other := strings.Repeat(`{"level":"info","msg":"GET /","ts":1764607221.5}`+"\n", 150)
	for _, tt := range []struct{ log, want string }{
		{"{\"foo\": 1}\n{\"bar\": 2}\n", "none of its first 2 JSON records, from line 1, is an Azure Application Gateway record"},
		{`{"tables": 5}`, "none of its first 1 JSON records, from line 1"},
		{other + strings.Join(strings.Fields(v2Sample), " ") + "\n", "none of its first 100 JSON records, from line 1"},
	} {
		_, err := readErr(tt.log)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%.30q: %v; want ErrFormat on one line saying %q", tt.log, err, tt.want)
		}
	}
	firewall := `{"records": [{"time": "2026-12-01T16:40:22Z", "category": "ApplicationGatewayFirewallLog", "properties": {"instanceId": "appgw_2"}}]}`
	r, err := readErr(firewall)
	if !errors.Is(err, io.EOF) || r.Stats().Other != 1 {
		t.Errorf("a log of firewall records only: %v, stats %+v; want it read, 1 other", err, r.Stats())
	}
}
