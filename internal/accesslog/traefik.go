package accesslog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Traefik writes its access log in its common format (the default: CLF
// and "RequestCount" "RouterName" "ServiceURL" Durationms; the start to
// the second; ClientHost is X-Forwarded-For when set; no client port, no
// request ID; v2 wrote OriginStatus where v3 writes DownstreamStatus) or
// as JSON (logrus's, a line an object: ClientAddr, ClientHost, ClientPort,
// DownstreamStatus, Duration in ns, OriginStatus, RouterName, ServiceAddr,
// ServiceURL as Go's url.URL, StartUTC, entryPointName, and each header
// kept by accessLog.fields.headers as request_<Name>).

// traefikLogged is what Traefik's common format logs.
const traefikLogged = FieldTime | FieldBackend | FieldListener | FieldDuration

// parseTraefikCLF reads one line of Traefik's common log format.
func parseTraefikCLF(line string, r *Record) bool {
	open := strings.Index(line, " [")
	if open < 0 {
		return false
	}
	shut := strings.IndexByte(line[open:], ']')
	if shut < 0 {
		return false
	}
	shut += open
	host, _, ok := strings.Cut(line[:open], " - ")
	if !ok {
		return false
	}
	client, ok := firstForwarded(host)
	if !ok {
		return false
	}
	start, ok := parseTime(line[open+2:shut], layoutCLF)
	if !ok {
		return false
	}
	f := albFields(line[shut+1:])
	// "request" status size "referer" "agent" count "router" "url" Nms
	if len(f) != 9 || !strings.HasSuffix(f[8], "ms") {
		return false
	}
	took, ok := whole(strings.TrimSuffix(f[8], "ms"), time.Millisecond)
	if !ok {
		return false
	}
	if s := dash(f[1]); s != "" {
		if r.Status, ok = parseStatus(s); !ok {
			return false
		}
	}
	if c := dash(f[5]); c != "" {
		if _, err := strconv.ParseUint(c, 10, 64); err != nil {
			return false
		}
	}
	r.Client = client
	r.Time, r.Resolution, r.Duration = start, time.Second, took
	r.Method, r.URI = requestLine(f[0])
	r.Listener = dash(f[6])
	if b, ok := traefikBackend(dash(f[7])); ok {
		r.Tries = []Try{b}
	}
	return true
}

// firstForwarded is the client of a Traefik ClientHost: the address the
// request came from, or the first of an X-Forwarded-For list.
func firstForwarded(s string) (netip.Addr, bool) {
	first, _, _ := strings.Cut(s, ",")
	return parseAddr(strings.TrimSpace(first))
}

// traefikBackend is the backend of a ServiceURL ("http://10.0.0.2:80"):
// its host and port, the port from the scheme when the URL has none.
func traefikBackend(s string) (Try, bool) {
	if s == "" {
		return Try{}, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return Try{Backend: s}, true
	}
	return traefikTry(u.Scheme, u.Host), true
}

// traefikTry is the backend at host (host:port, or a host alone) reached
// by scheme.
func traefikTry(scheme, host string) Try {
	t := Try{Backend: host}
	if ap, ok := splitAddrPort(host); ok {
		t.Addr = ap
		return t
	}
	if a, ok := parseAddr(host); ok {
		port := uint16(80)
		if scheme == "https" {
			port = 443
		}
		t.Addr = netip.AddrPortFrom(a, port)
	}
	return t
}

// traefikJSON is what a record of Traefik's JSON access log holds of
// what the join reads.
type traefikJSON struct {
	ClientAddr       string          `json:"ClientAddr"`
	ClientHost       string          `json:"ClientHost"`
	ClientPort       json.RawMessage `json:"ClientPort"`
	DownstreamStatus json.RawMessage `json:"DownstreamStatus"`
	OriginStatus     json.RawMessage `json:"OriginStatus"`
	Duration         json.RawMessage `json:"Duration"`
	StartUTC         string          `json:"StartUTC"`
	StartLocal       string          `json:"StartLocal"`
	Time             string          `json:"time"`
	RouterName       string          `json:"RouterName"`
	EntryPoint       string          `json:"entryPointName"`
	ServiceAddr      string          `json:"ServiceAddr"`
	ServiceURL       json.RawMessage `json:"ServiceURL"`
	RequestMethod    string          `json:"RequestMethod"`
	RequestPath      string          `json:"RequestPath"`
	RequestHost      string          `json:"RequestHost"`
	RequestID        string          `json:"request_X-Request-Id"`
}

// isTraefikJSON reports whether a JSON record is one of Traefik's: its
// own keys, not another's.
func isTraefikJSON(obj []byte) bool {
	return bytes.Contains(obj, []byte(`"DownstreamStatus"`)) || bytes.Contains(obj, []byte(`"ClientHost"`)) && bytes.Contains(obj, []byte(`"StartUTC"`))
}

// isTraefikOwn reports whether a JSON record is a line of Traefik's own
// log (its JSON format: level, message, time), not of its access log.
func isTraefikOwn(obj []byte) bool {
	return bytes.Contains(obj, []byte(`"level"`)) && (bytes.Contains(obj, []byte(`"msg"`)) || bytes.Contains(obj, []byte(`"message"`)))
}

// record makes a Record of a Traefik JSON record; false when it lacks a
// time or a client. It sets logged to what the record logs.
func (t *traefikJSON) record(r *Record, logged *Field) bool {
	// StartUTC, else StartLocal (with its zone) where fields.names drops
	// StartUTC, else logrus's own time, to the second.
	r.Resolution = time.Microsecond
	start, ok := parseTime(t.StartUTC, layoutNano)
	if !ok {
		start, ok = parseTime(t.StartLocal, layoutNano)
	}
	if !ok {
		if start, ok = parseTime(t.Time, layoutNano); !ok {
			return false
		}
		r.Resolution = time.Second
	}
	r.Time, r.Duration = start, -1
	*logged |= FieldTime
	// ClientAddr is the peer (ClientPort its port); ClientHost is the
	// first address of X-Forwarded-For when the request had one: the
	// client, whose port the log does not have.
	peer, okPeer := parseAddrPort(t.ClientAddr)
	if !okPeer {
		if a, ok := parseAddr(t.ClientAddr); ok {
			peer = netip.AddrPortFrom(a, 0)
		}
		if p, ok := parsePort(jsonText(t.ClientPort)); ok && peer.Addr().IsValid() {
			peer = netip.AddrPortFrom(peer.Addr(), p)
		}
	}
	r.Client, r.ClientPort = peer.Addr(), peer.Port()
	if a, ok := firstForwarded(t.ClientHost); ok && a != r.Client {
		r.Client, r.ClientPort = a, 0
	}
	if !r.Client.IsValid() {
		return false
	}
	if r.ClientPort != 0 {
		*logged |= FieldClientPort
	}
	if d, ok := whole(jsonText(t.Duration), 1); ok {
		r.Duration = d
		*logged |= FieldDuration
	}
	if s := jsonText(t.DownstreamStatus); s != "" {
		r.Status, _ = parseStatus(s)
	}
	r.Method, r.URI, r.Host = t.RequestMethod, t.RequestPath, t.RequestHost
	r.Listener = cmp.Or(t.EntryPoint, t.RouterName)
	if r.Listener != "" {
		*logged |= FieldListener
	}
	if r.RequestID = strings.TrimSpace(t.RequestID); r.RequestID != "" {
		*logged |= FieldRequestID
	}
	var try Try
	switch {
	case t.ServiceAddr != "":
		try = traefikTry("", t.ServiceAddr)
	case len(t.ServiceURL) > 0 && t.ServiceURL[0] == '"':
		try, _ = traefikBackend(jsonText(t.ServiceURL))
	case len(t.ServiceURL) > 0 && t.ServiceURL[0] == '{':
		var u struct{ Scheme, Host string }
		if json.Unmarshal(t.ServiceURL, &u) == nil && u.Host != "" {
			try = traefikTry(u.Scheme, u.Host)
		}
	}
	if try.Backend != "" {
		*logged |= FieldBackend
		// OriginStatus is the status the service handler wrote: the
		// backend's, or Traefik's own 502 or 504 when it could not
		// connect or timed out.
		if try.Status = statusText(jsonText(t.OriginStatus)); try.Status != "" {
			*logged |= FieldBackendStatus
		}
		r.Tries = []Try{try}
	}
	return true
}
