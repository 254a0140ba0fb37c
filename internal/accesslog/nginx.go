package accesslog

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// NginxCombined is nginx's predefined log format, what an access_log
// without a format writes.
const NginxCombined = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

// nginxVars are the variables of nginx's HTTP modules (nginx.org's
// variable index): a log_format naming another is a typo, or a variable
// of the configuration's own (map, set), which --log-var declares.
var nginxVars = wordSet(nginxVarsList)

// nginxPrefixes are the families of variables named after a header,
// cookie or argument.
var nginxPrefixes = []string{"arg_", "cookie_", "http_", "sent_http_", "sent_trailer_", "upstream_cookie_",
	"upstream_http_", "upstream_trailer_", "jwt_claim_", "jwt_header_", "proxy_protocol_tlv_", "geoip_", "geoip2_"}

var nginxVarsList = `
ancient_browser arg args balancer_ip balancer_port binary_remote_addr body_bytes_sent bytes_received bytes_sent
connection connection_requests connection_time connections_active connections_reading connections_waiting
connections_writing content_length content_type date_gmt date_local document_root document_uri
fastcgi_path_info fastcgi_script_name geoip_area_code gzip_ratio host hostname http2 http3 https
invalid_referer is_args jwt_payload limit_conn_status limit_rate limit_req_status memcached_key modern_browser
msec msie nginx_version pid pipe protocol proxy_add_x_forwarded_for proxy_host proxy_port
proxy_protocol_addr proxy_protocol_port proxy_protocol_server_addr proxy_protocol_server_port query_string
realip_remote_addr realip_remote_port realpath_root remote_addr remote_port remote_user request request_body
request_body_file request_completion request_filename request_id request_length request_method request_time
request_uri scheme secure_link secure_link_expires sent_http_ server_addr server_name server_port
server_protocol session_log_binary_id session_log_id session_time slice_range spdy spdy_request_priority
ssl_alpn_protocol ssl_cipher ssl_ciphers ssl_client_cert ssl_client_escaped_cert ssl_client_fingerprint
ssl_client_i_dn ssl_client_i_dn_legacy ssl_client_raw_cert ssl_client_s_dn ssl_client_s_dn_legacy
ssl_client_serial ssl_client_v_end ssl_client_v_remain ssl_client_v_start ssl_client_verify ssl_curve
ssl_curves ssl_early_data ssl_preread_alpn_protocols ssl_preread_protocol ssl_preread_server_name
ssl_protocol ssl_server_name ssl_session_id ssl_session_reused status tcpinfo_rcv_space tcpinfo_rtt
tcpinfo_rttvar tcpinfo_snd_cwnd time_iso8601 time_local uid_got uid_reset uid_set upstream_addr
upstream_bytes_received upstream_bytes_sent upstream_cache_status upstream_connect_time upstream_first_byte_time
upstream_header_time upstream_last_server_name upstream_queue_time upstream_response_length
upstream_response_time upstream_session_time upstream_status uri`

// knownNginxVar reports whether name is a variable of nginx's modules, or
// a regular expression's capture ($1).
func knownNginxVar(name string) bool {
	if nginxVars[name] {
		return true
	}
	if name != "" && strings.Trim(name, "0123456789") == "" {
		return true
	}
	for _, p := range nginxPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}

// nginxUses are the nginx variables a join reads; any other is matched
// as text and left.
var nginxUses = map[string]use{
	"remote_addr": useClient, "remote_port": useClientPort,
	"realip_remote_addr":  {shapeAddr, 0, func(_ *Record, v string, st *matchState) { st.realAddr = v }},
	"realip_remote_port":  {shapePort, FieldClientPort, func(_ *Record, v string, st *matchState) { st.realPort = v }},
	"proxy_protocol_addr": {shapeToken, 0, func(_ *Record, v string, st *matchState) { st.proxyAddr = v }},
	"proxy_protocol_port": {shapeToken, FieldClientPort, func(_ *Record, v string, st *matchState) { st.proxyPort = v }},
	"server_addr":         useServerAddr, "server_port": useServerPort,
	"server_name": {shapeToken, FieldListener, func(_ *Record, v string, st *matchState) { st.serverName = v }},
	"host":        useHost,
	"http_host": {shapeToken, 0, func(r *Record, v string, _ *matchState) {
		if r.Host == "" {
			r.Host = v
		}
	}},
	"request": useRequest, "request_method": useMethod, "request_uri": useURI, "status": useStatus,
	"time_local":        {shapeText, FieldTime, func(_ *Record, v string, st *matchState) { st.setEnd(timePart{s: v, layout: layoutCLF, res: 1000}) }},
	"time_iso8601":      {shapeToken, FieldTime, func(_ *Record, v string, st *matchState) { st.setEnd(timePart{s: v, layout: layoutISO, res: 1000}) }},
	"msec":              {shapeNumber, FieldTime, func(_ *Record, v string, st *matchState) { st.setEnd(timePart{s: v, layout: layoutUnix, res: 1}) }},
	"request_time":      {shapeNumber, FieldDuration, func(_ *Record, v string, st *matchState) { st.requestTime = v }},
	"upstream_addr":     {shapeText, FieldBackend, func(_ *Record, v string, st *matchState) { st.tries = v }},
	"upstream_status":   {shapeText, FieldBackendStatus, func(_ *Record, v string, st *matchState) { st.statuses = v }},
	"http_x_request_id": useRequestID, "hostname": useInstance,
}

// CompileNginx compiles an nginx log_format string (its quoted parts
// joined, as nginx joins them; escape=json or default escaping alike).
// vars are variables of the configuration's own (made by map or set)
// that the format may name besides nginx's. It refuses a variable nginx
// does not have, naming it and the nearest one it has.
func compileNginx(format string, vars []string) (*pattern, error) {
	format = nginxConfigString(format)
	own := map[string]bool{}
	for _, v := range vars {
		own[strings.TrimPrefix(v, "$")] = true
	}
	p := &pattern{}
	var lit strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '$' {
			lit.WriteByte(c)
			continue
		}
		name := ""
		switch {
		case i+1 < len(format) && format[i+1] == '{':
			end := strings.IndexByte(format[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("--log-format: ${ at byte %d is not closed by }", i+1)
			}
			name = format[i+2 : i+2+end]
			i += 2 + end
		default:
			j := i + 1
			for j < len(format) && (isAlnum(format[j]) || format[j] == '_') {
				j++
			}
			name = format[i+1 : j]
			i = j - 1
		}
		if name == "" {
			lit.WriteByte('$')
			continue
		}
		name = strings.ToLower(name)
		if !knownNginxVar(name) && !own[name] {
			return nil, unknownVar("$"+name, nearest(name, sortedNames(nginxVars, "")), "nginx")
		}
		p.literal(&lit)
		f := &field{name: "$" + name}
		p.add("", f, f.read(nginxUses[name]), "") // text, unread, when not there
	}
	p.literal(&lit)
	return p, p.placeable(fmt.Sprintf(" %q: names no variable", format), "$time_local, $time_iso8601 or $msec",
		hasField(p, "$remote_addr", "$realip_remote_addr", "$proxy_protocol_addr"), "no client address ($remote_addr)")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sortedNames lists the names of a gateway's variables, each after
// prefix, sorted, for a did-you-mean.
func sortedNames(vars map[string]bool, prefix string) []string {
	out := make([]string, 0, len(vars))
	for _, v := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, prefix+v)
	}
	return out
}

// unknownVar is the error for a variable a format names that its gateway
// does not have.
func unknownVar(name, near, gateway string) error {
	hint := ""
	if near != "" {
		hint = " (did you mean " + near + "?)"
	}
	if gateway == "nginx" {
		return fmt.Errorf("--log-format: unknown variable %s%s: not one of nginx's; a variable of your configuration's own (map, set) is declared with --log-var %s",
			name, hint, strings.TrimPrefix(name, "$"))
	}
	return fmt.Errorf("--log-format: unknown variable %s%s: not one of HAProxy's log-format variables", name, hint)
}

// nearest is the name of names closest to name, when it is a likely typo
// of it (at most two edits, and fewer than half its letters); "" when none.
func nearest(name string, names []string) string {
	best := words.Nearest(name, names)
	if best == "" || strings.HasPrefix(name, "%") {
		return best
	}
	return "$" + best
}

// nginxConfigString is the format a --log-format means: the string
// itself, or, pasted from nginx.conf, the quoted strings of a log_format
// directive joined as nginx joins them ("log_format main escape=json" and
// the final ";" left out).
func nginxConfigString(s string) string {
	s = strings.TrimSpace(s)
	directive := false
	if rest, ok := strings.CutPrefix(s, "log_format"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n') {
		fields := strings.Fields(rest)
		if len(fields) > 0 { // the format's name
			rest = strings.TrimSpace(rest)[len(fields[0]):]
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "escape=") {
			_, rest, _ = strings.Cut(rest, " ")
		}
		s, directive = strings.TrimSuffix(strings.TrimSpace(rest), ";"), true
	}
	// A format of its own may begin with a double quote ("$request" …);
	// one pasted from nginx.conf is in single quotes, or follows the
	// directive.
	if s == "" || s[0] != '\'' && !(directive && s[0] == '"') {
		return s
	}
	var b strings.Builder
	for s = strings.TrimSpace(s); s != "" && (s[0] == '\'' || s[0] == '"'); s = strings.TrimSpace(s) {
		q, end := s[0], closingQuote(s)
		if end < 0 {
			return b.String() + s
		}
		b.WriteString(strings.ReplaceAll(s[1:end], "\\"+string(q), string(q)))
		s = s[end+1:]
	}
	if s != "" {
		b.WriteString(s)
	}
	return b.String()
}
