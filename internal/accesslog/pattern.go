package accesslog

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// A pattern is a log format compiled: literals and fields in the order a
// line has them. A line matches when every literal is where the format
// puts it and every field's value has its shape; where a literal also
// occurs inside a value (a space in $time_local) the matcher tries the
// next occurrence, within a budget of steps a line, so no line costs more
// than a bounded amount of work.
type pattern struct {
	parts  []part
	fields int   // how many parts are fields
	logged Field // what the format logs
	// prefix lets a line go on past the format, after a space.
	prefix bool
	// keyed says the parts are the keys of a JSON object (an Envoy
	// json_format), each part's lit its key: see envoyJSONLine.
	keyed bool
	// notes say what of the format is not read (a sample fetch pinprobe
	// does not know), in one line each.
	notes []string
}

// literal ends the literal text of a format read so far, lit, as a part.
func (p *pattern) literal(lit *strings.Builder) {
	if lit.Len() > 0 {
		p.parts = append(p.parts, part{lit: lit.String()})
		lit.Reset()
	}
}

// add appends field f (under key, for a keyed pattern), what it logs
// and its note.
func (p *pattern) add(key string, f *field, logged Field, note string) {
	p.parts = append(p.parts, part{lit: key, field: f})
	p.fields++
	p.logged |= logged
	p.note(note)
}

// maxNotes bounds the notes a format's compilation keeps.
const maxNotes = 8

// note keeps a note of what the format does not read, up to maxNotes.
func (p *pattern) note(n string) {
	if n != "" && len(p.notes) < maxNotes {
		p.notes = append(p.notes, n)
	}
}

// placeable refuses a compiled format a join cannot place: it names no
// variable (none says so), logs no time (times names the variables that
// would), or cannot tell its client's lines from others' (clients false;
// what it lacks).
func (p *pattern) placeable(none, times string, clients bool, lacks string) error {
	switch {
	case p.fields == 0:
		return errors.New("--log-format" + none)
	case p.logged&FieldTime == 0:
		return fmt.Errorf("--log-format: logs no time (%s)%s: its lines cannot be placed in the run", times, notesSaid(p.notes))
	case !clients:
		return fmt.Errorf("--log-format: logs %s: its lines cannot be told from other clients'", lacks)
	}
	return nil
}

// hasField reports whether p has a field of one of names.
func hasField(p *pattern, names ...string) bool {
	for _, pt := range p.parts {
		if pt.field != nil {
			for _, n := range names {
				if pt.field.name == n {
					return true
				}
			}
		}
	}
	return false
}

// notesSaid is the first note, after a semicolon, for an error that they
// may explain; "" when none.
func notesSaid(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "; " + notes[0]
}

// part is a literal (field == nil) or a field.
type part struct {
	lit   string
	field *field
}

// field is one variable of a format.
type field struct {
	name   string // as the format wrote it: "$remote_addr", "%ci"
	shape  shape
	quoted bool // the variable writes its own double quotes (HAProxy's %{+Q})
	// optLead, when set, is what comes before the field in the format
	// (HAProxy's space before %hr): the field and it are both absent
	// from a line where the field has no value (no header captured).
	optLead string
	// set stores a matched value, "" for the log's "-".
	set func(r *Record, v string, st *matchState)
}

// use is what a format's variable is read as: the shape of its values,
// what it logs, and where its value goes. The gateways' tables map their
// variables to uses; those several of them share are written once here.
type use struct {
	shape  shape
	logged Field
	set    func(r *Record, v string, st *matchState)
}

// read sets f up to read u; it returns what u logs.
func (f *field) read(u use) Field {
	f.shape, f.set = u.shape, u.set
	return u.logged
}

var (
	useClient = use{shapeAddr, 0, func(r *Record, v string, _ *matchState) {
		if a, ok := parseAddr(v); ok {
			r.Client = a
		}
	}}
	useClientPort   = use{shapePort, FieldClientPort, func(r *Record, v string, _ *matchState) { r.ClientPort, _ = parsePort(v) }}
	useServerAddr   = use{shapeAddr, FieldListener, func(_ *Record, v string, st *matchState) { st.serverAddr = v }}
	useServerPort   = use{shapePort, FieldListener, func(_ *Record, v string, st *matchState) { st.serverPortS = v }}
	useBackend      = use{shapeToken, FieldBackend, func(_ *Record, v string, st *matchState) { st.beName = v }}
	useServer       = use{shapeToken, FieldBackend, func(_ *Record, v string, st *matchState) { st.srvName = v }}
	useServerIP     = use{shapeAddr, FieldBackend, func(_ *Record, v string, st *matchState) { st.srvIP = v }}
	useServerIPPort = use{shapePort, 0, func(_ *Record, v string, st *matchState) { st.srvPort = v }}
	useStatus       = use{shapeStatus, 0, func(r *Record, v string, _ *matchState) { r.Status, _ = parseStatus(v) }}
	useRequest      = use{shapeText, 0, func(r *Record, v string, _ *matchState) {
		if m, u := requestLine(v); m != "" {
			r.Method, r.URI = m, u
		}
	}}
	useMethod = use{shapeToken, 0, func(r *Record, v string, _ *matchState) { r.Method = v }}
	useURI    = use{shapeToken, 0, func(r *Record, v string, _ *matchState) { r.URI = v }}
	// useFirstURI keeps the first of the formats' URIs.
	useFirstURI = use{shapeToken, 0, func(r *Record, v string, _ *matchState) {
		if r.URI == "" {
			r.URI = v
		}
	}}
	useHost      = use{shapeToken, 0, func(r *Record, v string, _ *matchState) { r.Host = v }}
	useRequestID = use{shapeToken, FieldRequestID, func(r *Record, v string, _ *matchState) { r.RequestID = v }}
	useInstance  = use{shapeToken, FieldInstance, func(r *Record, v string, _ *matchState) { r.Instance = v }}
	useText      = use{shape: shapeText}
)

// shape is what a field's value may look like.
type shape int

const (
	shapeText   shape = iota // anything
	shapeToken               // no space
	shapeAddr                // an IP address
	shapePort                // a port number
	shapeStatus              // an HTTP status
	shapeNumber              // a number: digits, a sign, a point
)

// matchBudget bounds the steps one line may cost the matcher.
const matchBudget = 4096

// matchState carries what the setters of one line share: time parts that
// come in several fields (HAProxy's %Ts and %ms), and a client address
// that a later field overrides (nginx's $realip_remote_addr).
type matchState struct {
	end, start  timePart
	unixSec     int64
	unixMS      int
	hasUnix     bool
	proxyAddr   string
	proxyPort   string
	realAddr    string
	realPort    string
	statuses    string
	tries       string
	requestTime string
	durMS       string // HAProxy's %Ta, Envoy's %DURATION%: milliseconds
	serverAddr  string
	serverPortS string
	serverName  string
	beName      string
	srvName     string
	srvIP       string
	srvPort     string
	// Envoy's: the upstream host and cluster, the client appended to
	// X-Forwarded-For.
	upHost, upCluster, xff string
}

// setEnd keeps the finest of the end times a format logs ($msec beside
// $time_local).
func (st *matchState) setEnd(t timePart) {
	if st.end.s == "" || t.res < st.end.res {
		st.end = t
	}
}

// timePart is one time a format logs.
type timePart struct {
	s      string
	layout string
	res    int // resolution, in milliseconds
	noZone bool
	// strf is the strftime format of layoutStrftime.
	strf string
	// unixDigits, for layoutUnix, are the digits of a fraction the value
	// holds without its point (HAProxy's date(0,ms): 3).
	unixDigits int
}

// read parses the time: when, its resolution, and whether it was written
// without a zone.
func (tp timePart) read() (t time.Time, res time.Duration, noZone, ok bool) {
	switch {
	case tp.layout == layoutStrftime:
		return parseStrftime(tp.s, tp.strf, !tp.noZone)
	case tp.unixDigits > 0:
		s := tp.s
		if len(s) <= tp.unixDigits || len(s) > 20 {
			return time.Time{}, 0, false, false
		}
		tp.s = s[:len(s)-tp.unixDigits] + "." + s[len(s)-tp.unixDigits:]
	}
	t, ok = parseTime(tp.s, tp.layout)
	res = time.Duration(tp.res) * time.Millisecond
	if res == 0 {
		res = time.Microsecond
	}
	return t, res, tp.noZone, ok
}

// match matches line against p, filling r. It reports whether the line
// matched.
func (p *pattern) match(line string, r *Record) bool {
	m := matcher{p: p, line: line, vals: make([]string, len(p.parts))}
	if !m.at(0, 0) {
		return false
	}
	st := &matchState{}
	for i, pt := range p.parts {
		if pt.field != nil && pt.field.set != nil {
			pt.field.set(r, dash(m.vals[i]), st)
		}
	}
	return st.finish(r)
}

type matcher struct {
	p     *pattern
	line  string
	vals  []string
	steps int
	// far is the furthest the match got: the part it tried last, at the
	// byte farPos of line (see leaves); diag counts a field as matched as
	// far as a value of its shape goes, even where what follows fails.
	far, farPos int
	diag        bool
}

// leaves says where line leaves p, as far as the matcher got: the byte of
// line and the index of the part of p there (len(p.parts) when every part
// matched, and a value, such as the time, did not parse after all).
func (p *pattern) leaves(line string) (pos, part int) {
	m := matcher{p: p, line: line, vals: make([]string, len(p.parts)), diag: true}
	if m.at(0, 0) {
		return len(line), len(p.parts)
	}
	return m.farPos, m.far
}

// at reports whether parts[i:] match line[pos:], recording field values.
func (m *matcher) at(i, pos int) bool {
	m.steps++
	if m.steps > matchBudget {
		return false
	}
	if i > m.far || i == m.far && pos > m.farPos {
		m.far, m.farPos = i, pos
	}
	parts := m.p.parts
	if i == len(parts) {
		// A predefined format may be followed by more fields, which a
		// configuration appends to it (combined and "$request_time").
		return pos == len(m.line) || m.p.prefix && m.line[pos] == ' '
	}
	pt := parts[i]
	if pt.field == nil {
		return strings.HasPrefix(m.line[pos:], pt.lit) && m.at(i+1, pos+len(pt.lit))
	}
	f := pt.field
	rest := m.line[pos:]
	if f.optLead != "" {
		return m.optional(i, pos, f)
	}
	if f.quoted {
		return m.quoted(i, pos, f)
	}
	if m.diag {
		m.reach(i, pos)
	}
	if i+1 == len(parts) {
		m.vals[i] = rest
		return f.shape.fits(rest)
	}
	// A value of a bounded shape is short, and a token ends at a space:
	// no longer value can fit, so none is tried (a line of 64 KiB of
	// colons costs no more than a short one).
	limit := f.shape.maxLen()
	if f.shape == shapeToken {
		if sp := strings.IndexAny(rest, " \t"); sp >= 0 && (limit < 0 || sp < limit) {
			limit = sp
		}
	}
	if parts[i+1].field != nil {
		return m.split(i, pos, f, limit)
	}
	return m.untilLiteral(i, pos, f, limit)
}

// optional matches field i at pos: captured headers in braces, or
// nothing (the braces go to the first such field: %hr before %hs).
func (m *matcher) optional(i, pos int, f *field) bool {
	rest := m.line[pos:]
	if strings.HasPrefix(rest, f.optLead+"{") {
		if end := strings.IndexByte(rest, '}'); end >= 0 {
			m.vals[i] = rest[len(f.optLead) : end+1]
			if m.at(i+1, pos+end+1) {
				return true
			}
		}
	}
	m.vals[i] = ""
	return m.at(i+1, pos)
}

// quoted matches quoted field i at pos: in quotes, or "-".
func (m *matcher) quoted(i, pos int, f *field) bool {
	rest := m.line[pos:]
	if !strings.HasPrefix(rest, `"`) {
		if !strings.HasPrefix(rest, "-") {
			return false
		}
		m.vals[i] = "-"
		return m.at(i+1, pos+1)
	}
	end := closingQuote(rest)
	if end < 0 {
		return false
	}
	m.vals[i] = unquote(rest[1:end], false)
	return m.at(i+1, pos+end+1)
}

// split matches field i at pos, followed by another field with nothing
// between them: every split of at most limit bytes (-1: any) is tried.
func (m *matcher) split(i, pos int, f *field, limit int) bool {
	rest := m.line[pos:]
	for k := 0; k <= len(rest) && (limit < 0 || k <= limit); k++ {
		if v := rest[:k]; f.shape.fits(v) {
			m.vals[i] = v
			if m.at(i+1, pos+k) {
				return true
			}
		}
		if m.steps > matchBudget {
			return false
		}
	}
	return false
}

// untilLiteral matches field i at pos, followed by a literal: the value
// ends where the literal comes (not at an escaped quote), at most limit
// bytes in (-1: anywhere), at each place it could until one matches.
func (m *matcher) untilLiteral(i, pos int, f *field, limit int) bool {
	rest := m.line[pos:]
	next := m.p.parts[i+1]
	for k := 0; k <= len(rest); {
		j := strings.Index(rest[k:], next.lit)
		if j < 0 {
			return false
		}
		k += j
		if limit >= 0 && k > limit {
			return false
		}
		v := rest[:k]
		if next.lit[0] == '"' && k > 0 && rest[k-1] == '\\' {
			// An escaped quote inside the value: not its end.
			k++
			continue
		}
		if !f.shape.fits(v) {
			if f.shape != shapeText && strings.ContainsRune(v, ' ') {
				return false // a longer value cannot fit either
			}
		} else {
			m.vals[i] = v
			if m.at(i+1, pos+k) {
				return true
			}
		}
		if m.steps > matchBudget {
			return false
		}
		k++
	}
	return false
}

// reach counts the field parts[i], at byte pos, as matched by the longest
// value of its shape there, for leaves: "127.0.0.1:50158 [" read with
// "$remote_addr - " leaves the format after 127.0.0.1, where it has " - ".
// A field of any text has no such value.
func (m *matcher) reach(i, pos int) {
	f := m.p.parts[i].field
	rest := m.line[pos:]
	n := f.shape.maxLen()
	switch {
	case f.shape == shapeToken:
		n = strings.IndexAny(rest, " \t")
		if n < 0 {
			n = len(rest)
		}
	case n < 0:
		return
	}
	for k := min(n, len(rest)); k > 0; k-- {
		// A value is read trimmed; one that ends in a space is not what
		// the line has there.
		if v := rest[:k]; strings.TrimSpace(v) == v && f.shape.fits(v) {
			if i+1 > m.far || i+1 == m.far && pos+k > m.farPos {
				m.far, m.farPos = i+1, pos+k
			}
			return
		}
	}
}

// maxLen is the longest value of the shape; -1 when unbounded.
func (s shape) maxLen() int {
	switch s {
	case shapeAddr:
		return 64 // an IPv6 address with a zone, in brackets
	case shapePort:
		return 5
	case shapeStatus:
		return 3
	case shapeNumber:
		return 40
	}
	return -1
}

// fits reports whether v may be a value of the shape ("-" always is).
func (s shape) fits(v string) bool {
	if v == "-" {
		return true
	}
	switch s {
	case shapeToken:
		return v != "" && !strings.ContainsAny(v, " \t")
	case shapeAddr:
		_, ok := parseAddr(v)
		return ok
	case shapePort:
		_, ok := parsePort(v)
		return ok
	case shapeStatus:
		if v == "-1" || v == "0" || v == "000" {
			return true
		}
		_, ok := parseStatus(v)
		return ok
	case shapeNumber:
		if v == "" {
			return false
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+') {
				return false
			}
		}
	}
	return true
}

// closingQuote is the index of the quote that ends s, which starts with
// one (double or single), past backslash escapes; -1 when there is none.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case s[0]:
			return i
		}
	}
	return -1
}

// unquote undoes the backslash escapes of a logged value (\" and \\),
// or of every character (all: a HAProxy configuration's "\ ").
func unquote(s string, all bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (all || s[i+1] == '"' || s[i+1] == '\\') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// finish sets what the fields of a line give together: its time, the
// client as the gateway took it, the listener, the backends tried.
func (st *matchState) finish(r *Record) bool {
	if st.proxyAddr != "" {
		st.realAddr, st.realPort = st.proxyAddr, st.proxyPort
	}
	if st.realAddr == "" && st.xff != "" {
		st.realAddr = st.xff
	}
	if st.realAddr != "" {
		if a, ok := parseAddr(st.realAddr); ok {
			r.Client = a
			r.ClientPort = 0
		}
		if p, ok := parsePort(st.realPort); ok {
			r.ClientPort = p
		}
	}
	r.Duration = -1
	if st.requestTime != "" {
		if d, ok := seconds(st.requestTime); ok {
			r.Duration = d
		}
	}
	if st.durMS != "" {
		if d, ok := whole(st.durMS, time.Millisecond); ok {
			r.Duration = d
		}
	}
	switch {
	case st.start.s != "":
		t, res, noZone, ok := st.start.read()
		if !ok {
			return false
		}
		r.Time, r.Resolution, r.NoZone = t, res, noZone
	case st.hasUnix:
		r.Time, r.Resolution = time.Unix(st.unixSec, int64(st.unixMS)*int64(time.Millisecond)).UTC(), time.Millisecond
	case st.end.s != "":
		t, res, noZone, ok := st.end.read()
		if !ok {
			return false
		}
		r.Resolution, r.NoZone = res, noZone
		r.ended(t)
	}
	if st.serverAddr != "" || st.serverPortS != "" {
		a, okA := parseAddr(st.serverAddr)
		p, okP := parsePort(st.serverPortS)
		switch {
		case okA && okP:
			r.Server = netip.AddrPortFrom(a, p)
		case okP:
			r.ServerPort = p
		}
	}
	if r.Server.IsValid() {
		r.ServerPort = r.Server.Port()
	}
	if r.Listener == "" {
		switch {
		case r.Server.IsValid():
			r.Listener = r.Server.String()
		case r.ServerPort != 0 && st.serverName != "":
			r.Listener = st.serverName + ":" + strconv.Itoa(int(r.ServerPort))
		case r.ServerPort != 0:
			r.Listener = ":" + strconv.Itoa(int(r.ServerPort))
		case st.serverName != "":
			r.Listener = st.serverName
		}
	}
	if st.tries != "" {
		r.Tries = upstreamTries(st.tries, st.statuses)
	}
	if st.upHost != "" || st.upCluster != "" {
		if t, ok := envoyUpstream(st); ok {
			r.Tries = []Try{t}
		}
	}
	if st.beName != "" || st.srvName != "" || st.srvIP != "" {
		if t, ok := haproxyServer(st); ok {
			r.Tries = []Try{t}
		}
	}
	return true
}

// haproxyServer is the server a HAProxy line names: backend/server, with
// its address and port when the format logs them; none for "<NOSRV>" (no
// server was chosen: HAProxy answered itself).
func haproxyServer(st *matchState) (Try, bool) {
	t := Try{Backend: st.beName}
	switch {
	case st.srvName == "<NOSRV>" || st.srvName == "":
		if a, ok := parseAddr(st.srvIP); ok {
			p, _ := parsePort(st.srvPort)
			t.Addr = netip.AddrPortFrom(a, p)
			t.Backend = t.Addr.String()
			return t, true
		}
		return Try{}, false
	case st.beName != "":
		t.Backend = st.beName + "/" + st.srvName
	default:
		t.Backend = st.srvName
	}
	if a, ok := parseAddr(st.srvIP); ok {
		if p, ok := parsePort(st.srvPort); ok {
			t.Addr = netip.AddrPortFrom(a, p)
		}
	}
	return t, true
}

// upstreamTries pairs nginx's $upstream_addr with $upstream_status: both
// list every upstream tried, ", " between the servers of one upstream
// group and " : " between groups (after an internal redirect).
func upstreamTries(addrs, statuses string) []Try {
	split := func(s string) []string {
		var out []string
		for _, group := range strings.Split(s, " : ") {
			for _, a := range strings.Split(group, ", ") {
				out = append(out, strings.TrimSpace(a))
			}
		}
		return out
	}
	as, ss := split(addrs), split(statuses)
	var out []Try
	for i, a := range as {
		if a == "" || a == "-" {
			continue
		}
		t := Try{Backend: a}
		t.Addr, _ = parseAddrPort(a)
		if i < len(ss) && ss[i] != "-" {
			t.Status = ss[i]
		}
		out = append(out, t)
	}
	return out
}
