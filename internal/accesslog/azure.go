package accesslog

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Azure Application Gateway's access log comes in three shapes, each as CSV (a
// Log Analytics export, with a header row) or JSON: the AGWAccessLogs table
// (ClientIp, ServerRouted, InstanceId, …), the older AzureDiagnostics one
// (clientIP_s, serverRouted_s, … beside Category = ApplicationGatewayAccessLog)
// and the storage account's records ({"time", "properties": {"clientIP", …}}).
// Names match without case, a " [UTC]" suffix (the portal's) or a type suffix.

// azureNames maps a column name, as azureKey normalises it, to what a
// Record reads of it.
var azureNames = map[string]string{
	"timegenerated": "time", "timestamp": "time", "time": "time",
	"clientip": "client", "clientport": "port",
	"httpmethod": "method", "requesturi": "uri", "originalrequesturiwithargs": "uriargs", "requestquery": "query",
	"host": "host", "originalhost": "ohost",
	"httpstatus": "status", "serverrouted": "backend", "serverstatus": "bstatus",
	"instanceid": "instance", "listenername": "listener", "timetaken": "taken",
	"errorinfo": "error", "error_info": "error", "category": "category", "operationname": "operation",
	"transactionid": "transaction",
}

// azureKey normalises a column name: lower case, without a " [UTC]"
// suffix or AzureDiagnostics' type suffix (_s, _d, _g, …).
func azureKey(name string) string {
	k := strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexByte(k, '['); i > 0 {
		k = strings.TrimSpace(k[:i])
	}
	k = strings.TrimPrefix(k, "properties.")
	if _, ok := azureNames[k]; ok {
		return k
	}
	if i := strings.LastIndexByte(k, '_'); i > 0 && len(k)-i <= 2 {
		k = k[:i]
	}
	return k
}

// azureShape says which of the three shapes a record's columns are.
func azureShape(cols map[string]bool) string {
	switch {
	case cols["clientIP_s"] || cols["httpStatus_d"] || cols["serverRouted_s"]:
		return "azure-diagnostics"
	case cols["properties"]:
		return "azure-storage"
	}
	return "azure-agw"
}

// azureRecord holds one record's values by what azureNames reads.
type azureRecord struct {
	v        map[string]string
	storage  bool // a storage account's record (v1's timeTaken is in ms)
	v1       bool
	hasPort  bool
	hasError bool
}

func (a *azureRecord) set(name, value string) {
	k, ok := azureNames[azureKey(name)]
	if !ok {
		return
	}
	if a.v == nil {
		a.v = map[string]string{}
	}
	switch k {
	case "port":
		a.hasPort = true
	case "error":
		a.hasError = true
	}
	if k == "time" && strings.EqualFold(strings.TrimSpace(name), "time") {
		a.v1 = true
	}
	if _, dup := a.v[k]; !dup || a.v[k] == "" {
		a.v[k] = value
	}
}

// record makes a Record of a; false when it is not an access-log record
// (another category) or lacks what every one has: a time and a client.
func (a *azureRecord) record(r *Record) (ok, access bool) {
	v := a.v
	if c := v["category"]; c != "" && !strings.EqualFold(c, "ApplicationGatewayAccessLog") {
		return false, false
	}
	if o := v["operation"]; o != "" && !strings.EqualFold(o, "ApplicationGatewayAccess") {
		return false, false
	}
	t, ok := parseTime(v["time"], layoutFlex)
	if !ok {
		return false, true
	}
	client, ok := parseAddr(v["client"])
	if !ok {
		return false, true
	}
	r.Time, r.Client, r.AtEnd, r.Duration = t, client, true, -1
	r.Resolution = time.Millisecond
	if s := v["time"]; !strings.ContainsAny(s, ".") {
		r.Resolution = time.Second
	}
	if taken := dash(v["taken"]); taken != "" {
		d, ok := seconds(taken)
		if a.storage && a.v1 {
			d, ok = millis(taken)
		}
		if ok {
			r.Duration = d
			r.Time, r.AtEnd = t.Add(-d), false
		}
	}
	if p := dash(v["port"]); p != "" {
		p = strings.TrimSuffix(p, ".0")
		r.ClientPort, _ = parsePort(p)
	}
	r.Method = dash(v["method"])
	r.URI = dash(v["uriargs"])
	if r.URI == "" {
		r.URI = dash(v["uri"])
		if q := dash(v["query"]); q != "" {
			r.URI += "?" + strings.TrimPrefix(q, "?")
		}
	}
	r.Host = dash(v["ohost"])
	if r.Host == "" {
		r.Host = dash(v["host"])
	}
	st := strings.TrimSuffix(dash(v["status"]), ".0")
	r.Status, _ = parseStatus(st)
	if b := dash(v["backend"]); b != "" {
		try := Try{Backend: b, Status: strings.TrimSuffix(dash(v["bstatus"]), ".0")}
		try.Addr, _ = parseAddrPort(b)
		r.Tries = []Try{try}
	}
	r.Instance = dash(v["instance"])
	r.Listener = dash(v["listener"])
	if e := dash(v["error"]); e != "" && !strings.EqualFold(e, "ERRORINFO_NO_ERROR") {
		r.Reason = e
	}
	return true, true
}

// azureLogged says what records with these columns log.
func azureLogged(a *azureRecord) Field {
	f := FieldTime | FieldBackend | FieldBackendStatus | FieldInstance | FieldListener | FieldDuration
	if a.hasPort {
		f |= FieldClientPort
	}
	if a.hasError {
		f |= FieldReason
	}
	return f
}

// jsonScalar is a JSON value as text: a string's contents, a number's or
// a literal's digits; "" for null, objects and arrays.
func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
