package accesslog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// A Google Cloud Application Load Balancer logs each request (of those
// logConfig.sampleRate picks) as a LogEntry: a JSON array from `gcloud
// logging read --format=json`, or one a line from a sink. The join reads
// timestamp (the start), httpRequest.remoteIp, serverIp (the backend,
// where logged), status, requestMethod, requestUrl and latency,
// jsonPayload.statusDetails (the reason), resource.labels'
// backend_service_name (backend_target_name regionally), backend_name and
// forwarding_rule_name. It has no instance header and no X-Request-Id.

// gcpPartial says why a Google Cloud load balancer's log may lack requests
// it served.
const gcpPartial = "Google Cloud logs a sample of a backend service's requests (its logConfig.sampleRate, 1.0 unless set lower): a request of the run the log lacks may have been served all the same"

// gcpEntry is what a Cloud Logging entry of a load balancer holds of what
// the join reads.
type gcpEntry struct {
	HTTPRequest *struct {
		RequestMethod string          `json:"requestMethod"`
		RequestURL    string          `json:"requestUrl"`
		Status        json.RawMessage `json:"status"`
		RemoteIP      string          `json:"remoteIp"`
		ServerIP      string          `json:"serverIp"`
		Latency       json.RawMessage `json:"latency"`
	} `json:"httpRequest"`
	JSONPayload struct {
		StatusDetails string `json:"statusDetails"`
	} `json:"jsonPayload"`
	Resource struct {
		Type   string                     `json:"type"`
		Labels map[string]json.RawMessage `json:"labels"`
	} `json:"resource"`
	Timestamp string `json:"timestamp"`
}

// isGCPJSON reports whether a JSON record is a Cloud Logging entry of an
// HTTP request.
func isGCPJSON(obj []byte) bool {
	return bytes.Contains(obj, []byte(`"httpRequest"`)) &&
		(bytes.Contains(obj, []byte(`"resource"`)) || bytes.Contains(obj, []byte(`"jsonPayload"`)) || bytes.Contains(obj, []byte(`"logName"`)))
}

// gcpSuccess are the statusDetails that say the request was answered as
// asked: no reason for a failure.
var gcpSuccess = map[string]bool{
	"response_sent_by_backend": true, "response_from_cache": true, "response_from_cache_validated": true,
	"redirected_by_load_balancer": true, "byte_range_caching": true,
}

// gcpState is what a Google Cloud log's records said so far.
type gcpState struct {
	logged   Field
	instance bool // a record named the backend that answered (serverIp)
}

// decode makes a Record of one entry: ok false when it is no request
// the log can place (no time or client); access false when it is no
// request at all (another log's entry).
func (g *gcpState) decode(obj []byte, r *Record) (ok, access bool) {
	var e gcpEntry
	if err := json.Unmarshal(obj, &e); err != nil {
		return false, true
	}
	h := e.HTTPRequest
	if h == nil {
		return false, false
	}
	t, ok := parseTime(e.Timestamp, layoutFlex) // RFC 3339 first
	if !ok {
		return false, true
	}
	r.Time, r.Resolution, r.Duration = t, time.Microsecond, -1
	g.logged |= FieldTime
	if a, ok := parseAddr(h.RemoteIP); ok {
		r.Client = a
	} else if ap, ok := splitAddrPort(strings.TrimSpace(h.RemoteIP)); ok {
		r.Client, r.ClientPort = ap.Addr(), ap.Port()
		g.logged |= FieldClientPort
	} else {
		return false, true
	}
	if d, ok := seconds(strings.TrimSuffix(jsonText(h.Latency), "s")); ok {
		r.Duration = d
		g.logged |= FieldDuration
	}
	r.Status, _ = parseStatus(jsonText(h.Status))
	r.Method = h.RequestMethod
	if u, err := url.Parse(h.RequestURL); err == nil && h.RequestURL != "" {
		r.Host, r.URI = u.Host, u.RequestURI()
	}
	label := func(k string) string { return strings.TrimSpace(jsonText(e.Resource.Labels[k])) }
	r.Listener = label("forwarding_rule_name")
	if r.Listener != "" {
		g.logged |= FieldListener
	}
	details := strings.TrimSpace(e.JSONPayload.StatusDetails)
	if details != "" {
		g.logged |= FieldReason | FieldBackendStatus
		if !gcpSuccess[details] {
			r.Reason = details
		}
	}
	var try Try
	service := cmp.Or(label("backend_service_name"), label("backend_target_name"))
	switch server := strings.TrimSpace(h.ServerIP); {
	case server != "":
		try.Backend = server
		try.Addr, _ = splitAddrPort(server)
		g.instance = true
	case service != "":
		try.Backend = service
		if group := label("backend_name"); group != "" {
			try.Backend += "/" + group
		}
	}
	if try.Backend != "" {
		// The backend's status only where the backend sent the response:
		// otherwise the load balancer answered.
		if details == "response_sent_by_backend" && r.Status != 0 {
			try.Status = strconv.Itoa(r.Status)
		}
		r.Tries = []Try{try}
		g.logged |= FieldBackend
	}
	return true, true
}

// cannot says what a Google Cloud log cannot tell.
func (g *gcpState) cannot() []string {
	out := []string{"the request ID pinprobe sent: Google's load balancer logs its own trace ID, not X-Request-Id"}
	if !g.instance {
		out = append(out, "the instance that answered: it names the backend service (and its instance group or NEG), not the instance (httpRequest.serverIp)")
	}
	return out
}
