package accesslog

import (
	"encoding/json"
	"net/netip"
	"strings"
	"time"
)

// Azure Application Gateway's access log comes in three shapes, as CSV
// (the portal's export) or JSON (the API's {"tables": …}, az's array of
// objects, a diagnostic setting's {"records": …} or records a line): the
// AGWAccessLogs table (ClientIp, ServerRouted, InstanceId, ErrorInfo, …),
// the older AzureDiagnostics one (clientIP_s, serverRouted_s, …, columns
// past its 500th in AdditionalFields) and the diagnostic records
// ({"time", "properties": {"clientIP", …}}; v1 names the backend only in
// requestQuery's SERVER-ROUTED). Names match without case, " [UTC]" or a
// type suffix; a log logs what its records hold, not what the table could.

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
	v       map[string]string
	storage bool // a storage account's record (v1's timeTaken is in ms)
	v1      bool // its time is "time" (v1's), not "timeStamp"
	// v1Query says requestQuery held the backend (v1's SERVER-ROUTED).
	v1Query bool
}

func (a *azureRecord) set(name, value string) {
	k, ok := azureNames[azureKey(name)]
	if !ok {
		if strings.EqualFold(strings.TrimSpace(name), "AdditionalFields") && strings.HasPrefix(strings.TrimSpace(value), "{") {
			// AzureDiagnostics past 500 columns: the rest as JSON text.
			dec := json.NewDecoder(strings.NewReader(value))
			dec.UseNumber()
			var m map[string]any
			if dec.Decode(&m) == nil {
				a.setFields(m)
			}
		}
		return
	}
	if a.v == nil {
		a.v = map[string]string{}
	}
	if k == "time" && strings.EqualFold(strings.TrimSpace(name), "time") {
		a.v1 = true
	}
	if _, dup := a.v[k]; !dup || a.v[k] == "" {
		a.v[k] = value
	}
}

// setValue sets a JSON value: AzureDiagnostics' AdditionalFields as an
// object of its own, a scalar as its text.
func (a *azureRecord) setValue(name string, v any) {
	if obj, ok := v.(map[string]any); ok && strings.EqualFold(name, "AdditionalFields") {
		a.setFields(obj)
		return
	}
	a.set(name, jsonScalar(v))
}

// setFields sets the scalar values of an object's keys: a record's
// properties, or AzureDiagnostics' AdditionalFields.
func (a *azureRecord) setFields(m map[string]any) {
	for k, v := range m {
		a.set(k, jsonScalar(v))
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
	// A v1 SKU logs the backend inside requestQuery, after the client's
	// own query: SERVER-ROUTED=10.4.0.4&…&SERVER-STATUS=404.
	if q, b, bs, ok := splitV1Query(v["query"]); ok {
		v["query"] = q
		if dash(v["backend"]) == "" {
			v["backend"], v["bstatus"] = b, bs
		}
		a.v1Query = true
	}
	r.Client, r.Duration = client, -1
	r.Resolution = time.Millisecond
	if s := v["time"]; !strings.ContainsAny(s, ".") {
		r.Resolution = time.Second
	}
	if taken := dash(v["taken"]); taken != "" {
		d, ok := seconds(taken)
		if a.storage && a.v1 || a.v1Query {
			// v1 writes timeTaken in milliseconds.
			d, ok = whole(taken, time.Millisecond)
		}
		if ok {
			r.Duration = d
		}
	}
	r.ended(t)
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
		try.Addr = backendAddr(b)
		r.Tries = []Try{try}
	}
	r.Instance = dash(v["instance"])
	r.Listener = dash(v["listener"])
	if e := dash(v["error"]); e != "" && !strings.EqualFold(e, "ERRORINFO_NO_ERROR") {
		r.Reason = e
	}
	return true, true
}

// logged says what the record holds of what a join reads: the fields
// with a value, not the columns the table could have. A query that
// projected ServerRouted away, or a v1 record without SERVER-ROUTED,
// logs no backend; the join then says the log names none, never that
// the gateway routed the requests nowhere.
func (a *azureRecord) logged() Field {
	f := FieldTime
	for _, c := range azureFields {
		if dash(a.v[c.key]) != "" {
			f |= c.f
		}
	}
	return f
}

// azureFields are the values of azureNames a join reads beside the time
// and the client, each with its column's name in the three shapes.
var azureFields = []struct {
	key            string
	f              Field
	agw, diag, rec string
}{
	{"port", FieldClientPort, "ClientPort", "clientPort_d", "clientPort"},
	{"backend", FieldBackend, "ServerRouted", "serverRouted_s", "serverRouted"},
	{"bstatus", FieldBackendStatus, "ServerStatus", "serverStatus_s", "serverStatus"},
	{"instance", FieldInstance, "InstanceId", "instanceId_s", "instanceId"},
	{"listener", FieldListener, "ListenerName", "listenerName_s", "listenerName"},
	{"taken", FieldDuration, "TimeTaken", "timeTaken_d", "timeTaken"},
	{"error", FieldReason, "ErrorInfo", "error_info_s", "error_info"},
}

// azureLacks names what the join reads that no record of a log of shape
// held, as that shape names its columns; "" when nothing.
func azureLacks(shape string, logged Field) string {
	var out []string
	for _, c := range azureFields {
		if logged.Has(c.f) {
			continue
		}
		switch shape {
		case "azure-diagnostics":
			out = append(out, c.diag)
		case "azure-storage":
			out = append(out, c.rec)
		default:
			out = append(out, c.agw)
		}
	}
	return strings.Join(out, ", ")
}

// splitV1Query takes a v1 SKU's own parameters out of requestQuery: the
// client's query, and the backend and its status; ok when it holds
// SERVER-ROUTED.
func splitV1Query(q string) (rest, backend, status string, ok bool) {
	if !strings.Contains(strings.ToUpper(q), "SERVER-ROUTED=") {
		return q, "", "", false
	}
	var keep []string
	for _, part := range strings.Split(strings.TrimPrefix(q, "?"), "&") {
		k, val, _ := strings.Cut(part, "=")
		switch k = strings.ToUpper(k); {
		case k == "SERVER-ROUTED":
			backend, ok = val, true
		case k == "SERVER-STATUS":
			status = val
		case strings.HasPrefix(k, "X-AZUREAPPLICATIONGATEWAY-"):
		default:
			keep = append(keep, part)
		}
	}
	return strings.Join(keep, "&"), backend, status, ok
}

// backendAddr is the address of a backend as Azure logs it: "ip:port",
// a bare IP (v1's SERVER-ROUTED, port 0), invalid for a host name.
func backendAddr(b string) netip.AddrPort {
	if ap, ok := parseAddrPort(b); ok {
		return ap
	}
	if a, ok := parseAddr(b); ok {
		return netip.AddrPortFrom(a, 0)
	}
	return netip.AddrPort{}
}
