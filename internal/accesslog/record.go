package accesslog

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Kind is a family of access-log formats.
type Kind string

// The kinds Open reads (--log-type).
const (
	Nginx   Kind = "nginx"
	HAProxy Kind = "haproxy"
	Azure   Kind = "azure"
	ALB     Kind = "alb"
	Traefik Kind = "traefik"
	// GCP is a Google Cloud Application Load Balancer's request log, as
	// Cloud Logging exports it: gcloud's own name for the platform.
	GCP   Kind = "gcp"
	Envoy Kind = "envoy"
)

// Kinds lists the kinds, in help order.
var Kinds = []Kind{Nginx, HAProxy, Azure, ALB, Envoy, Traefik, GCP}

// Field is one thing a format may log that a join reads.
type Field uint16

// The fields a format may log.
const (
	FieldTime Field = 1 << iota
	FieldClientPort
	FieldRequestID
	FieldBackend
	FieldBackendStatus
	FieldInstance
	FieldListener
	FieldDuration
	FieldReason
)

var fieldNames = []struct {
	f    Field
	name string
}{
	{FieldTime, "time"}, {FieldClientPort, "client port"}, {FieldRequestID, "request ID"}, {FieldBackend, "backend"},
	{FieldBackendStatus, "backend status"}, {FieldInstance, "instance"}, {FieldListener, "listener"},
	{FieldDuration, "duration"}, {FieldReason, "error reason"},
}

// Has reports whether fs holds f.
func (fs Field) Has(f Field) bool { return fs&f != 0 }

// Names lists the fields of fs in words.
func (fs Field) Names() []string {
	var out []string
	for _, n := range fieldNames {
		if fs.Has(n.f) {
			out = append(out, n.name)
		}
	}
	return out
}

// Try is one attempt of a gateway to get an answer from a backend: nginx
// logs every upstream it tried ($upstream_addr "a, b"), the last of which
// answered.
type Try struct {
	Backend string // as logged: "10.0.0.4:443", "[2001:db8::9]:443", "be_app/srv1"
	// Addr is the backend's address and port, when the log says it (in
	// Backend, or beside a server's name: HAProxy's %si:%sp).
	Addr   netip.AddrPort
	Status string // the backend's status as logged; "" when it gave none
}

// Record is one request of an access log, as the log says it. Strings
// are the log's own text, uncleaned; empty where the log has nothing
// ("-").
type Record struct {
	// Line is where it starts in its file: the line number (from 1), or
	// the record's for JSON.
	Line int64
	// Time is when the gateway got the request, as near as the log says:
	// its own start time where it logs one (HAProxy, ALB's
	// request_creation_time), else the time it logged less the duration
	// it logged (nginx's $time_local − $request_time, Azure's
	// TimeGenerated − TimeTaken). Zero when the line has none.
	Time time.Time
	// Resolution is how precise Time is: a second for $time_local, a
	// millisecond for HAProxy's, a microsecond for ALB's.
	Resolution time.Duration
	// AtEnd says Time is when the response was logged, its duration
	// unknown: the request started up to the whole latency before it.
	AtEnd bool
	// NoZone says the log wrote Time without a time zone (HAProxy's
	// local %tr): it was read as UTC, and the offset a join measures
	// holds the zone.
	NoZone bool
	// Duration is how long the gateway took, when it logs it; -1 when not.
	Duration time.Duration

	Client     netip.Addr // the client's address as the gateway saw it
	ClientPort uint16     // 0 when not logged
	// Server is the address and port the client connected to (nginx's
	// $server_addr:$server_port, HAProxy's %fi:%fp); invalid when not
	// logged. ServerPort alone may be known (an ALB's listener port).
	Server     netip.AddrPort
	ServerPort uint16
	// Listener names where the gateway took the request: an Azure
	// listener, a HAProxy frontend, an ALB and its port.
	Listener string
	Host     string
	Method   string
	URI      string // the request target as logged, query included
	Status   int    // the status sent to the client; 0 when none
	// Tries are the backends tried, the last of which answered; none
	// when the gateway routed the request nowhere (or does not log it).
	Tries    []Try
	Instance string // the gateway instance that served it
	// RequestID is the X-Request-Id the request carried, when logged.
	RequestID string
	// Reason says why the gateway failed it: ALB's error_reason, Azure's
	// ErrorInfo, HAProxy's termination state, Envoy's response flags
	// (ReasonWords says it in words).
	Reason string
}

// ended sets the time t a log wrote when the response was done: the
// request's start, t less its duration, where the log has that.
func (r *Record) ended(t time.Time) {
	r.Time, r.AtEnd = t, r.Duration < 0
	if r.Duration >= 0 {
		r.Time = t.Add(-r.Duration)
	}
}

// Backend is the backend that answered: the last one tried, "" when none.
func (r *Record) Backend() string { return r.last().Backend }

// BackendStatus is the status of the backend that answered, "" when none.
func (r *Record) BackendStatus() string { return r.last().Status }

// last is the backend tried last; none when none was.
func (r *Record) last() Try {
	if len(r.Tries) == 0 {
		return Try{}
	}
	return r.Tries[len(r.Tries)-1]
}

// dash is a log's empty value.
func dash(s string) string {
	s = strings.TrimSpace(s)
	if s == "-" {
		return ""
	}
	return s
}

// parseAddr reads an IP address as logs write it: bare, in brackets, with
// an IPv4-mapped IPv6 prefix unmapped.
func parseAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(dash(s), "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// parseAddrPort reads "ip:port" or "[ip]:port" (or an IPv6 address and
// port without brackets, as some logs write it: the last colon parts them).
func parseAddrPort(s string) (netip.AddrPort, bool) {
	s = dash(s)
	if ap, ok := splitAddrPort(s); ok {
		return ap, true
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return netip.AddrPort{}, false
	}
	a, ok := parseAddr(s[:i])
	p, okp := parsePort(s[i+1:])
	if !ok || !okp {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, p), true
}

// splitAddrPort reads "ip:port" strictly, as netip does, the address
// unmapped.
func splitAddrPort(s string) (netip.AddrPort, bool) {
	ap, err := netip.ParseAddrPort(s)
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), err == nil
}

// parsePort reads a port number, 1 to 65535.
func parsePort(s string) (uint16, bool) {
	n, ok := digits(dash(s), 5)
	if !ok || n == 0 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// parseStatus reads an HTTP status, 100 to 999; 0, false otherwise.
func parseStatus(s string) (int, bool) {
	s = dash(s)
	n, ok := digits(s, 3)
	if !ok || len(s) != 3 {
		return 0, false
	}
	return n, n >= 100
}

// digits reads s, 1 to size decimal digits; false when it is not.
func digits(s string, size int) (int, bool) {
	if s == "" || len(s) > size {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// statusText is an HTTP status as text ("502"), "" when s is none.
func statusText(s string) string {
	if n, ok := parseStatus(s); ok {
		return strconv.Itoa(n)
	}
	return ""
}

// requestLine splits "GET /path HTTP/1.1" into its method and target.
func requestLine(s string) (method, uri string) {
	s = dash(s)
	m, rest, ok := strings.Cut(s, " ")
	if !ok {
		return "", ""
	}
	uri, _, _ = strings.Cut(rest, " ")
	return m, uri
}

// wordSet is a set of the words of s.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
