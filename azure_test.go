package main

// pinprobe logs on Azure Application Gateway's access log, as every
// export path of its documentation writes it: a real run through a real
// gateway on loopback (nginx, its IPv6 listener routed to a dead upstream)
// that writes each request as Azure does, field for field with Microsoft's
// published v2 record and the AGWAccessLogs columns, exported as Event
// Hub, storage, Log Analytics and the az CLI would.

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/pinprobe/pinprobe/internal/join"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// agwRecordFormat is nginx writing Microsoft's published v2 access record
// (application-gateway-diagnostics.md) with the request's own values.
const agwRecordFormat = `{"timeStamp":"$time_iso8601","resourceId":"/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000000/RESOURCEGROUPS/SIGN-RG/PROVIDERS/MICROSOFT.NETWORK/APPLICATIONGATEWAYS/SIGN-AGW",` +
	`"listenerName":"$agw_listener","ruleName":"sign-rule","backendPoolName":"sign-pool","backendSettingName":"sign-http",` +
	`"operationName":"ApplicationGatewayAccess","category":"ApplicationGatewayAccessLog","properties":{"instanceId":"$agw_instance",` +
	`"clientIP":"$remote_addr","clientPort":$remote_port,"httpMethod":"$request_method","originalRequestUriWithArgs":"$request_uri",` +
	`"requestUri":"$uri","requestQuery":"$args","userAgent":"$http_user_agent","httpStatus":$status,"httpVersion":"$server_protocol",` +
	`"receivedBytes":$request_length,"sentBytes":$bytes_sent,"clientResponseTime":0,"timeTaken":$request_time,"WAFEvaluationTime":"0.000",` +
	`"WAFMode":"Detection","transactionId":"$request_id","sslEnabled":"off","sslCipher":"","sslProtocol":"","sslClientVerify":"NONE",` +
	`"sslClientCertificateFingerprint":"","sslClientCertificateIssuerName":"","serverRouted":"$upstream_addr","serverStatus":"$upstream_status",` +
	`"serverResponseLatency":"$upstream_response_time","upstreamSourcePort":"","originalHost":"$http_host","host":"$host",` +
	`"error_info":"ERRORINFO_NO_ERROR","contentType":"$sent_http_content_type"}}`

// agwRow is what the gateway logged of one request, as Log Analytics'
// AGWAccessLogs holds it: TimeGenerated to the 100 ns (here nginx's ms).
type agwRow struct {
	rec  map[string]any // the v2 record
	prop map[string]any // its properties
	at   time.Time      // TimeGenerated
}

// agwLAColumns are AGWAccessLogs' columns, its reference page's names.
var agwLAColumns = []string{"TenantId", "TimeGenerated", "OperationName", "InstanceId", "ClientIp", "ClientPort", "HttpMethod", "RequestUri",
	"OriginalRequestUriWithArgs", "UserAgent", "HttpStatus", "HttpVersion", "ReceivedBytes", "SentBytes", "TimeTaken", "TransactionId",
	"ServerRouted", "ServerStatus", "ServerResponseLatency", "Host", "OriginalHost", "ListenerName", "RuleName", "BackendPoolName",
	"BackendSettingName", "ErrorInfo", "SourceSystem", "Type", "_ResourceId"}

// value is the row's value of an AGWAccessLogs column, as a string.
func (r agwRow) value(col string) string {
	p := func(k string) string { return fmt.Sprint(r.prop[k]) }
	switch col {
	case "TenantId":
		return "11111111-2222-3333-4444-555555555555"
	case "TimeGenerated":
		return r.at.UTC().Format("2006-01-02T15:04:05.0000000Z")
	case "OperationName":
		return "ApplicationGatewayAccess"
	case "InstanceId":
		return p("instanceId")
	case "ClientIp":
		return p("clientIP")
	case "ClientPort":
		return p("clientPort")
	case "HttpMethod":
		return p("httpMethod")
	case "RequestUri":
		return p("requestUri")
	case "OriginalRequestUriWithArgs":
		return p("originalRequestUriWithArgs")
	case "UserAgent":
		return p("userAgent")
	case "HttpStatus":
		return p("httpStatus")
	case "HttpVersion":
		return p("httpVersion")
	case "ReceivedBytes":
		return p("receivedBytes")
	case "SentBytes":
		return p("sentBytes")
	case "TimeTaken":
		return p("timeTaken")
	case "TransactionId":
		return p("transactionId")
	case "ServerRouted":
		return p("serverRouted")
	case "ServerStatus":
		return p("serverStatus")
	case "ServerResponseLatency":
		return p("serverResponseLatency")
	case "Host":
		return p("host")
	case "OriginalHost":
		return p("originalHost")
	case "ListenerName", "RuleName", "BackendPoolName", "BackendSettingName":
		return fmt.Sprint(r.rec[strings.ToLower(col[:1])+col[1:]])
	case "ErrorInfo":
		return p("error_info")
	case "SourceSystem":
		return "Azure"
	case "Type":
		return "AGWAccessLogs"
	case "_ResourceId":
		return strings.ToLower(fmt.Sprint(r.rec["resourceId"]))
	}
	return ""
}

// azureGateway runs the gateway and the run through it, and returns the
// report's path, the run, the gateway's records and its rows as Log
// Analytics holds them, the dead upstream and the healthy one.
func azureGateway(t *testing.T) (reportPath string, rep *report.Report, records []string, rows []agwRow, dead, ok string) {
	t.Helper()
	upstream, deadAt := splitUpstreams(t)
	testserver.NginxBinary(t)
	port := testserver.FreePort(t, testserver.Lo4a, testserver.Lo6)
	listen := []netip.AddrPort{netip.AddrPortFrom(testserver.Lo4a, port), netip.AddrPortFrom(testserver.Lo6, port)}
	dir := t.TempDir()
	agwLog, msecLog := filepath.Join(dir, "agw.log"), filepath.Join(dir, "msec.log")
	server := func(at netip.AddrPort, to netip.AddrPort, instance, listener string) string {
		return fmt.Sprintf("  server { listen %s; set $agw_instance %s; set $agw_listener %s; access_log %s agw; access_log %s msec;\n"+
			"    location / { proxy_pass http://%s; } }\n", at, instance, listener, agwLog, msecLog, to)
	}
	testserver.Nginx(t, "  log_format agw escape=json '"+agwRecordFormat+"';\n"+
		"  log_format msec '$request_id $msec';\n"+
		server(listen[0], upstream, "appgw_0", "listener-v4")+server(listen[1], deadAt, "appgw_1", "listener-v6"), listen...)
	reportPath, r := probeSaved(t, fmt.Sprintf("gw.test:%d", port), 80)

	data, err := os.ReadFile(agwLog)
	if err != nil {
		t.Fatal(err)
	}
	records = strings.Split(strings.TrimSpace(string(data)), "\n")
	// TimeGenerated to the millisecond, by the request's transactionId
	// (nginx's $time_iso8601 is to the second, as the published record's;
	// a client port is many requests' on a kept-alive connection).
	msec := map[string]time.Time{}
	mf, err := os.Open(msecLog)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	sc := bufio.NewScanner(mf)
	for sc.Scan() {
		id, at, _ := strings.Cut(sc.Text(), " ")
		sec, frac, _ := strings.Cut(at, ".")
		s, _ := strconv.ParseInt(sec, 10, 64)
		ms, _ := strconv.ParseInt(frac, 10, 64)
		msec[id] = time.UnixMilli(s*1000 + ms)
	}
	for _, l := range records {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("nginx wrote %q: %v", l, err)
		}
		prop := rec["properties"].(map[string]any)
		at, ok := msec[fmt.Sprint(prop["transactionId"])]
		if !ok {
			t.Fatalf("no time logged for transaction %v", prop["transactionId"])
		}
		rows = append(rows, agwRow{rec: rec, prop: prop, at: at})
	}
	if len(rows) != int(r.Totals.Requests) {
		t.Fatalf("the gateway logged %d requests; the run sent %d", len(rows), r.Totals.Requests)
	}
	return reportPath, r, records, rows, deadAt.String(), upstream.String()
}

// headline is the text join's first paragraph, on one line.
func headline(out string) string {
	return strings.Join(strings.Fields(strings.SplitN(out, "\n\n", 2)[0]), " ")
}

func withBOM(s string) string { return "\ufeff" + s }

// utf16LEBOM is s as PowerShell 5's > writes it.
func utf16LEBOM(s string) string {
	b := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

func mustJSON(t *testing.T, v any, indent bool) string {
	t.Helper()
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLogsAzure: the run through the gateway, its Azure access log
// exported by every path: each traced to the dead upstream; the headerless
// TSV refused on one line; a projection without the backend UNTRACED.
func TestLogsAzure(t *testing.T) {
	t.Parallel()
	reportPath, rep, records, rows, dead, ok := azureGateway(t)
	var recs []json.RawMessage
	for _, l := range records {
		recs = append(recs, json.RawMessage(l))
	}
	half := len(recs) / 2
	laCols := func(cols []string) (head []map[string]string, out [][]string) {
		for _, c := range cols {
			head = append(head, map[string]string{"name": c, "type": "string"})
		}
		for _, r := range rows {
			var row []string
			for _, c := range cols {
				row = append(row, r.value(c))
			}
			out = append(out, row)
		}
		return head, out
	}
	tables := func(cols []string, indent bool) string {
		head, out := laCols(cols)
		return mustJSON(t, map[string]any{"tables": []any{map[string]any{"name": "PrimaryResult", "columns": head, "rows": out}}}, indent)
	}
	azJSON := func(cols []string) string {
		var out []map[string]string
		for _, r := range rows {
			m := map[string]string{"TableName": "PrimaryResult"}
			for _, c := range cols {
				m[c] = r.value(c)
			}
			out = append(out, m)
		}
		return mustJSON(t, out, true)
	}
	portalCSV := func(cols []string) string {
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.UseCRLF = true
		head := append([]string{}, cols...)
		for i, c := range head {
			if c == "TimeGenerated" {
				head[i] = c + " [UTC]"
			}
		}
		w.Write(head)
		for _, r := range rows {
			var row []string
			for _, c := range cols {
				v := r.value(c)
				if c == "TimeGenerated" {
					v = r.at.UTC().Format("1/2/2006, 3:04:05.000 PM")
				}
				row = append(row, v)
			}
			w.Write(row)
		}
		w.Flush()
		return withBOM(b.String())
	}
	var noBackend []string
	for _, c := range agwLAColumns {
		if c != "ServerRouted" && c != "ServerStatus" {
			noBackend = append(noBackend, c)
		}
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name, log, format string
	}{
		{"az query -o json, saved with a BOM", withBOM(azJSON(agwLAColumns)), "Azure AGWAccessLogs (JSON)"},
		{"az query -o json, UTF-16", utf16LEBOM(azJSON(agwLAColumns)), "Azure AGWAccessLogs (JSON)"},
		{"Event Hub payload", mustJSON(t, map[string]any{"records": recs}, true), "Azure diagnostic records (JSON)"},
		{"Event Hub payloads, one per line", mustJSON(t, map[string]any{"records": recs[:half]}, false) + "\n" +
			mustJSON(t, map[string]any{"records": recs[half:]}, false) + "\n", "Azure diagnostic records (JSON)"},
		{"storage blob, a record per line", strings.Join(records, "\n") + "\n", "Azure diagnostic records (JSON)"},
		{"storage blob, UTF-16", utf16LEBOM(strings.Join(records, "\r\n") + "\r\n"), "Azure diagnostic records (JSON)"},
		{"Log Analytics API, compact", tables(agwLAColumns, false), "Azure AGWAccessLogs (JSON)"},
		{"Log Analytics API, indented", tables(agwLAColumns, true), "Azure AGWAccessLogs (JSON)"},
		{"portal CSV", portalCSV(agwLAColumns), "Azure AGWAccessLogs (CSV)"},
		{"portal CSV, UTF-16", utf16LEBOM(strings.TrimPrefix(portalCSV(agwLAColumns), "\ufeff")), "Azure AGWAccessLogs (CSV)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "").Replace(tt.name))
			if err := os.WriteFile(path, []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			j := joinRun(t, reportPath, []string{path})
			l := j.Logs[0]
			if l.Format != tt.format || l.Records != rep.Totals.Requests || l.TooLong != 0 || l.Skipped != 0 || l.Error != "" {
				t.Errorf("log %+v; want %s, %d records, nothing skipped, no error", l, tt.format, rep.Totals.Requests)
			}
			if j.Lines.ByPort != rep.Totals.Requests {
				t.Errorf("%d lines placed by client port; want all %d", j.Lines.ByPort, rep.Totals.Requests)
			}
			checkTraced(t, j, rep, dead, ok)
			code, stdout, _ := pinprobe(t, "logs", reportPath, path)
			if code != 0 || !strings.HasPrefix(stdout, "FAILURES TRACED") {
				t.Errorf("pinprobe logs: exit %d:\n%s", code, stdout)
			}
			t.Logf("pinprobe logs run.json %s: %s", filepath.Base(path), headline(stdout))
		})
	}

	t.Run("az query -o tsv", func(t *testing.T) {
		var b strings.Builder
		for _, r := range rows {
			var vals []string
			for _, c := range agwLAColumns {
				vals = append(vals, r.value(c))
			}
			b.WriteString(strings.Join(vals, "\t") + "\n")
		}
		path := filepath.Join(dir, "agw.tsv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := pinprobe(t, "logs", reportPath, path)
		if code != exitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
			!strings.Contains(stderr, path+": no known access-log format: line 1 is tab-separated values without a header row") || !strings.Contains(stderr, "export with -o json") {
			t.Errorf("exit %d, stderr %q; want 2 and one line naming the file and line, saying to export JSON or CSV", code, stderr)
		}
		t.Logf("pinprobe logs run.json agw.tsv: %s", strings.TrimSpace(stderr))
	})

	t.Run("a projection without ServerRouted", func(t *testing.T) {
		path := filepath.Join(dir, "projected.json")
		if err := os.WriteFile(path, []byte(tables(noBackend, true)), 0o644); err != nil {
			t.Fatal(err)
		}
		j := joinRun(t, reportPath, []string{path})
		if want := "Azure AGWAccessLogs (JSON; without ServerRouted, ServerStatus)"; j.Logs[0].Format != want {
			t.Errorf("format %q; want %q", j.Logs[0].Format, want)
		}
		if j.Status != join.StatusUntraced || len(j.Backends) != 0 || !strings.Contains(j.Conclusion, "export ServerRouted") {
			t.Errorf("status %q, backends %+v, conclusion %q; want untraced, none, the advice to export ServerRouted", j.Status, j.Backends, j.Conclusion)
		}
		for _, f := range j.Logs[0].Logs {
			if f == "backend" || f == "backend status" {
				t.Errorf("logs %v: the data holds no %s", j.Logs[0].Logs, f)
			}
		}
		code, stdout, _ := pinprobe(t, "logs", reportPath, path)
		if code != 0 || !strings.HasPrefix(stdout, "UNTRACED") {
			t.Errorf("pinprobe logs: exit %d:\n%s", code, stdout)
		}
		t.Logf("pinprobe logs run.json projected.json: %s", headline(stdout))
		if i := strings.Index(stdout, " Log "); i < 0 || strings.Contains(stdout[i:i+strings.Index(stdout[i:], "\n Clock")], "backend") {
			t.Errorf("the log's line claims a backend its data lacks:\n%s", stdout)
		}
	})
}
