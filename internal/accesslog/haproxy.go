package accesslog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// HAProxy's predefined HTTP log formats: option httplog, and (2.5 and
// later) option httpslog.
const (
	HAProxyHTTPLog  = `%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r`
	haproxyHTTPSLog = HAProxyHTTPLog + ` %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc`
)

// haproxyVars are the variables of HAProxy's custom log format.
var haproxyVars = wordSet(haproxyVarsList)

var haproxyVarsList = `B CC CS H HM HP HPO HQ HU HV ID ST T Ta Tc Td Th Ti Tl Tq TR Tr Ts Tt Tu Tw U
ac b bc bi bp bq ci cp f fc fi fp ft hr hrl hs hsl lc ms pid r rc rt s sc si sp sq sslc sslv t tr trg trl ts tsc`

// pinprobeID matches a request ID pinprobe makes.
var pinprobeID = regexp.MustCompile(`^pinprobe-[0-9a-f]{8,64}-[0-9]+-[0-9]+$`)

// haproxyField is what a join reads of one HAProxy variable (haproxyUses);
// any other is a counter or a timer: a number, or -1.
func haproxyField(name string, quoted bool) (*field, Field) {
	f := &field{name: "%" + name, quoted: quoted}
	u, ok := haproxyUses[name]
	if !ok {
		u = use{shape: shapeNumber}
	}
	return f, f.read(u)
}

// haproxyUses are the HAProxy variables a join reads: where a request
// went, when it came and how long it took, what it was and how it ended.
// (%hr holds a request ID only where the configuration captures one: the
// join sees it in the records, not in the format.)
var haproxyUses = map[string]use{
	"ci": useClient, "cp": useClientPort, "fi": useServerAddr, "fp": useServerPort,
	"ft": haproxyFrontend, "f": haproxyFrontend,
	// %si is an address: "::1:8080" (HAProxy writes no brackets) splits
	// at the colon before the port.
	"b": useBackend, "s": useServer, "si": useServerIP, "sp": useServerIPPort, "H": useInstance,

	"tr": haproxyAccept, "t": haproxyAccept,
	"trg": haproxyCLF, "trl": haproxyCLF, "T": haproxyCLF, "Tl": haproxyCLF,
	"Ts": {shapeNumber, FieldTime, func(_ *Record, v string, st *matchState) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n < maxTime.Unix() {
			st.unixSec, st.hasUnix = n, true
		}
	}},
	"ms": {shapeNumber, 0, func(_ *Record, v string, st *matchState) {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 1000 {
			st.unixMS = n
		}
	}},
	"Ta": {shapeNumber, FieldDuration, func(_ *Record, v string, st *matchState) { st.durMS = v }},
	"Tt": {shapeNumber, FieldDuration, func(_ *Record, v string, st *matchState) {
		if st.durMS == "" {
			st.durMS = v
		}
	}},

	"ST": useStatus, "tsc": haproxyState, "ts": haproxyState,
	"hr": haproxyCaptured, "hrl": haproxyCaptured,
	"hs": useText, "hsl": useText, "CC": useText, "CS": useText, "sslc": useText, "sslv": useText, "HV": useText, "HQ": useText,
	"r": useRequest, "HM": useMethod, "HU": useFirstURI, "HP": useFirstURI, "HPO": useFirstURI,
	"ID": {shapeToken, FieldRequestID, func(r *Record, v string, _ *matchState) {
		if r.RequestID == "" {
			r.RequestID = v
		}
	}},
}

var (
	haproxyFrontend = use{shapeToken, FieldListener, func(r *Record, v string, _ *matchState) { r.Listener = strings.TrimSuffix(v, "~") }}
	haproxyAccept   = use{shapeToken, FieldTime, func(_ *Record, v string, st *matchState) {
		st.start = timePart{s: v, layout: layoutHAProxy, res: 1, noZone: true}
	}}
	haproxyCLF   = use{shapeText, FieldTime, func(_ *Record, v string, st *matchState) { st.start = timePart{s: v, layout: layoutCLF, res: 1000} }}
	haproxyState = use{shapeToken, FieldReason, func(r *Record, v string, _ *matchState) {
		if strings.Trim(v, "-") != "" {
			r.Reason = v
		}
	}}
	haproxyCaptured = use{shapeText, 0, func(r *Record, v string, _ *matchState) {
		for _, c := range strings.FieldsFunc(strings.Trim(v, "{}"), func(c rune) bool { return c == '|' || c == ' ' }) {
			if pinprobeID.MatchString(c) {
				r.RequestID = c
				break
			}
		}
	}}
)

// compileHAProxy compiles a HAProxy log-format string, as written in the
// configuration (spaces escaped with a backslash, or the whole string in
// double quotes). It refuses a variable HAProxy does not have, naming it
// and the nearest one it has.
func compileHAProxy(format string) (*pattern, error) {
	format = strings.TrimSpace(format)
	if rest, ok := strings.CutPrefix(format, "log-format"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		format = strings.TrimSpace(rest)
	}
	if len(format) >= 2 && format[0] == '"' && format[len(format)-1] == '"' {
		format = format[1 : len(format)-1]
	}
	p := &pattern{}
	var lit strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '\\' && i+1 < len(format):
			i++
			lit.WriteByte(format[i])
			continue
		case c != '%':
			lit.WriteByte(c)
			continue
		case i+1 < len(format) && format[i+1] == '%':
			i++
			lit.WriteByte('%')
			continue
		}
		j := i + 1
		quoted := false
		if j < len(format) && format[j] == '{' {
			end := strings.IndexByte(format[j:], '}')
			if end < 0 {
				return nil, fmt.Errorf("--log-format: %%{ at byte %d is not closed by }", i+1)
			}
			for _, fl := range strings.Split(format[j+1:j+end], ",") {
				if fl == "+Q" {
					quoted = true
				}
			}
			j += end + 1
		}
		var f *field
		var logged Field
		var note string
		switch {
		case j < len(format) && format[j] == '[':
			end := sampleEnd(format[j+1:])
			if end < 0 {
				return nil, fmt.Errorf("--log-format: %%[ at byte %d is not closed by ]", i+1)
			}
			f, logged, note = haproxySample(unquote(format[j+1:j+1+end], true), quoted)
			i = j + 1 + end
		default:
			k := j
			for k < len(format) && (format[k] >= 'a' && format[k] <= 'z' || format[k] >= 'A' && format[k] <= 'Z') {
				k++
			}
			name := format[j:k]
			if name == "" {
				return nil, fmt.Errorf("--log-format: %% at byte %d names no variable (a literal %% is written %%%%)", i+1)
			}
			if !haproxyVars[name] {
				return nil, unknownVar("%"+name, nearest("%"+name, sortedNames(haproxyVars, "%")), "haproxy")
			}
			f, logged = haproxyField(name, quoted)
			i = k - 1
			if (name == "hr" || name == "hs" || name == "hrl" || name == "hsl") && strings.HasSuffix(lit.String(), " ") {
				// HAProxy writes nothing, and no space, where no header
				// was captured.
				s := lit.String()
				lit.Reset()
				lit.WriteString(s[:len(s)-1])
				f.optLead = " "
			}
		}
		p.literal(&lit)
		p.add("", f, logged, note)
	}
	p.literal(&lit)
	return p, p.placeable(fmt.Sprintf(" %q: names no variable", format), "%tr, %t, %trg, %Ts, or %[date…] or %[accept_date…] that pinprobe reads",
		hasField(p, "%ci", "%[src]"), "no client address (%ci or %[src])")
}

// syslogHeader parts a syslog line into its header's host (if it names
// one) and the message: "<134>Dec  1 16:40:21 gw1 haproxy[7]: MSG", RFC
// 5424's "<134>1 2026-12-01T16:40:21Z gw1 haproxy 7 - - MSG", or an ISO
// time first, as rsyslog writes files. ok is false when line has no such
// header.
func syslogHeader(line string) (host, msg string, ok bool) {
	s := line
	if strings.HasPrefix(s, "<") {
		end := strings.IndexByte(s, '>')
		if end < 2 || end > 4 {
			return "", "", false
		}
		s = s[end+1:]
	}
	if rest, ok := strings.CutPrefix(s, "1 "); ok {
		f := strings.SplitN(rest, " ", 7)
		if len(f) < 7 {
			return "", "", false
		}
		sd := f[5]
		if sd != "-" {
			// Structured data: [...] blocks; keep it simple and refuse.
			return "", "", false
		}
		return dash(f[1]), f[6], true
	}
	i := strings.Index(s, ": ")
	if i < 0 || i > 128 {
		return "", "", false
	}
	head := strings.Fields(s[:i])
	switch {
	case len(head) >= 4 && len(head[0]) == 3: // Dec  1 16:40:21 [host] tag
		if len(head) >= 5 {
			host = head[3]
		}
	case len(head) >= 2 && strings.Contains(head[0], "T"): // 2026-12-01T16:40:21+00:00 [host] tag
		if len(head) >= 3 {
			host = head[1]
		}
	case len(head) == 1: // tag alone
	default:
		return "", "", false
	}
	return host, s[i+2:], true
}
