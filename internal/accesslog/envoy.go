package accesslog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Envoy's access-log formats: its default text format (Envoy's own, and
// Envoy Gateway's, Contour's and Emissary's unless they are told
// otherwise), and Istio's (1.8 and later), which adds the cluster, the
// addresses and the reasons.
const (
	EnvoyDefault = `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ` +
		`%BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" ` +
		`"%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"`
	EnvoyIstio = `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ` +
		`%RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% ` +
		`%DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" ` +
		`"%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% ` +
		`%DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%`
)

// envoyJSONKeys are the keys of Istio's JSON access-log format
// (meshConfig accessLogEncoding: JSON) and Envoy Gateway's default one
// (":authority", "x-request-id"…), each with its operator.
var envoyJSONKeys = map[string]string{
	":authority": "%REQ(:AUTHORITY)%", "x-envoy-origin-path": "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
	"x-envoy-upstream-service-time": "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%", "x-forwarded-for": "%REQ(X-FORWARDED-FOR)%",
	"user-agent": "%REQ(USER-AGENT)%", "x-request-id": "%REQ(X-REQUEST-ID)%",
	"start_time": "%START_TIME%", "route_name": "%ROUTE_NAME%", "method": "%REQ(:METHOD)%",
	"path": "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%", "protocol": "%PROTOCOL%", "response_code": "%RESPONSE_CODE%",
	"response_flags": "%RESPONSE_FLAGS%", "response_code_details": "%RESPONSE_CODE_DETAILS%",
	"connection_termination_details": "%CONNECTION_TERMINATION_DETAILS%", "bytes_received": "%BYTES_RECEIVED%",
	"bytes_sent": "%BYTES_SENT%", "duration": "%DURATION%", "upstream_service_time": "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
	"x_forwarded_for": "%REQ(X-FORWARDED-FOR)%", "user_agent": "%REQ(USER-AGENT)%", "request_id": "%REQ(X-REQUEST-ID)%",
	"authority": "%REQ(:AUTHORITY)%", "upstream_host": "%UPSTREAM_HOST%", "upstream_cluster": "%UPSTREAM_CLUSTER%",
	"upstream_local_address": "%UPSTREAM_LOCAL_ADDRESS%", "downstream_local_address": "%DOWNSTREAM_LOCAL_ADDRESS%",
	"downstream_remote_address": "%DOWNSTREAM_REMOTE_ADDRESS%", "requested_server_name": "%REQUESTED_SERVER_NAME%",
	"upstream_transport_failure_reason": "%UPSTREAM_TRANSPORT_FAILURE_REASON%",
}

// envoyKnownOps are Envoy's command operators whose values the join does
// not need: no word is said of them.
var envoyKnownOps = wordSet(`PROTOCOL UPSTREAM_PROTOCOL BYTES_RECEIVED BYTES_SENT UPSTREAM_WIRE_BYTES_SENT UPSTREAM_WIRE_BYTES_RECEIVED
UPSTREAM_HEADER_BYTES_SENT UPSTREAM_HEADER_BYTES_RECEIVED DOWNSTREAM_WIRE_BYTES_SENT DOWNSTREAM_WIRE_BYTES_RECEIVED
DOWNSTREAM_HEADER_BYTES_SENT DOWNSTREAM_HEADER_BYTES_RECEIVED REQUEST_DURATION REQUEST_TX_DURATION RESPONSE_DURATION
RESPONSE_TX_DURATION DOWNSTREAM_HANDSHAKE_DURATION ROUNDTRIP_DURATION RESPONSE_CODE_DETAILS CONNECTION_TERMINATION_DETAILS
UPSTREAM_TRANSPORT_FAILURE_REASON UPSTREAM_LOCAL_ADDRESS UPSTREAM_LOCAL_ADDRESS_WITHOUT_PORT UPSTREAM_LOCAL_PORT
UPSTREAM_REQUEST_ATTEMPT_COUNT UPSTREAM_CONNECTION_ID REQUESTED_SERVER_NAME ROUTE_NAME VIRTUAL_CLUSTER_NAME CONNECTION_ID
STREAM_ID UNIQUE_ID UPSTREAM_FILTER_STATE FILTER_STATE DYNAMIC_METADATA CLUSTER_METADATA UPSTREAM_METADATA
DOWNSTREAM_PEER_URI_SAN DOWNSTREAM_LOCAL_URI_SAN DOWNSTREAM_PEER_SUBJECT DOWNSTREAM_LOCAL_SUBJECT DOWNSTREAM_PEER_ISSUER
DOWNSTREAM_TLS_SESSION_ID DOWNSTREAM_TLS_CIPHER DOWNSTREAM_TLS_VERSION DOWNSTREAM_PEER_FINGERPRINT_256
DOWNSTREAM_PEER_FINGERPRINT_1 DOWNSTREAM_PEER_SERIAL DOWNSTREAM_PEER_CERT DOWNSTREAM_PEER_CERT_V_START
DOWNSTREAM_PEER_CERT_V_END DOWNSTREAM_TRANSPORT_FAILURE_REASON UPSTREAM_PEER_SUBJECT UPSTREAM_PEER_ISSUER
UPSTREAM_TLS_SESSION_ID UPSTREAM_TLS_CIPHER UPSTREAM_TLS_VERSION UPSTREAM_PEER_CERT UPSTREAM_PEER_URI_SAN
UPSTREAM_LOCAL_URI_SAN REQ_WITHOUT_QUERY TRAILER RESP ACCESS_LOG_TYPE CEL METADATA PATH TRACE_ID
DOWNSTREAM_LOCAL_DNS_SAN DOWNSTREAM_PEER_DNS_SAN UPSTREAM_PEER_DNS_SAN UPSTREAM_LOCAL_DNS_SAN
DOWNSTREAM_LOCAL_IP_SAN DOWNSTREAM_PEER_IP_SAN UPSTREAM_PEER_IP_SAN UPSTREAM_LOCAL_IP_SAN START_TIME_LOCAL
EMIT_TIME EMIT_TIME_LOCAL COMMON_DURATION`)

// envoyOp is one command operator of a format: %NAME(arg):len%.
type envoyOp struct {
	name, arg string
}

func (o envoyOp) String() string {
	if o.arg != "" {
		return "%" + o.name + "(" + o.arg + ")%"
	}
	return "%" + o.name + "%"
}

// envoyOperator reads the operator at s, which starts with %: it and how
// many bytes it takes; false when s holds none there (an upper-case name,
// its argument in parentheses, a length after a colon, a closing %).
func envoyOperator(s string) (envoyOp, int, bool) {
	if len(s) < 2 { // "" or a lone "%": no operator
		return envoyOp{}, 0, false
	}
	i := 1
	for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_' || i > 1 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	op := envoyOp{name: s[1:i]}
	if op.name == "" {
		return op, 0, false
	}
	if i < len(s) && s[i] == '(' {
		end := strings.IndexByte(s[i:], ')')
		if end < 0 {
			return op, 0, false
		}
		op.arg = s[i+1 : i+end]
		i += end + 1
	}
	if i < len(s) && s[i] == ':' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 {
			return op, 0, false
		}
		i = j
	}
	if i >= len(s) || s[i] != '%' {
		return op, 0, false
	}
	return op, i + 1, true
}

// envoyField is what a join reads of one operator; note says it is one
// pinprobe does not know ("" when it does).
func envoyField(op envoyOp) (f *field, logged Field, note string) {
	f = &field{name: op.String(), shape: shapeToken}
	header := strings.ToUpper(op.arg)
	if u, ok := envoyUses[op.name]; ok {
		return f, f.read(u), ""
	}
	switch op.name {
	case "START_TIME":
		tp := timePart{layout: layoutNano, res: 1}
		if op.arg != "" {
			if bad, ok := strftimeOK(op.arg); !ok {
				return f, 0, f.name + ": pinprobe does not read " + bad + " in a time: its times are skipped"
			}
			tp = timePart{layout: layoutStrftime, strf: op.arg, res: 1000}
			f.shape = strftimeShape(op.arg)
		}
		f.set = func(_ *Record, v string, st *matchState) { t := tp; t.s = v; st.start = t }
		return f, FieldTime, ""
	case "ENVIRONMENT":
		if header == "POD_NAME" || header == "HOSTNAME" {
			return f, f.read(useInstance), ""
		}
		return f, 0, ""
	case "REQ":
		// A header of the request: the ID, the host, the method and
		// path, the X-Forwarded-For Envoy appended the client to.
		u, ok := envoyHeaders[header]
		if !ok {
			u = useText
		}
		return f, f.read(u), ""
	}
	f.shape = shapeText
	if !envoyKnownOps[op.name] {
		return f, 0, "%" + op.name + "% is an operator pinprobe does not know: its values are skipped"
	}
	return f, 0, ""
}

// envoyUses are the operators a join reads whatever their argument: the
// client's address and port (the real one, or the direct peer's), the
// listener's, the upstream, the status, the flags and the duration.
var envoyUses = map[string]use{
	"DOWNSTREAM_REMOTE_ADDRESS":        {shapeToken, FieldClientPort, envoyRemote(false)},
	"DOWNSTREAM_DIRECT_REMOTE_ADDRESS": {shapeToken, FieldClientPort, envoyRemote(true)},
	"DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": {shapeAddr, 0, func(_ *Record, v string, st *matchState) {
		if st.realAddr == "" {
			st.realAddr = v
		}
	}},
	"DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT": {shapeAddr, 0, func(_ *Record, v string, st *matchState) { st.proxyAddr = v }},
	"DOWNSTREAM_REMOTE_PORT":                        {shapePort, FieldClientPort, func(_ *Record, v string, st *matchState) { st.realPort = v }},
	"DOWNSTREAM_DIRECT_REMOTE_PORT":                 {shapePort, FieldClientPort, func(_ *Record, v string, st *matchState) { st.proxyPort = v }},
	"DOWNSTREAM_LOCAL_ADDRESS": {shapeToken, FieldListener, func(_ *Record, v string, st *matchState) {
		if ap, ok := parseAddrPort(v); ok {
			st.serverAddr, st.serverPortS = ap.Addr().String(), strconv.Itoa(int(ap.Port()))
		}
	}},
	"DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT": useServerAddr, "DOWNSTREAM_LOCAL_PORT": useServerPort,
	"DURATION":       {shapeNumber, FieldDuration, func(_ *Record, v string, st *matchState) { st.durMS = v }},
	"RESPONSE_CODE":  useStatus,
	"RESPONSE_FLAGS": envoyFlagsUse, "RESPONSE_FLAGS_LONG": envoyFlagsUse,
	"UPSTREAM_HOST": envoyHost, "UPSTREAM_REMOTE_ADDRESS": envoyHost,
	"UPSTREAM_CLUSTER": envoyCluster, "UPSTREAM_CLUSTER_RAW": envoyCluster,
	"HOSTNAME": useInstance,
}

var (
	envoyFlagsUse = use{shapeToken, FieldReason, func(r *Record, v string, _ *matchState) { r.Reason = v }}
	envoyHost     = use{shapeToken, FieldBackend, func(_ *Record, v string, st *matchState) { st.upHost = strings.TrimPrefix(v, "tcp://") }}
	envoyCluster  = use{shapeToken, FieldBackend, func(_ *Record, v string, st *matchState) { st.upCluster = v }}
)

// envoyHeaders are the headers of %REQ(header)% a join reads.
var envoyHeaders = map[string]use{
	":METHOD": useMethod, ":PATH": useURI, "X-ENVOY-ORIGINAL-PATH?:PATH": useURI,
	":AUTHORITY": useHost, "HOST": useHost, ":AUTHORITY?HOST": useHost, "HOST?:AUTHORITY": useHost,
	"X-REQUEST-ID": useRequestID,
	// Envoy appends the address a request came from (at the edge, with
	// use_remote_address): the last one is the client's as it saw it,
	// unless the format says DOWNSTREAM_REMOTE_ADDRESS.
	"X-FORWARDED-FOR": {shapeText, 0, func(_ *Record, v string, st *matchState) {
		if i := strings.LastIndexByte(v, ','); i >= 0 {
			v = v[i+1:]
		}
		st.xff = strings.TrimSpace(v)
	}},
}

// envoyRemote sets the client's address and port (the direct peer's
// when direct) from "ip:port", or the address alone.
func envoyRemote(direct bool) func(*Record, string, *matchState) {
	return func(_ *Record, v string, st *matchState) {
		addr, port := &st.realAddr, &st.realPort
		if direct {
			addr, port = &st.proxyAddr, &st.proxyPort
		}
		if ap, ok := parseAddrPort(v); ok {
			*addr, *port = ap.Addr().String(), strconv.Itoa(int(ap.Port()))
		} else {
			*addr = v
		}
	}
}

// compileEnvoy compiles an Envoy text format (its format string, as
// pasted from the configuration: in quotes, with \" and a closing \n), or
// a json_format (a JSON object of keys and operators).
func compileEnvoy(format string) (*pattern, error) {
	format = strings.TrimSpace(format)
	for _, key := range []string{"text_format:", "format:", "inline_string:"} {
		if rest, ok := strings.CutPrefix(format, key); ok {
			format = strings.TrimSpace(rest)
		}
	}
	if strings.HasPrefix(format, "{") {
		return compileEnvoyJSON(format)
	}
	if len(format) >= 2 && (format[0] == '"' && format[len(format)-1] == '"' || format[0] == '\'' && format[len(format)-1] == '\'') {
		double := format[0] == '"'
		format = format[1 : len(format)-1]
		if double {
			format = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n").Replace(format)
		}
	}
	format = strings.TrimRight(strings.TrimSuffix(format, `\n`), "\r\n")
	p := &pattern{}
	var lit strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			lit.WriteByte(format[i])
			continue
		}
		op, n, ok := envoyOperator(format[i:])
		if !ok {
			return nil, fmt.Errorf("--log-format: %% at byte %d starts no Envoy operator (%%NAME%%, %%NAME(ARG)%% or %%NAME(ARG):LENGTH%%)", i+1)
		}
		// The quotes of the format ("%REQ(USER-AGENT)%") are literals
		// around a value of any text.
		p.literal(&lit)
		f, logged, note := envoyField(op)
		p.add("", f, logged, note)
		i += n - 1
	}
	p.literal(&lit)
	return p, envoyCheck(p)
}

// envoyCheck refuses a format a join cannot place: no operator, no time,
// neither the client nor the request ID.
func envoyCheck(p *pattern) error {
	return p.placeable(": names no Envoy operator (%START_TIME%, %UPSTREAM_HOST% …)", "%START_TIME%",
		p.logged&FieldRequestID != 0 || hasField(p, "%REQ(X-FORWARDED-FOR)%", "%DOWNSTREAM_REMOTE_ADDRESS%", "%DOWNSTREAM_DIRECT_REMOTE_ADDRESS%",
			"%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", "%DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT%"),
		"neither the client's address (%DOWNSTREAM_REMOTE_ADDRESS%) nor the request ID (%REQ(X-REQUEST-ID)%)")
}

// compileEnvoyJSON compiles a json_format: each key whose value is one
// operator is read from a line's object under that key.
func compileEnvoyJSON(format string) (*pattern, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(format))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("--log-format: an Envoy json_format is a JSON object of keys and operators ({\"start_time\": \"%%START_TIME%%\", …}): %v", err)
	}
	ops := map[string]string{}
	var skipped []string
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			skipped = append(skipped, k)
			continue
		}
		ops[k] = s
	}
	p := envoyJSONPattern(ops)
	sort.Strings(skipped)
	for _, k := range skipped {
		p.note("key " + strconv.Quote(k) + " holds no operator pinprobe reads (a nested object or a constant): its values are skipped")
	}
	return p, envoyCheck(p)
}

// envoyJSONPattern is a pattern whose parts are the fields of a
// json_format's keys, each part's literal its key (a pattern of JSON keys,
// not of text: see envoyJSONLine).
func envoyJSONPattern(ops map[string]string) *pattern {
	p := &pattern{keyed: true}
	for _, k := range slices.Sorted(maps.Keys(ops)) {
		v := strings.TrimSpace(ops[k])
		op, n, ok := envoyOperator(v)
		if !ok || n != len(v) {
			p.note("key " + strconv.Quote(k) + " holds " + strconv.Quote(v) + ", not one operator: its values are skipped")
			continue
		}
		f, logged, note := envoyField(op)
		p.add(k, f, logged, note)
	}
	return p
}

// envoyJSONLine reads one line of a JSON access log by the keys of p: an
// object, each key's value (a string, a number, null) set by its field.
// false when the line is no object or holds none of p's keys.
func envoyJSONLine(p *pattern, line string, r *Record) bool {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return false
	}
	st := &matchState{}
	found := false
	for _, pt := range p.parts {
		raw, ok := m[pt.lit]
		if !ok {
			continue
		}
		found = true
		v := jsonText(raw)
		if pt.field.set != nil && v != "" {
			pt.field.set(r, dash(v), st)
		}
	}
	return found && st.finish(r)
}

// looksEnvoyJSON reports whether the start of a JSON log is Envoy's
// (Istio's or Envoy Gateway's keys, in the order Envoy writes them:
// sorted).
func looksEnvoyJSON(head []byte) bool {
	n := 0
	for _, k := range []string{`"authority"`, `":authority"`, `"start_time"`, `"bytes_received"`, `"downstream_remote_address"`, `"response_flags"`, `"upstream_host"`, `"upstream_cluster"`} {
		if bytes.Contains(head, []byte(k)) {
			n++
		}
	}
	return n >= 2
}

// envoyUpstream is the upstream an Envoy line names: its host (an
// address and port), else the cluster it was routed to when no host was
// chosen (UH: none healthy); none when neither is logged.
func envoyUpstream(st *matchState) (Try, bool) {
	switch {
	case st.upHost != "":
		t := Try{Backend: st.upHost}
		if ap, ok := parseAddrPort(st.upHost); ok {
			t.Addr, t.Backend = ap, ap.String()
		}
		return t, true
	case st.upCluster != "":
		return Try{Backend: st.upCluster}, true
	}
	return Try{}, false
}

// percentKind tells whose a format of %s is: Envoy's when it has
// operators (%UPSTREAM_HOST%, %REQ(X)%) and none of HAProxy's variables
// (%ci, %[src], %{+Q}r), HAProxy's the other way round. A format with
// both, or whose every % could be either (%ST%), leaves doubt: an error
// that asks for --log-type.
func percentKind(f string) (Kind, error) {
	var envoy, haproxy, doubt string
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			continue
		}
		next := f[i+1]
		if next == '%' {
			i++
			continue
		}
		if op, n, ok := envoyOperator(f[i:]); ok {
			switch {
			case strings.Contains(op.name, "_") || len(op.name) > 3 || op.arg != "" || !haproxyVars[op.name]:
				if envoy == "" {
					envoy = f[i : i+n]
				}
				i += n - 1
				continue
			case doubt == "":
				doubt = f[i : i+n]
			}
		}
		switch {
		case next == '[':
			if end := sampleEnd(f[i+2:]); end >= 0 {
				if haproxy == "" {
					haproxy = f[i : i+3+end]
				}
				i += 2 + end
			}
		case next == '{' || next >= 'a' && next <= 'z':
			if haproxy == "" {
				k := i + 1
				for k < len(f) && k-i < 8 && f[k] != ' ' {
					k++
				}
				haproxy = f[i:k]
			}
		case next >= 'A' && next <= 'Z':
			k := i + 1
			for k < len(f) && (f[k] >= 'a' && f[k] <= 'z' || f[k] >= 'A' && f[k] <= 'Z') {
				k++
			}
			if haproxyVars[f[i+1:k]] && f[k-1] != '%' && (k >= len(f) || f[k] != '%') && haproxy == "" {
				haproxy = f[i:k]
			}
		}
	}
	switch {
	case envoy != "" && haproxy != "":
		return "", fmt.Errorf("--log-format: %s is an Envoy operator and %s a HAProxy variable: say which the format is with --log-type envoy or --log-type haproxy", envoy, haproxy)
	case envoy != "":
		return Envoy, nil
	case haproxy != "":
		return HAProxy, nil
	case doubt != "":
		return "", fmt.Errorf("--log-format: %s may be an Envoy operator or HAProxy's %s: say which the format is with --log-type envoy or --log-type haproxy", doubt, strings.TrimSuffix(doubt, "%"))
	}
	return "", nil
}

// envoyJSONUnmatched says why line (number n) is no record of the
// json_format p: not a JSON object, or none of p's keys in it.
func envoyJSONUnmatched(p *pattern, line string, n int64) *Unmatched {
	u := &Unmatched{Line: n, Column: 1, LineHas: shown(line)}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		u.FormatHas = "{"
		return u
	}
	var keys []string
	for _, pt := range p.parts {
		if len(keys) == 4 {
			keys = append(keys, "…")
			break
		}
		keys = append(keys, strconv.Quote(pt.lit))
	}
	u.FormatHas = "a key " + strings.Join(keys, ", ")
	return u
}

// otherPercentKind adds to err, the refusal of format as kind's, that it
// reads as the other gateway's, when it does (--log-type haproxy given an
// Envoy format).
func otherPercentKind(err error, format string, kind Kind) error {
	if kind != HAProxy && kind != Envoy {
		return err
	}
	if k, kerr := percentKind(format); kerr == nil && k != "" && k != kind {
		return fmt.Errorf("%w (the format reads as %s's: give --log-type %s)", err, map[Kind]string{Envoy: "Envoy", HAProxy: "HAProxy"}[k], k)
	}
	return err
}
