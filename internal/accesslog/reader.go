package accesslog

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxLine is the longest line (or CSV or JSON record) a Reader reads;
// longer ones are skipped and counted, never held.
const MaxLine = 64 << 10

// detectLines is how many lines of a log Open reads to tell its format.
const detectLines = 100

// maxSkippedAt is how many line numbers of lines that did not parse
// Stats keeps.
const maxSkippedAt = 5

// Options say what Open reads.
type Options struct {
	// Kind is the log's kind; "" detects it from the first lines.
	Kind Kind
	// Format is a custom format: an nginx log_format string, a HAProxy
	// log-format string, or an Envoy text_format or json_format. Its kind
	// is Kind, else told by its variables ($name for nginx, %name and
	// %[fetch] for HAProxy, %NAME% for Envoy: see percentKind).
	Format string
	// Vars are variables of the nginx configuration's own (map, set)
	// that Format may name.
	Vars []string
	// MaxLine bounds a line; 0 means MaxLine.
	MaxLine int
}

// Stats count what a Reader read.
type Stats struct {
	Lines   int64 // lines read (JSON: records)
	Records int64 // requests parsed
	Skipped int64 // lines that did not parse as the format
	TooLong int64 // lines longer than MaxLine, skipped
	// Other counts the records of a gateway's other logs (an Azure
	// firewall or performance record in the same table).
	Other int64
	// SkippedAt are the numbers of the first lines that did not parse.
	SkippedAt []int64
	// Unmatched says where the first line that did not parse as a custom
	// format (Options.Format) leaves it; nil when every line parsed, or
	// the format is one pinprobe knows.
	Unmatched *Unmatched
	// Err is what ended the reading before the end of the file (a
	// truncated gzip stream); nil when it was read whole.
	Err error
}

// Unmatched is where a line leaves the custom format it did not parse as.
type Unmatched struct {
	Line int64 // its number
	// Column is the character of the line (from 1) where it leaves the
	// format; FormatHas is what the format has there, a literal (" - "),
	// a variable ("$status"), or a variable of any text and the literal
	// after it that the rest of the line lacks ("$body_bytes_sent up="),
	// and LineHas the line from there, at most 24 characters ("" at its
	// end). FormatHas is "" where the format ends and the line goes on,
	// and where the line follows the format to its end but a value in it
	// (a time) did not parse (LineHas "" too).
	Column    int
	FormatHas string
	LineHas   string
	// ReadsAs is the format pinprobe knows that the line reads as ("nginx
	// combined"), "" when none.
	ReadsAs string
}

// unmatchedShown bounds Unmatched.LineHas, in characters.
const unmatchedShown = 24

// shown is the start of s an Unmatched shows.
func shown(s string) string {
	rest := []rune(s)
	return string(rest[:min(len(rest), unmatchedShown)])
}

// unmatched says where line (number n) leaves p, and which format it
// reads as; a HAProxy line's syslog header is passed over when the rest
// gets further.
func unmatched(p *pattern, line string, n int64, syslog bool) *Unmatched {
	pos, part := p.leaves(line)
	if syslog {
		if _, msg, ok := syslogHeader(line); ok {
			if mpos, mpart := p.leaves(msg); mpart > part {
				pos, part = len(line)-len(msg)+mpos, mpart
			}
		}
	}
	u := &Unmatched{Line: n, Column: utf8.RuneCountInString(line[:pos]) + 1}
	if part < len(p.parts) {
		f := p.parts[part].field
		switch {
		case f == nil:
			u.FormatHas = p.parts[part].lit
		case f.shape == shapeText && !f.quoted && part+1 < len(p.parts) && p.parts[part+1].field == nil &&
			!strings.Contains(line[pos:], p.parts[part+1].lit):
			// Any text fits the variable: what fails is the literal
			// after it, nowhere in the rest of the line.
			u.FormatHas = f.name + p.parts[part+1].lit
		default:
			u.FormatHas = f.name
		}
	}
	u.LineHas = shown(line[pos:])
	for _, f := range lineFormats {
		var rec Record
		if f.parse(line, &rec) {
			u.ReadsAs = f.name
			break
		}
	}
	return u
}

// Reader reads the Records of one access log.
type Reader struct {
	kind   Kind
	format string // what it reads, in words: "nginx combined", "Azure AGWAccessLogs (CSV)"
	logged Field
	notes  []string
	gz     bool
	enc    string // the encoding decoded: "UTF-16LE", "UTF-16BE"; "" for UTF-8
	azure  string // an Azure log's shape (azureShape), once known
	st     Stats
	max    int

	src   *bufio.Reader
	ahead []aheadLine // lines read to detect the format, given back first
	line  int64       // the number of the last line read
	buf   []byte      // readLine's, reused

	next func(*Record) error
	// partial says why the log may lack requests the gateway served (a
	// sampled log); "" when it holds every one.
	partial string
	// cannot says what the format cannot tell; nil when nothing beyond
	// the fields it lacks.
	cannot func() []string
	// unmatched, for a custom format, says where a line leaves it.
	unmatched func(line string, n int64) *Unmatched
}

// aheadLine is a line read ahead, and its number.
type aheadLine struct {
	b []byte
	n int64
}

// ErrFormat is returned by Open for a log in no format it knows.
var ErrFormat = errors.New("no known access-log format")

var errTooLong = errors.New("line too long")

// Open starts reading the access log r (plain or gzip-compressed) as o
// says. It refuses a custom format that does not compile, and a log whose
// first lines are in no known format (ErrFormat), naming what it tried.
func Open(r io.Reader, o Options) (*Reader, error) {
	lr := &Reader{max: o.MaxLine}
	if lr.max <= 0 {
		lr.max = MaxLine
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		lr.gz = true
		br = bufio.NewReaderSize(gz, 64<<10)
	}
	lr.src, lr.enc = decodeText(br)
	kind := o.Kind
	if o.Format != "" {
		var p *pattern
		var err error
		if kind == "" {
			if kind, err = formatKind(o.Format); err != nil {
				return nil, err
			}
		}
		switch kind {
		case Nginx:
			p, err = compileNginx(o.Format, o.Vars)
			lr.format = "nginx log_format"
		case HAProxy:
			p, err = compileHAProxy(o.Format)
			lr.format = "HAProxy log-format"
		case Envoy:
			p, err = compileEnvoy(o.Format)
			lr.format = "Envoy format"
		case "":
			return nil, errors.New("--log-format: names neither nginx variables ($remote_addr) nor HAProxy's (%ci) nor Envoy operators (%START_TIME%): say which with --log-type nginx, haproxy or envoy")
		default:
			return nil, fmt.Errorf("--log-format is for nginx, HAProxy and Envoy logs; %s logs have a format of their own", kind)
		}
		if err != nil {
			return nil, otherPercentKind(err, o.Format, kind)
		}
		lr.kind, lr.logged, lr.notes = kind, p.logged, p.notes
		if p.keyed {
			lr.format = "Envoy json_format"
			lr.linesOf(func(line string, rec *Record) bool { return envoyJSONLine(p, line, rec) })
			lr.unmatched = func(line string, n int64) *Unmatched { return envoyJSONUnmatched(p, line, n) }
			return lr, nil
		}
		lr.linesOf(func(line string, rec *Record) bool { return matchLine(p, line, rec, kind == HAProxy) })
		lr.unmatched = func(line string, n int64) *Unmatched { return unmatched(p, line, n, kind == HAProxy) }
		return lr, nil
	}
	if err := lr.detect(kind); err != nil {
		return nil, err
	}
	return lr, nil
}

// CheckFormat compiles a custom format as Open would, without a log: the
// error Open would return for it, nil when it compiles.
func CheckFormat(o Options) error {
	if o.Format == "" {
		return nil
	}
	_, err := Open(strings.NewReader(""), o)
	return err
}

// formatKind tells a custom format's kind by its variables: nginx's
// $name, or a % format (percentKind).
func formatKind(f string) (Kind, error) {
	n := strings.Count(f, "$") - strings.Count(f, `\$`)
	h := strings.Count(f, "%") - strings.Count(f, "%%")*2
	switch {
	case n > 0 && h == 0:
		return Nginx, nil
	case h > 0 && n == 0:
		return percentKind(f)
	case strings.Contains(f, "$remote_addr") || strings.Contains(f, "$time_"):
		return Nginx, nil
	case h > 0:
		return percentKind(f)
	}
	return "", nil
}

// Kind is the log's kind.
func (r *Reader) Kind() Kind { return r.kind }

// Format says which format it reads, in words; an Azure log's names the
// columns the join reads that none of its records held, in the log's own
// names ("Azure AGWAccessLogs (JSON; without ServerRouted, ServerStatus)").
func (r *Reader) Format() string {
	if r.azure != "" && r.st.Records > 0 {
		if lacks := azureLacks(r.azure, r.logged); lacks != "" {
			return strings.TrimSuffix(r.format, ")") + "; without " + lacks + ")"
		}
	}
	return r.format
}

// Notes say what of a custom format is not read (a sample fetch or an
// operator pinprobe does not know), one line each; nil when all is read.
func (r *Reader) Notes() []string { return r.notes }

// Gzip reports whether the log was gzip-compressed.
func (r *Reader) Gzip() bool { return r.gz }

// Encoding names the encoding the log was decoded from ("UTF-16LE",
// "UTF-16BE"); "" for UTF-8, with or without a byte-order mark.
func (r *Reader) Encoding() string { return r.enc }

// Logged is what the format logs of what a join reads.
func (r *Reader) Logged() Field { return r.logged }

// Partial says why the log may hold only some of the requests the
// gateway served (Google Cloud samples its logs); "" when it holds every
// one: a request it lacks then is one the gateway did not log.
func (r *Reader) Partial() string { return r.partial }

// Cannot says what the format cannot tell beyond the fields it lacks
// (Logged): "the instance that answered: …"; known once the log is read.
func (r *Reader) Cannot() []string {
	if r.cannot == nil {
		return nil
	}
	return r.cannot()
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats { return r.st }

// Next reads the next request into rec, which it resets first; io.EOF
// at the end of the log (or where a truncated gzip stream ends: see
// Stats.Err). Lines that do not parse are counted and skipped.
func (r *Reader) Next(rec *Record) error { return r.next(rec) }

// lineFormats are the line formats detect tries, in order.
var lineFormats = []struct {
	kind   Kind
	name   string
	logged Field
	parse  func(line string, rec *Record) bool
}{
	// Traefik's common format first: nginx combined reads its lines too,
	// as a prefix.
	{Traefik, "Traefik common", traefikLogged, parseTraefikCLF},
	{Nginx, "nginx combined", nginxCombined.logged, func(l string, rec *Record) bool { return matchLine(nginxCombined, l, rec, false) }},
	{HAProxy, "HAProxy httplog", haproxyDefault.logged, parseHAProxyDefault},
	{ALB, "AWS ALB", FieldTime | FieldClientPort | FieldBackend | FieldBackendStatus | FieldListener | FieldDuration | FieldReason, parseALB},
	{Envoy, "Envoy default", envoyDefault.logged, func(l string, rec *Record) bool { return envoyDefault.match(l, rec) }},
	{Envoy, "Istio (Envoy)", envoyIstio.logged, func(l string, rec *Record) bool { return envoyIstio.match(l, rec) }},
}

var (
	nginxCombined  = prefixed(mustPattern(compileNginx(NginxCombined, nil)))
	haproxyDefault = mustPattern(compileHAProxy(HAProxyHTTPLog))
	haproxyHTTPS   = mustPattern(compileHAProxy(haproxyHTTPSLog))
	envoyDefault   = mustPattern(compileEnvoy(EnvoyDefault))
	envoyIstio     = mustPattern(compileEnvoy(EnvoyIstio))
)

func prefixed(p *pattern) *pattern { p.prefix = true; return p }

func mustPattern(p *pattern, err error) *pattern {
	if err != nil {
		panic(err)
	}
	return p
}

func parseHAProxyDefault(line string, rec *Record) bool {
	return matchLine(haproxyDefault, line, rec, true) || matchLine(haproxyHTTPS, line, rec, true)
}

// matchLine matches one line; a HAProxy line may come with a syslog
// header, whose host names the instance.
func matchLine(p *pattern, line string, rec *Record, syslog bool) bool {
	if p.match(line, rec) {
		return true
	}
	if !syslog {
		return false
	}
	host, msg, ok := syslogHeader(line)
	if !ok {
		return false
	}
	*rec = Record{Line: rec.Line}
	if !p.match(msg, rec) {
		return false
	}
	if rec.Instance == "" {
		rec.Instance = host
	}
	return true
}

// detect tells the log's format from its first bytes and lines (within
// kind, when it is given) and sets the reader up for it.
func (r *Reader) detect(kind Kind) error {
	head, _ := r.src.Peek(512)
	head = bytes.TrimLeft(head, " \t\r\n") // Open took any byte-order mark off
	if m := pinprobeDoc.FindSubmatch(head); m != nil {
		return &PinprobeDocError{Schema: string(m[1])}
	}
	if looksJSON(head) && (kind == Envoy || kind == "" && looksEnvoyJSON(head)) {
		p := envoyJSONPattern(envoyJSONKeys)
		r.kind, r.format, r.logged = Envoy, "Envoy JSON (Istio's or Envoy Gateway's keys)", p.logged
		r.linesOf(func(line string, rec *Record) bool { return envoyJSONLine(p, line, rec) })
		return nil
	}
	if looksJSON(head) && (kind == "" || kind == Traefik || kind == GCP) {
		if k := cmp.Or(kind, r.jsonKind()); k != "" {
			r.openJSON(k)
			return nil
		}
	}
	if looksJSON(head) && (kind == "" || kind == Azure) {
		r.openJSON(Azure)
		return nil
	}
	var lines []aheadLine
	for len(lines) < detectLines {
		l, err := r.readLine()
		if errors.Is(err, errTooLong) {
			r.st.TooLong++
			continue
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				r.st.Err = truncated(r.line)
			} else if !errors.Is(err, io.EOF) {
				return err
			}
			break
		}
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, aheadLine{bytes.Clone(l), r.line})
		}
	}
	r.ahead = lines
	if len(lines) > 0 {
		if kind == "" || kind == Azure {
			if cols := csvHeader(lines[0].b); cols != nil {
				r.kind, r.format = Azure, "Azure Application Gateway (CSV)"
				r.ahead = r.ahead[1:]
				r.readCSV(cols)
				return nil
			}
		}
	}
	best, bestN := -1, 0
	for i, f := range lineFormats {
		if kind != "" && f.kind != kind {
			continue
		}
		n := 0
		for _, l := range lines {
			var rec Record
			if f.parse(string(l.b), &rec) {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 && (kind == "" || kind == Azure) && len(lines) > 0 && headerlessTSV(lines[0].b) {
		return fmt.Errorf("%w: line %d is tab-separated values without a header row (az monitor log-analytics query -o tsv writes them so), whose columns cannot be told: export with -o json, or as CSV from the portal", ErrFormat, lines[0].n)
	}
	if best < 0 {
		if len(lines) == 0 && r.st.Err == nil {
			// An empty log: nothing to read, in whatever format.
			r.kind, r.format = kind, "empty"
			r.next = func(*Record) error { return io.EOF }
			return nil
		}
		tried := "nginx combined, HAProxy httplog, Azure Application Gateway CSV or JSON, AWS ALB, Envoy's default or Istio's, Traefik, Google Cloud JSON"
		switch kind {
		case "":
		case Traefik:
			tried = "Traefik's common format or JSON"
		case GCP:
			tried = "Google Cloud's load balancer JSON, as gcloud logging read --format=json prints it"
		default:
			tried = string(kind) + "'s default format"
		}
		return fmt.Errorf("%w in its first %d lines (tried %s): give --log-type, and --log-format for a custom nginx or HAProxy format", ErrFormat, len(lines), tried)
	}
	f := lineFormats[best]
	r.kind, r.format, r.logged = f.kind, f.name, f.logged
	r.linesOf(f.parse)
	return nil
}

// pinprobeDoc is the start of a document pinprobe writes: a report, a
// comparison, a join.
var pinprobeDoc = regexp.MustCompile(`^\{\s*"schema"\s*:\s*"(pinprobe\.[a-z]+/v[0-9]+)"`)

// PinprobeDocError says a log given is a document of pinprobe's own.
type PinprobeDocError struct{ Schema string }

// Error says what the document is.
func (e *PinprobeDocError) Error() string {
	return "a pinprobe document (" + e.Schema + "), not an access log"
}

// looksJSON reports whether the start of a log is JSON text: an object
// whose first key begins, or an array of objects, arrays or strings, in
// printable UTF-8. Binary data that happens to begin with { or [ is not.
func looksJSON(head []byte) bool {
	if len(head) < 2 || head[0] != '{' && head[0] != '[' {
		return false
	}
	// The peek may cut the last character.
	for k := 0; k < utf8.UTFMax-1 && len(head) > 2 && !utf8.Valid(head); k++ {
		head = head[:len(head)-1]
	}
	if !utf8.Valid(head) {
		return false
	}
	for _, c := range head {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	rest := bytes.TrimLeft(head[1:], " \t\r\n")
	if len(rest) == 0 {
		return true
	}
	if head[0] == '{' {
		return rest[0] == '"' || rest[0] == '}'
	}
	return rest[0] == '{' || rest[0] == '[' || rest[0] == '"' || rest[0] == ']'
}

func truncated(line int64) error {
	return fmt.Errorf("the gzip stream ends early, after line %d (a log still being written, or cut short): the rest is not read", line)
}

// readLine returns the next line without its end (valid until the next
// call), or errTooLong (the line was read to its end and dropped),
// io.EOF, or the stream's error.
func (r *Reader) readLine() ([]byte, error) {
	line := r.buf[:0]
	n := 0
	long := false
	for {
		chunk, err := r.src.ReadSlice('\n')
		n += len(chunk)
		if !long {
			if n > r.max+2 {
				long, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (n == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		r.line++
		r.buf = line[:0]
		if long {
			return nil, errTooLong
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > r.max {
			return nil, errTooLong
		}
		return line, nil
	}
}

// nextLine is readLine after the lines detect read ahead; it counts
// lines and too long ones, and ends at a truncated gzip stream.
func (r *Reader) nextLine() ([]byte, int64, error) {
	for {
		if len(r.ahead) > 0 {
			l := r.ahead[0]
			r.ahead = r.ahead[1:]
			r.st.Lines++
			return l.b, l.n, nil
		}
		if r.st.Err != nil {
			return nil, 0, io.EOF
		}
		l, err := r.readLine()
		switch {
		case errors.Is(err, errTooLong):
			r.st.TooLong++
			continue
		case errors.Is(err, io.ErrUnexpectedEOF):
			r.st.Err = truncated(r.line)
			return nil, 0, io.EOF
		case err != nil:
			return nil, 0, err
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		r.st.Lines++
		return l, r.line, nil
	}
}

// linesOf reads the log a line at a time with parse.
func (r *Reader) linesOf(parse func(string, *Record) bool) {
	r.next = func(rec *Record) error {
		for {
			l, n, err := r.nextLine()
			if err != nil {
				return err
			}
			*rec = Record{Line: n}
			if r.took(parse(string(l), rec), true, n) {
				return nil
			}
			if r.st.Unmatched == nil && r.unmatched != nil {
				r.st.Unmatched = r.unmatched(string(l), n)
			}
		}
	}
}

func (r *Reader) skipped(line int64) {
	r.st.Skipped++
	if len(r.st.SkippedAt) < maxSkippedAt {
		r.st.SkippedAt = append(r.st.SkippedAt, line)
	}
}

// headerlessTSV reports whether line is a row of tab-separated values with
// a time and an IP address among them, and no header: what
// `az monitor log-analytics query -o tsv` writes.
func headerlessTSV(line []byte) bool {
	fields := strings.Split(string(line), "\t")
	if len(fields) < 3 {
		return false
	}
	var at, addr bool
	for _, f := range fields {
		if _, ok := parseTime(f, layoutFlex); ok {
			at = true
		}
		if _, ok := parseAddr(f); ok {
			addr = true
		}
	}
	return at && addr
}

// csvHeader returns the columns of an Azure export's header row; nil when
// line is no such header.
func csvHeader(line []byte) []string {
	if !bytes.Contains(line, []byte(",")) {
		return nil
	}
	cols, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range cols {
		seen[azureNames[azureKey(c)]] = true
	}
	if seen["time"] && seen["client"] && seen["status"] {
		return cols
	}
	return nil
}

// maxCSVLines bounds the physical lines of one CSV record (a quoted field
// may hold line breaks).
const maxCSVLines = 64

// readCSV reads an Azure CSV export, its header's columns cols.
func (r *Reader) readCSV(cols []string) {
	raw := map[string]bool{}
	for _, c := range cols {
		raw[strings.TrimSpace(c)] = true
	}
	r.azureNamed(raw, "CSV")
	// What it logs is what its records hold, known as they are read.
	r.logged = 0
	r.next = func(rec *Record) error {
		for {
			l, n, err := r.nextLine()
			if err != nil {
				return err
			}
			record := string(l)
			for i := 0; strings.Count(record, `"`)%2 == 1 && i < maxCSVLines; i++ {
				more, _, err := r.nextLine()
				if err != nil {
					break
				}
				if len(record)+len(more) > r.max {
					record = ""
					break
				}
				record += "\n" + string(more)
			}
			if record == "" || strings.Count(record, `"`)%2 == 1 {
				r.st.TooLong++
				continue
			}
			cr := csv.NewReader(strings.NewReader(record))
			cr.FieldsPerRecord, cr.LazyQuotes = -1, true
			vals, err := cr.Read()
			*rec = Record{Line: n}
			if err != nil || len(vals) != len(cols) {
				r.skipped(n)
				continue
			}
			a := azureRecord{}
			for i, v := range vals {
				a.set(cols[i], v)
			}
			if ok, access := r.azureRecord(&a, rec); r.took(ok, access, n) {
				return nil
			}
		}
	}
}

// azureRecord makes a Record of a, adding what it holds to what the log
// logs.
func (r *Reader) azureRecord(a *azureRecord, rec *Record) (ok, access bool) {
	ok, access = a.record(rec)
	if ok {
		r.logged |= a.logged()
	}
	return ok, access
}

// azureNamed sets an Azure log's shape by its columns, and names its
// format by its table, read as (CSV or JSON).
func (r *Reader) azureNamed(cols map[string]bool, as string) {
	r.azure = azureShape(cols)
	table := map[string]string{"azure-diagnostics": "AzureDiagnostics", "azure-storage": "diagnostic records"}[r.azure]
	r.format = "Azure " + cmp.Or(table, "AGWAccessLogs") + " (" + as + ")"
}

// scanError handles an error of a JSON scan other than its end: a record
// too long is counted and skipped (retry); a JSON cut short or broken
// ends the reading, said in Stats.Err, unless nothing was read yet: then
// the log is not of the format.
func (r *Reader) scanError(s *jsonScan, err error) (retry bool, stop error) {
	azure := r.kind == Azure
	switch {
	case errors.Is(err, errTooLong):
		r.st.TooLong++
		return true, nil
	case errors.Is(err, io.ErrUnexpectedEOF) && r.gz:
		r.st.Err = truncated(s.line)
	case errors.Is(err, io.ErrUnexpectedEOF) && azure:
		r.st.Err = fmt.Errorf("the JSON ends at line %d before its record or wrapper does (a file cut short, or still being written): what came before is read", s.line)
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.st.Err = fmt.Errorf("the JSON ends in the middle of a record at line %d: the rest is not read", s.line)
	case azure && r.st.Records == 0:
		return false, fmt.Errorf("%w: %v (read as an Azure JSON export: give it as Log Analytics, az or the diagnostic setting wrote it)", ErrFormat, err)
	case r.st.Records == 0 && r.st.Lines == 0:
		return false, fmt.Errorf("%w: %v", ErrFormat, err)
	case strings.HasPrefix(err.Error(), "line "):
		r.st.Err = fmt.Errorf("%v: the rest is not read", err)
	default:
		r.st.Err = fmt.Errorf("line %d: %v: the rest is not read", s.line, err)
	}
	return false, io.EOF
}

// notAzure refuses a JSON log none of whose first records is Azure's:
// JSON of another program, not a log of no request.
func notAzure(records, line int64) error {
	return fmt.Errorf("%w: none of its first %d JSON records, from line %d, is an Azure Application Gateway record (a time, TimeGenerated or timeStamp, and a client, ClientIp or clientIP): give the log as Log Analytics, az or the diagnostic setting wrote it", ErrFormat, records, line)
}

// decodeAzure decodes one JSON record: an object (its "properties"
// flattened into it), or a table's row with its columns.
func decodeAzure(obj []byte, cols []string) (azureRecord, map[string]bool, bool) {
	a := azureRecord{}
	raw := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if cols != nil {
		var row []any
		if err := dec.Decode(&row); err != nil {
			return a, nil, false
		}
		for i, name := range cols {
			if i >= len(row) {
				break
			}
			raw[name] = true
			a.setValue(name, row[i])
		}
		return a, raw, true
	}
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return a, nil, false
	}
	for k, v := range m {
		raw[k] = true
		if props, ok := v.(map[string]any); ok && k == "properties" {
			a.storage = true
			a.setFields(props)
			continue
		}
		a.setValue(k, v)
	}
	return a, raw, true
}
