package join

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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

// agwColumns are AGWAccessLogs' columns (its reference page's), as Log
// Analytics returns them, with each request's values.
var agwColumns = []string{"TenantId", "TimeGenerated", "OperationName", "InstanceId", "ClientIp", "ClientPort", "HttpMethod", "RequestUri",
	"OriginalRequestUriWithArgs", "UserAgent", "HttpStatus", "HttpVersion", "ReceivedBytes", "SentBytes", "ClientResponseTime", "TimeTaken",
	"WAFEvaluationTime", "WAFMode", "TransactionId", "SslEnabled", "ServerRouted", "ServerStatus", "ServerResponseLatency", "Host", "OriginalHost",
	"ListenerName", "RuleName", "BackendPoolName", "BackendSettingName", "ErrorInfo", "SourceSystem", "Type", "_ResourceId"}

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
