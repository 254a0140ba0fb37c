package join

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/pinprobe/pinprobe/internal/accesslog"
)

// Azure Application Gateway's access log as every export path its
// documentation gives writes it, joined with the simulated incident. The
// records are Microsoft's published samples field for field
// (application-gateway-diagnostics.md: the v2 and v1 records of a
// diagnostic setting; the AGWAccessLogs and AzureDiagnostics columns of
// Log Analytics), holding the run's requests.

// agwV2 is a v2 SKU's access record as a diagnostic setting writes it to
// Event Hub or a storage account.
type agwV2 struct {
	TimeStamp          string       `json:"timeStamp"`
	ResourceID         string       `json:"resourceId"`
	ListenerName       string       `json:"listenerName"`
	RuleName           string       `json:"ruleName"`
	BackendPoolName    string       `json:"backendPoolName"`
	BackendSettingName string       `json:"backendSettingName"`
	OperationName      string       `json:"operationName"`
	Category           string       `json:"category"`
	Properties         agwV2Details `json:"properties"`
}

type agwV2Details struct {
	InstanceID                      string  `json:"instanceId"`
	ClientIP                        string  `json:"clientIP"`
	ClientPort                      int     `json:"clientPort"`
	HTTPMethod                      string  `json:"httpMethod"`
	OriginalRequestURIWithArgs      string  `json:"originalRequestUriWithArgs"`
	RequestURI                      string  `json:"requestUri"`
	RequestQuery                    string  `json:"requestQuery"`
	UserAgent                       string  `json:"userAgent"`
	HTTPStatus                      int     `json:"httpStatus"`
	HTTPVersion                     string  `json:"httpVersion"`
	ReceivedBytes                   int     `json:"receivedBytes"`
	SentBytes                       int     `json:"sentBytes"`
	ClientResponseTime              float64 `json:"clientResponseTime"`
	TimeTaken                       float64 `json:"timeTaken"`
	WAFEvaluationTime               string  `json:"WAFEvaluationTime"`
	WAFMode                         string  `json:"WAFMode"`
	TransactionID                   string  `json:"transactionId"`
	SSLEnabled                      string  `json:"sslEnabled"`
	SSLCipher                       string  `json:"sslCipher"`
	SSLProtocol                     string  `json:"sslProtocol"`
	SSLClientVerify                 string  `json:"sslClientVerify"`
	SSLClientCertificateFingerprint string  `json:"sslClientCertificateFingerprint"`
	SSLClientCertificateIssuerName  string  `json:"sslClientCertificateIssuerName"`
	ServerRouted                    string  `json:"serverRouted"`
	ServerStatus                    string  `json:"serverStatus"`
	ServerResponseLatency           string  `json:"serverResponseLatency"`
	UpstreamSourcePort              string  `json:"upstreamSourcePort"`
	OriginalHost                    string  `json:"originalHost"`
	Host                            string  `json:"host"`
	ErrorInfo                       string  `json:"error_info"`
	ContentType                     string  `json:"contentType"`
}

// agwV1 is a v1 SKU's access record: the backend only in requestQuery.
type agwV1 struct {
	ResourceID    string `json:"resourceId"`
	OperationName string `json:"operationName"`
	Time          string `json:"time"`
	Category      string `json:"category"`
	Properties    struct {
		InstanceID    string `json:"instanceId"`
		ClientIP      string `json:"clientIP"`
		ClientPort    int    `json:"clientPort"`
		HTTPMethod    string `json:"httpMethod"`
		RequestURI    string `json:"requestUri"`
		RequestQuery  string `json:"requestQuery"`
		UserAgent     string `json:"userAgent"`
		HTTPStatus    int    `json:"httpStatus"`
		HTTPVersion   string `json:"httpVersion"`
		ReceivedBytes int    `json:"receivedBytes"`
		SentBytes     int    `json:"sentBytes"`
		TimeTaken     int    `json:"timeTaken"`
		SSLEnabled    string `json:"sslEnabled"`
		Host          string `json:"host"`
		OriginalHost  string `json:"originalHost"`
	} `json:"properties"`
}

const azureOffset = 2 * time.Second // the gateway's clock ahead of pinprobe's

const agwResource = "/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000000/RESOURCEGROUPS/SIGN-RG/PROVIDERS/MICROSOFT.NETWORK/APPLICATIONGATEWAYS/SIGN-AGW"

// azureEnd is when the gateway logged r: its end, on the gateway's clock.
func azureEnd(r simRequest) time.Time { return r.at.Add(azureOffset + latency) }

func errorInfo(r simRequest) string {
	if r.failed {
		return "ERRORINFO_UPSTREAM_CLOSED_CONNECTION"
	}
	return "ERRORINFO_NO_ERROR"
}

func v2Record(r simRequest) agwV2 {
	st := fmt.Sprint(r.status())
	return agwV2{TimeStamp: azureEnd(r).Format("2006-01-02T15:04:05.000+00:00"), ResourceID: agwResource,
		ListenerName: []string{"fl-v4", "fl-v6"}[r.ep], RuleName: "sign-rule", BackendPoolName: "sign-pool", BackendSettingName: "sign-https",
		OperationName: "ApplicationGatewayAccess", Category: "ApplicationGatewayAccessLog",
		Properties: agwV2Details{InstanceID: r.instance, ClientIP: r.client(), ClientPort: int(r.port), HTTPMethod: "GET",
			OriginalRequestURIWithArgs: "/sign", RequestURI: "/sign", UserAgent: "pinprobe/0.1.0", HTTPStatus: r.status(), HTTPVersion: "HTTP/1.1",
			ReceivedBytes: 184, SentBytes: 466, TimeTaken: latency.Seconds(), WAFEvaluationTime: "0.000", WAFMode: "Detection",
			TransactionID: fmt.Sprintf("%032x", r.seq*2+r.ep), SSLEnabled: "on", SSLCipher: "ECDHE-RSA-AES256-GCM-SHA384", SSLProtocol: "TLSv1.2",
			SSLClientVerify: "NONE", ServerRouted: r.backend, ServerStatus: st, ServerResponseLatency: "0.018", UpstreamSourcePort: "21564",
			OriginalHost: "sign.example.com", Host: "sign.example.com", ErrorInfo: errorInfo(r), ContentType: "application/json"}}
}

func v1Record(r simRequest) agwV1 {
	var a agwV1
	a.ResourceID, a.OperationName, a.Category = agwResource, "ApplicationGatewayAccess", "ApplicationGatewayAccessLog"
	a.Time = azureEnd(r).Format("2006-01-02T15:04:05.000Z")
	p := &a.Properties
	p.InstanceID, p.ClientIP, p.ClientPort, p.HTTPMethod, p.RequestURI = "ApplicationGatewayRole_IN_"+r.instance[len(r.instance)-1:], r.client(), int(r.port), "GET", "/sign"
	backend := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(r.backend, ":443"), "["), "]")
	p.RequestQuery = fmt.Sprintf("X-AzureApplicationGateway-CACHE-HIT=0&SERVER-ROUTED=%s&X-AzureApplicationGateway-LOG-ID=874f1f0f-6807-41c9-b7bc-%012x&SERVER-STATUS=%d", backend, r.seq, r.status())
	p.UserAgent, p.HTTPStatus, p.HTTPVersion, p.ReceivedBytes, p.SentBytes = "-", r.status(), "HTTP/1.1", 65, 553
	p.TimeTaken, p.SSLEnabled, p.Host, p.OriginalHost = int(latency/time.Millisecond), "off", "sign.example.com", "sign.example.com"
	return a
}

// agwColumns are AGWAccessLogs' columns (its reference page's), as Log
// Analytics returns them, with each request's values.
var agwColumns = []string{"TenantId", "TimeGenerated", "OperationName", "InstanceId", "ClientIp", "ClientPort", "HttpMethod", "RequestUri",
	"OriginalRequestUriWithArgs", "UserAgent", "HttpStatus", "HttpVersion", "ReceivedBytes", "SentBytes", "ClientResponseTime", "TimeTaken",
	"WAFEvaluationTime", "WAFMode", "TransactionId", "SslEnabled", "ServerRouted", "ServerStatus", "ServerResponseLatency", "Host", "OriginalHost",
	"ListenerName", "RuleName", "BackendPoolName", "BackendSettingName", "ErrorInfo", "SourceSystem", "Type", "_ResourceId"}

// azureDiagColumns are the older AzureDiagnostics table's, a property per
// column named with its type.
var azureDiagColumns = []string{"TenantId", "TimeGenerated", "ResourceId", "Category", "ResourceGroup", "SubscriptionId", "ResourceProvider",
	"Resource", "ResourceType", "OperationName", "instanceId_s", "clientIP_s", "clientPort_d", "httpMethod_s", "requestUri_s", "requestQuery_s",
	"userAgent_s", "httpStatus_d", "httpVersion_s", "receivedBytes_d", "sentBytes_d", "timeTaken_d", "sslEnabled_s", "host_s", "listenerName_s",
	"ruleName_s", "backendPoolName_s", "serverRouted_s", "serverStatus_s", "serverResponseLatency_s", "error_info_s", "originalHost_s",
	"transactionId_g", "SourceSystem", "Type", "_ResourceId"}

// laValue is a column's value of r, as Log Analytics holds it: numbers as
// numbers (JSON) or their digits (CSV).
func laValue(col string, r simRequest) any {
	v2 := v2Record(r)
	p := v2.Properties
	switch strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(col, "_s"), "_d"), "_g") {
	case "TenantId":
		return "11111111-2222-3333-4444-555555555555"
	case "TimeGenerated":
		return azureEnd(r).Format("2006-01-02T15:04:05.0000000Z")
	case "OperationName":
		return "ApplicationGatewayAccess"
	case "Category":
		return "ApplicationGatewayAccessLog"
	case "InstanceId", "instanceId":
		return p.InstanceID
	case "ClientIp", "clientIP":
		return p.ClientIP
	case "ClientPort", "clientPort":
		return p.ClientPort
	case "HttpMethod", "httpMethod":
		return "GET"
	case "RequestUri", "OriginalRequestUriWithArgs", "requestUri":
		return "/sign"
	case "requestQuery":
		return ""
	case "UserAgent", "userAgent":
		return p.UserAgent
	case "HttpStatus", "httpStatus":
		return p.HTTPStatus
	case "HttpVersion", "httpVersion":
		return p.HTTPVersion
	case "ReceivedBytes", "receivedBytes":
		return p.ReceivedBytes
	case "SentBytes", "sentBytes":
		return p.SentBytes
	case "ClientResponseTime":
		return 0
	case "TimeTaken", "timeTaken":
		return p.TimeTaken
	case "WAFEvaluationTime":
		return 0
	case "WAFMode":
		return p.WAFMode
	case "TransactionId", "transactionId":
		return p.TransactionID
	case "SslEnabled", "sslEnabled":
		return true
	case "ServerRouted", "serverRouted":
		return p.ServerRouted
	case "ServerStatus", "serverStatus":
		return p.ServerStatus
	case "ServerResponseLatency", "serverResponseLatency":
		return 0.018
	case "Host", "host", "OriginalHost", "originalHost":
		return "sign.example.com"
	case "ListenerName", "listenerName":
		return v2.ListenerName
	case "RuleName", "ruleName":
		return v2.RuleName
	case "BackendPoolName", "backendPoolName":
		return v2.BackendPoolName
	case "BackendSettingName":
		return v2.BackendSettingName
	case "ErrorInfo", "error_info":
		return p.ErrorInfo
	case "AdditionalFields":
		// AzureDiagnostics past 500 columns: the rest as JSON text.
		return fmt.Sprintf(`{"serverRouted_s":%q,"serverStatus_s":"%d"}`, r.backend, r.status())
	case "SourceSystem":
		return "Azure"
	case "Type":
		return "AGWAccessLogs" // laRows says AzureDiagnostics for its columns
	case "_ResourceId", "ResourceId":
		return strings.ToLower(agwResource)
	case "ResourceGroup":
		return "SIGN-RG"
	case "SubscriptionId":
		return "00000000-0000-0000-0000-000000000000"
	case "ResourceProvider":
		return "MICROSOFT.NETWORK"
	case "Resource":
		return "SIGN-AGW"
	case "ResourceType":
		return "APPLICATIONGATEWAYS"
	}
	return ""
}

// laRows are the run's requests as rows of cols.
func laRows(cols []string, reqs []simRequest) [][]any {
	diag := slices.Contains(cols, "clientIP_s")
	var rows [][]any
	for _, r := range reqs {
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = laValue(c, r)
			if c == "Type" && diag {
				row[i] = "AzureDiagnostics"
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// apiTables is the Log Analytics API's answer ({"tables": …}), as az rest
// prints it (indented) or compact.
func apiTables(t *testing.T, cols []string, reqs []simRequest, indent bool) string {
	type column struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	var cs []column
	for _, c := range cols {
		cs = append(cs, column{c, "string"})
	}
	doc := map[string]any{"tables": []any{map[string]any{"name": "PrimaryResult", "columns": cs, "rows": laRows(cols, reqs)}}}
	return marshal(t, doc, indent)
}

// azQuery is `az monitor log-analytics query -o json`: an array of
// objects, every value a string, and the table's name.
func azQuery(t *testing.T, cols []string, reqs []simRequest) string {
	var out []map[string]string
	for _, row := range laRows(cols, reqs) {
		m := map[string]string{"TableName": "PrimaryResult"}
		for i, c := range cols {
			m[c] = fmt.Sprint(row[i])
		}
		out = append(out, m)
	}
	return marshal(t, out, true)
}

// portalCSV is the portal's "Export to CSV": a byte-order mark, a header
// with " [UTC]" on times, the portal's own time format.
func portalCSV(cols []string, reqs []simRequest) string {
	var b strings.Builder
	b.WriteString("\ufeff")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(",")
		}
		if c == "TimeGenerated" {
			c += " [UTC]"
		}
		b.WriteString(c)
	}
	b.WriteString("\r\n")
	for _, r := range reqs {
		for i, c := range cols {
			if i > 0 {
				b.WriteString(",")
			}
			v := fmt.Sprint(laValue(c, r))
			if c == "TimeGenerated" {
				v = `"` + azureEnd(r).Format("1/2/2006, 3:04:05.000 PM") + `"`
			}
			if strings.ContainsAny(v, `,"`) && !strings.HasPrefix(v, `"`) {
				v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			b.WriteString(v)
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

func marshal(t *testing.T, v any, indent bool) string {
	t.Helper()
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "    ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// utf16LE is s as PowerShell 5's > writes it: UTF-16, little-endian, with
// a byte-order mark.
func utf16LE(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	b := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

func utf16BE(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	b := []byte{0xfe, 0xff}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return string(b)
}

const bom = "\ufeff"

// TestAzureBOMArray: `az monitor log-analytics query -o json` saved by
// PowerShell's Out-File -Encoding utf8, with its byte-order mark, read
// as one line too long and joined as NOTHING JOINED, exit 0: a silent
// wrong answer. It is the incident, traced.
func TestAzureBOMArray(t *testing.T) {
	reqs := simRun()
	j := joinLog(t, simReport(reqs), bom+azQuery(t, agwColumns, reqs), Options{}, accesslog.Options{})
	checkIncident(t, j, reqs, noGap)
	if l := j.Logs[0]; l.TooLong != 0 || l.Format != "Azure AGWAccessLogs (JSON)" {
		t.Errorf("log %+v; want AGWAccessLogs (JSON), nothing too long", l)
	}
}

// TestAzureExportPaths: every export path of Azure's documentation, with
// and without a byte-order mark, UTF-8 or UTF-16, joined with the run:
// the failures traced to the IPv6 backend, every request placed.
func TestAzureExportPaths(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	var v2 []agwV2
	for _, r := range reqs {
		v2 = append(v2, v2Record(r))
	}
	half := len(v2) / 2
	var additional []string
	for _, c := range azureDiagColumns {
		if c != "serverRouted_s" && c != "serverStatus_s" {
			additional = append(additional, c)
		}
	}
	additional = append(additional, "AdditionalFields")
	var lines []string
	for _, r := range v2 {
		lines = append(lines, marshal(t, r, false))
	}
	for _, tt := range []struct {
		name, log, format string
	}{
		{"Event Hub records, indented", marshal(t, map[string]any{"records": v2}, true), "Azure diagnostic records (JSON)"},
		{"Event Hub records, compact", marshal(t, map[string]any{"records": v2}, false), "Azure diagnostic records (JSON)"},
		{"two Event Hub payloads, one per line", marshal(t, map[string]any{"records": v2[:half]}, false) + "\n" +
			marshal(t, map[string]any{"records": v2[half:]}, false) + "\n", "Azure diagnostic records (JSON)"},
		{"two indented payloads", marshal(t, map[string]any{"records": v2[:half]}, true) + "\n" +
			marshal(t, map[string]any{"records": v2[half:]}, true), "Azure diagnostic records (JSON)"},
		{"storage blob, a record per line", strings.Join(lines, "\n") + "\n", "Azure diagnostic records (JSON)"},
		{"storage blob with BOM", bom + strings.Join(lines, "\r\n") + "\r\n", "Azure diagnostic records (JSON)"},
		{"Log Analytics API, compact", apiTables(t, agwColumns, reqs, false), "Azure AGWAccessLogs (JSON)"},
		{"Log Analytics API, indented", apiTables(t, agwColumns, reqs, true), "Azure AGWAccessLogs (JSON)"},
		{"Log Analytics API, AzureDiagnostics, indented", apiTables(t, azureDiagColumns, reqs, true), "Azure AzureDiagnostics (JSON)"},
		{"az query -o json", azQuery(t, agwColumns, reqs), "Azure AGWAccessLogs (JSON)"},
		{"az query -o json, AzureDiagnostics", azQuery(t, azureDiagColumns, reqs), "Azure AzureDiagnostics (JSON)"},
		{"az query -o json, UTF-16LE", utf16LE(azQuery(t, agwColumns, reqs)), "Azure AGWAccessLogs (JSON)"},
		{"az query -o json, UTF-16BE", utf16BE(azQuery(t, agwColumns, reqs)), "Azure AGWAccessLogs (JSON)"},
		{"Event Hub records, UTF-16LE", utf16LE(marshal(t, map[string]any{"records": v2}, true)), "Azure diagnostic records (JSON)"},
		{"portal CSV", portalCSV(agwColumns, reqs), "Azure AGWAccessLogs (CSV)"},
		{"portal CSV, UTF-16LE", utf16LE(portalCSV(agwColumns, reqs)), "Azure AGWAccessLogs (CSV)"},
		{"portal CSV, AzureDiagnostics", portalCSV(azureDiagColumns, reqs), "Azure AzureDiagnostics (CSV)"},
		{"AzureDiagnostics, backend in AdditionalFields, API", apiTables(t, additional, reqs, true), "Azure AzureDiagnostics (JSON)"},
		{"AzureDiagnostics, backend in AdditionalFields, CSV", portalCSV(additional, reqs), "Azure AzureDiagnostics (CSV)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := joinLog(t, rep, tt.log, Options{}, accesslog.Options{})
			checkIncident(t, j, reqs, noGap)
			l := j.Logs[0]
			if l.Format != tt.format || l.TooLong != 0 || l.Skipped != 0 || l.Error != "" {
				t.Errorf("log %+v; want %s read whole, nothing skipped, no error", l, tt.format)
			}
			if !j.Offset.Measured || j.Offset.By != "client port" || j.Offset.MS < 1500 || j.Offset.MS > 2500 {
				t.Errorf("offset %+v; want about 2000 ms by client port", j.Offset)
			}
			want := []string{"time", "client port", "backend", "backend status", "instance", "listener", "duration", "error reason"}
			if !slices.Equal(l.Logs, want) {
				t.Errorf("logs %v; want %v", l.Logs, want)
			}
		})
	}
}

// TestAzureV1: a v1 SKU's records name the backend only inside
// requestQuery (SERVER-ROUTED=10.4.0.4, no port) and time it in
// milliseconds: the failures are traced to it all the same.
func TestAzureV1(t *testing.T) {
	reqs := simRun()
	var v1 []agwV1
	for _, r := range reqs {
		v1 = append(v1, v1Record(r))
	}
	j := joinLog(t, simReport(reqs), marshal(t, map[string]any{"records": v1}, true), Options{}, accesslog.Options{})
	if j.Status != StatusTraced || j.Lines.Run != int64(len(reqs)) || len(j.Backends) != 3 {
		t.Fatalf("status %q, %d lines of the run, backends %+v; want traced, %d lines, 3 backends", j.Status, j.Lines.Run, j.Backends, len(reqs))
	}
	if b := j.Backends[0]; b.Name != "2001:db8::9" || b.Family != "ipv6" || b.Failed != 50 || b.Requests != 50 || b.BackendStatus["502"] != 50 {
		t.Errorf("first backend %+v; want 2001:db8::9 (IPv6), all 50 of its requests failed, its status 502", b)
	}
	if want := "All 50 502s were routed to 2001:db8::9 (IPv6)"; !strings.HasPrefix(j.Conclusion, want) {
		t.Errorf("conclusion %q; want %q…", j.Conclusion, want)
	}
	if j.Lines.NoKnownEndpoint != 0 {
		t.Errorf("%d lines to no known endpoint: the gateway's own query parameters taken for the client's path", j.Lines.NoKnownEndpoint)
	}
	// The records' ends less 20 ms, not 20 s: v1 times in milliseconds.
	if !j.Offset.Measured || j.Offset.MS < 1500 || j.Offset.MS > 2500 {
		t.Errorf("offset %+v; want about 2000 ms", j.Offset)
	}
}

// TestAzureNoBackendColumn: a query that projected ServerRouted away, and
// a v1 record without SERVER-ROUTED, name no backend: UNTRACED, the log
// listed as logging only what its data holds and its format naming the
// columns it lacks, never "routed to no backend: the gateway answered
// itself".
func TestAzureNoBackendColumn(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	var cols []string
	for _, c := range agwColumns {
		if c != "ServerRouted" && c != "ServerStatus" && c != "ListenerName" {
			cols = append(cols, c)
		}
	}
	var v1 []agwV1
	for _, r := range reqs {
		rec := v1Record(r)
		rec.Properties.RequestQuery = ""
		v1 = append(v1, rec)
	}
	for _, tt := range []struct{ name, log, format string }{
		{"KQL projection, API", apiTables(t, cols, reqs, true), "Azure AGWAccessLogs (JSON; without ServerRouted, ServerStatus, ListenerName)"},
		{"KQL projection, CSV", portalCSV(cols, reqs), "Azure AGWAccessLogs (CSV; without ServerRouted, ServerStatus, ListenerName)"},
		{"KQL projection, az -o json", azQuery(t, cols, reqs), "Azure AGWAccessLogs (JSON; without ServerRouted, ServerStatus, ListenerName)"},
		{"v1 without SERVER-ROUTED", marshal(t, map[string]any{"records": v1}, false), "Azure diagnostic records (JSON; without serverRouted, serverStatus, listenerName, error_info)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := joinLog(t, rep, tt.log, Options{}, accesslog.Options{})
			if j.Status != StatusUntraced || len(j.Backends) != 0 || strings.Contains(j.Conclusion, "no backend: the gateway answered itself") {
				t.Errorf("status %q, backends %+v, conclusion %q; want untraced, none", j.Status, j.Backends, j.Conclusion)
			}
			if j.Logs[0].Format != tt.format {
				t.Errorf("format %q; want %q: what the log lacks said", j.Logs[0].Format, tt.format)
			}
			if !strings.Contains(j.Conclusion, "ServerRouted") {
				t.Errorf("conclusion %q; want it to say what to export (ServerRouted)", j.Conclusion)
			}
			for _, f := range j.Logs[0].Logs {
				if f == "backend" || f == "backend status" || f == "listener" {
					t.Errorf("the log said to log %v; its data holds no %s", j.Logs[0].Logs, f)
				}
			}
			if j.Lines.Run != int64(len(reqs)) || j.Lines.Failed != 50 {
				t.Errorf("%d lines of the run, %d failed; want %d, 50", j.Lines.Run, j.Lines.Failed, len(reqs))
			}
		})
	}
}

// TestAzureMixedLogs: the run's first half from an export that names the
// backend, its second from a query that projected ServerRouted away. The
// second's failures are in no backend's count — never "routed to no
// backend" — and the finding says they were left out.
func TestAzureMixedLogs(t *testing.T) {
	reqs := simRun()
	rep := simReport(reqs)
	half := func(i int) bool { return reqs[i].at.Before(runStart.Add(runSeconds * time.Second / 2)) }
	var first, second []simRequest
	for i, r := range reqs {
		if half(i) {
			first = append(first, r)
		} else {
			second = append(second, r)
		}
	}
	failedFirst, failedSecond := failures(reqs, half), failures(reqs, func(i int) bool { return !half(i) })
	var cols []string
	for _, c := range agwColumns {
		if c != "ServerRouted" && c != "ServerStatus" {
			cols = append(cols, c)
		}
	}
	j := New(rep, Options{})
	for i, log := range []string{apiTables(t, agwColumns, first, true), apiTables(t, cols, second, true)} {
		r, err := accesslog.Open(strings.NewReader(log), accesslog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Add(fmt.Sprintf("part%d.json", i+1), r); err != nil {
			t.Fatal(err)
		}
	}
	out := j.Finish()
	t.Logf("%s | lines %+v", out.Conclusion, out.Lines)
	if out.Status != StatusTraced || out.Lines.Run != int64(len(reqs)) || out.Lines.Failed != failedFirst+failedSecond {
		t.Fatalf("status %q, lines %+v; want traced, every request, %d failed", out.Status, out.Lines, failedFirst+failedSecond)
	}
	for _, b := range out.Backends {
		if b.Name == "(none)" {
			t.Errorf("backend %+v: the lines of the log without ServerRouted counted as routed nowhere", b)
		}
		if b.Name == deadBackend && b.Failed != failedFirst {
			t.Errorf("%s failed %d; want the %d of the log that names it", deadBackend, b.Failed, failedFirst)
		}
	}
	want := fmt.Sprintf("All %d 502s were routed to %s (IPv6), by instances appgw_0 and appgw_2; %d more failed in logs that name no backend; "+
		"the gateway says: the backend closed the connection before it answered (ERRORINFO_UPSTREAM_CLOSED_CONNECTION).", failedFirst, deadBackend, failedSecond)
	if out.Conclusion != want {
		t.Errorf("conclusion %q; want %q", out.Conclusion, want)
	}
	for _, e := range out.Endpoints {
		if e.Backends["(none)"] != 0 {
			t.Errorf("endpoint %s backends %v: lines of the log without ServerRouted counted as routed nowhere", e.Address, e.Backends)
		}
	}
}
