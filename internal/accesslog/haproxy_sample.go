package accesslog

import (
	"strings"
)

// sampleCall is one call of a HAProxy sample expression: the fetch
// ("req.hdr", "x-request-id") or a converter ("utime", "%Y-%m-%d").
type sampleCall struct {
	name, args string
}

// parseSample splits a sample expression into its fetch and converters:
// "date(0,ms),ms_utime(%Y)" → date(0,ms), ms_utime(%Y). Commas inside
// parentheses belong to the arguments. false when it is not one.
func parseSample(expr string) ([]sampleCall, bool) {
	var out []sampleCall
	depth, start := 0, 0
	for i := 0; i <= len(expr); i++ {
		if i < len(expr) {
			switch expr[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				if depth < 0 {
					return nil, false
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth != 0 {
			return nil, false
		}
		c := strings.TrimSpace(expr[start:i])
		name, args, paren := strings.Cut(c, "(")
		if paren {
			if !strings.HasSuffix(args, ")") {
				return nil, false
			}
			args = args[:len(args)-1]
		}
		if name == "" {
			return nil, false
		}
		out = append(out, sampleCall{name: strings.ToLower(strings.TrimSpace(name)), args: args})
		start = i + 1
	}
	return out, len(out) > 0
}

// sampleEnd is the index of the ] that closes a sample expression s
// (which follows its [), outside the converters' parentheses; -1 when
// none does.
func sampleEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
		case ']':
			if depth <= 0 {
				return i
			}
		}
	}
	return -1
}

// arg is the n-th argument of a call (from 0), unquoted; "" when none.
func (c sampleCall) arg(n int) string {
	parts := strings.Split(c.args, ",")
	if n >= len(parts) {
		return ""
	}
	return strings.Trim(strings.TrimSpace(parts[n]), `"'`)
}

// timeConverters are the converters that write a date as text; the
// scale of the integer each takes (1 for seconds, 1000 for ms, 1e6 for
// µs) and whether it writes UTC.
var timeConverters = map[string]struct {
	scale int
	utc   bool
}{
	"utime": {1, true}, "ltime": {1, false},
	"ms_utime": {1000, true}, "ms_ltime": {1000, false},
	"us_utime": {1000000, true}, "us_ltime": {1000000, false},
}

// harmlessConverters change no value a join reads.
var harmlessConverters = map[string]bool{"json": true}

// haproxyKnownFetches are sample fetches a log-format may name whose
// values the join does not need (headers it does not read among them): no
// word is said of them.
var haproxyKnownFetches = wordSet(`req.hdr req.fhdr hdr capture.req.hdr capture.req.method capture.req.uri capture.req.ver
capture.res.ver http_auth_type req.hdrs res.hdrs fc_err fc_err_str ssl_fc_err ssl_c_err ssl_c_ca_err ssl_fc_is_resumed ssl_fc_sni
ssl_fc_protocol ssl_fc_cipher ssl_fc ssl_c_used ssl_c_verify ssl_c_s_dn ssl_c_i_dn ssl_fc_alpn ssl_fc_npn
fc_rtt fc_rttvar fc_http_major fc_pp_authority fc_pp_unique_id so_name so_id fe_id be_id srv_id fe_defbe
req.ver res.ver req.len req.body req.cook req.cook_cnt res.cook cook res.hdr res.fhdr capture.res.hdr hdr_cnt
req.hdr_cnt res.hdr_cnt query base base32 url_param urlp path_end req.body_size res.comp res.comp_algo
var txn.id ssl_bc ssl_bc_protocol bc_err bc_err_str bc_src bc_src_port bc_rtt pid thread proc nbproc
uuid rand env str int bool meth ipv4 ipv6 http_first_req lat_ns_avg lat_ns_tot cpu_calls cpu_ns_avg
cpu_ns_tot quic_enabled stopping txn.sess_term_state txn.conn_retries txn.timer.user txn.timer.data_transfer
be_conn be_sess_rate fe_conn fe_req_rate connslots queue avg_queue nbsrv srv_conn srv_queue srv_sess_rate
sc_http_req_rate sc0_http_req_rate sc1_http_req_rate sc2_http_req_rate req.ssl_sni req.ssl_ver`)

// haproxySample is what a join reads of a sample expression %[expr]:
// dates (date, accept_date, request_date, raw or through utime and its
// kin), addresses (src, src_port, dst, dst_port, bc_dst, bc_dst_port),
// request IDs (unique-id, req.hdr(x-request-id), capture.req.hdr(N)),
// be_name, srv_name, fe_name, status, hostname. note says what of it is
// not read, for a fetch or converter the join does not know ("" when
// nothing is left unread that matters).
func haproxySample(expr string, quoted bool) (f *field, logged Field, note string) {
	f = &field{name: "%[" + expr + "]", shape: shapeText, quoted: quoted}
	calls, ok := parseSample(expr)
	if !ok {
		return f, 0, f.name + " is no sample expression pinprobe can read: its values are skipped"
	}
	fetch, convs := calls[0], calls[1:]
	switch fetch.name {
	case "date", "accept_date", "request_date":
		return sampleDate(f, fetch, convs)
	}
	for _, c := range convs {
		if !harmlessConverters[c.name] {
			if _, reads := haproxySampleField(&field{}, fetch); reads {
				return f, 0, f.name + ": its value is converted (" + c.name + "), so pinprobe does not read it"
			}
			return f, 0, ""
		}
	}
	logged, ok = haproxySampleField(f, fetch)
	switch {
	case ok:
		return f, logged, ""
	case haproxyKnownFetches[fetch.name]:
		return f, 0, ""
	}
	return f, 0, "%[" + fetch.name + "] is a sample fetch pinprobe does not know: its values are skipped"
}

// haproxySampleField sets f up for a fetch without converters that the
// join reads; false when it reads none of it.
func haproxySampleField(f *field, fetch sampleCall) (logged Field, ok bool) {
	if u, ok := sampleUses[fetch.name]; ok {
		return f.read(u), true
	}
	switch fetch.name {
	case "unique-id", "capture.req.hdr":
		return f.read(sampleID), true
	case "var":
		// A variable the configuration set (http-request set-var(txn.rid)
		// req.hdr(x-request-id)): an ID when its name says so.
		if !strings.Contains(strings.ToLower(fetch.arg(0)), "id") {
			return 0, false
		}
		return f.read(sampleID), true
	case "req.hdr", "req.fhdr", "hdr":
		switch strings.ToLower(fetch.arg(0)) {
		case "x-request-id":
			return f.read(sampleID), true
		case "host":
			return f.read(useHost), true
		}
	}
	return 0, false
}

// sampleUses are the fetches a join reads whatever their arguments.
var sampleUses = map[string]use{
	"src": useClient, "src_port": useClientPort, "dst": useServerAddr, "dst_port": useServerPort,
	"fe_name": {shapeToken, FieldListener, func(r *Record, v string, _ *matchState) { r.Listener = v }},
	"be_name": useBackend, "srv_name": useServer, "bc_dst": useServerIP, "bc_dst_port": useServerIPPort,
	"status": sampleStatus, "txn.status": sampleStatus,
	"hostname": useInstance, "method": useMethod, "path": useFirstURI, "pathq": useFirstURI, "url": useFirstURI,
}

var (
	// sampleStatus is the status of the response: "-" where HAProxy
	// answered itself before a response existed; %ST, where the format
	// has it too, wins.
	sampleStatus = use{shapeStatus, 0, func(r *Record, v string, _ *matchState) {
		if r.Status == 0 {
			r.Status, _ = parseStatus(v)
		}
	}}
	// sampleID is a request ID: a pinprobe ID wins over another the
	// format logs (unique-id beside the captured X-Request-Id).
	sampleID = use{shapeToken, FieldRequestID, func(r *Record, v string, _ *matchState) {
		if r.RequestID == "" || pinprobeID.MatchString(v) {
			r.RequestID = v
		}
	}}
)

// sampleDate sets f up for a date fetch: the integer it returns (in the
// unit its argument says), or the text a time converter writes.
// accept_date and request_date are when the request came; date is when
// the line was logged, its end.
func sampleDate(f *field, fetch sampleCall, convs []sampleCall) (*field, Field, string) {
	unit := fetch.arg(0)
	if fetch.name == "date" {
		unit = fetch.arg(1)
	}
	scale := map[string]int{"": 1, "s": 1, "ms": 1000, "us": 1000000}[unit]
	if scale == 0 {
		return f, 0, f.name + ": unit " + unit + " is not one of s, ms, us: its dates are skipped"
	}
	offset := f.name + ": a date with an offset is not when the request came: its dates are skipped"
	if fetch.name == "date" && fetch.arg(0) != "" && strings.Trim(fetch.arg(0), "0") != "" {
		return f, 0, offset
	}
	var tp timePart
	switch {
	case len(convs) == 0:
		digits := map[int]int{1: 0, 1000: 3, 1000000: 6}[scale]
		f.shape = shapeNumber
		tp = timePart{layout: layoutUnix, res: 1000 / scale, unixDigits: digits}
		if scale == 1000000 {
			tp.res = 1
		}
	case len(convs) == 1 && timeConverters[convs[0].name].scale != 0:
		c := convs[0]
		tc := timeConverters[c.name]
		if tc.scale != scale {
			units := map[int]string{1: "seconds", 1000: "milliseconds", 1000000: "microseconds"}
			return f, 0, f.name + ": " + c.name + " takes a date in " + units[tc.scale] + " and " + fetch.name + " gives " + units[scale] + ": its dates are skipped"
		}
		format := c.arg(0)
		if len(strings.Split(c.args, ",")) > 1 && strings.Trim(c.arg(1), "0") != "" {
			return f, 0, offset
		}
		if bad, ok := strftimeOK(format); !ok {
			return f, 0, f.name + ": pinprobe does not read " + bad + " in a date: its dates are skipped"
		}
		f.shape = strftimeShape(format)
		tp = timePart{layout: layoutStrftime, strf: format, res: 1000, noZone: !tc.utc}
		if strings.Contains(format, "N") || strings.Contains(format, "f") {
			tp.res = 1
		}
	default:
		names := make([]string, len(convs))
		for i, c := range convs {
			names[i] = c.name
		}
		return f, 0, f.name + ": pinprobe does not read a date converted by " + strings.Join(names, ",") + ": its dates are skipped"
	}
	end := fetch.name == "date"
	f.set = func(_ *Record, v string, st *matchState) {
		t := tp
		t.s = v
		if end {
			st.setEnd(t)
		} else {
			st.start = t
		}
	}
	return f, FieldTime, ""
}
