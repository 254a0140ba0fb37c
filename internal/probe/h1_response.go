package probe

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

// ProtocolError is a response that breaks HTTP/1.1's syntax or framing, or
// that the client cannot use (a protocol switch it did not ask for).
type ProtocolError struct {
	Reason string // what was wrong, e.g. `status line "SSH-2.0-OpenSSH_9.6"`
}

func (e *ProtocolError) Error() string { return "malformed HTTP response: " + e.Reason }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Reason: fmt.Sprintf(format, args...)}
}

// validStatus reports whether status is one HTTP defines, 100–599 (RFC
// 9110 §15): every other number is a protocol error, on every path.
func validStatus(status int) bool { return status >= 100 && status <= 599 }

// clip quotes at most the first 40 bytes of b for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "..."
	}
	return strconv.Quote(string(b))
}

// h1Response is what roundTrip read of a response. One goroutine reuses it
// for all its requests; its slices are valid until the next roundTrip.
type h1Response struct {
	// Set by the caller, kept between requests.
	keepBody int      // how many first body bytes to keep in body, at most BodyPrefix
	capture  []string // header names whose first values go into values (case-insensitive)

	// Filled by roundTrip.
	status    int    // of the final response; 0 when no head was read
	proto     string // "HTTP/1.1" or "HTTP/1.0"
	bytes     int64  // body bytes read (chunk framing not counted)
	wrote     time.Time
	firstByte time.Time // the first response byte (of a 1xx too); zero when none came
	server    string    // the first Server field, cut at MaxEvidenceValue bytes
	// values holds each capture name's value, "" when absent: its
	// values joined by ", " when it came several times, as net/http's
	// Header lists them, cut at MaxEvidenceValue bytes.
	values    []string
	captured  []bool // the capture name was present (perhaps with an empty value)
	body      []byte // the first keepBody body bytes
	head      []byte // the raw head of the last response read, for header
	keepAlive bool   // the response lets the connection carry another request

	prefix [BodyPrefix]byte
	intern interner
}

// newH1Response returns a response that keeps the first keepBody body bytes
// (at most BodyPrefix) and the first values of the capture header names.
func newH1Response(keepBody int, capture ...string) *h1Response {
	return &h1Response{
		keepBody: min(max(keepBody, 0), BodyPrefix),
		capture:  capture,
		values:   make([]string, len(capture)),
		captured: make([]bool, len(capture)),
	}
}

func (r *h1Response) reset() {
	r.status, r.proto, r.bytes, r.server, r.keepAlive = 0, "", 0, "", false
	r.wrote, r.firstByte = time.Time{}, time.Time{}
	clear(r.values)
	clear(r.captured)
	r.body = r.prefix[:0]
	if cap(r.head) > 64<<10 {
		r.head = nil // a huge head once does not stay with the worker
	}
	r.head = r.head[:0]
}

// take counts body bytes and keeps the first of them.
func (r *h1Response) take(b []byte) {
	if n := r.keepBody - len(r.body); n > 0 {
		r.body = append(r.body, b[:min(n, len(b))]...)
	}
	r.bytes += int64(len(b))
}

// header returns the header fields of the last response read, as received
// and as net/http's Response.Header holds them: Transfer-Encoding, which
// net/http moves out of the header, is left out. It allocates and is meant
// for samples.
func (r *h1Response) header() http.Header {
	h := http.Header{}
	_, rest := nextLine(r.head)
	for len(rest) > 0 {
		var line []byte
		line, rest = nextLine(rest)
		name, value, err := parseField(line)
		if err != nil || equalFold(name, "Transfer-Encoding") {
			continue
		}
		k := http.CanonicalHeaderKey(string(name))
		h[k] = append(h[k], string(value))
	}
	return h
}

// interner returns strings for header values without allocating for values
// seen before (a server sends the same few values again and again). Values
// are cut at MaxEvidenceValue bytes, as every report of them is, so what it
// holds stays bounded whatever the server sends.
type interner struct{ m map[string]string }

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > MaxEvidenceValue {
		b = b[:MaxEvidenceValue]
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < 256 {
		if in.m == nil {
			in.m = map[string]string{}
		}
		in.m[s] = s
	}
	return s
}

// h1Head is the framing of one response head.
type h1Head struct {
	status        int
	minor         byte  // HTTP/1.minor
	contentLength int64 // -1 when absent
	chunked       bool
	close         bool // Connection: close
	keepAlive     bool // Connection: keep-alive
}

// proto is the response's protocol as net/http names it.
func (h *h1Head) proto() string {
	if h.minor == 0 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// readResponse reads one response: 1xx responses are skipped (101 is an
// error), the final one's body is discarded through resp.take.
func (c *h1Conn) readResponse(t *h1Template, resp *h1Response) error {
	var h h1Head
	for n := 0; ; n++ {
		if err := c.readHead(&h, resp); err != nil {
			return err
		}
		if h.status >= 200 {
			break
		}
		if h.status == http.StatusSwitchingProtocols {
			// What follows is not HTTP: the status is reported, the
			// connection closed, as the net/http path does.
			resp.status, resp.proto = h.status, h.proto()
			return fmt.Errorf("%s 101 Switching Protocols: %w", resp.proto, errSwitched)
		}
		if n >= h1MaxInformational {
			return protoErr("more than %d informational (1xx) responses", h1MaxInformational)
		}
	}
	noBody := t.noBody || h.status == http.StatusNoContent || h.status == http.StatusNotModified
	if !noBody && h.chunked {
		// A response that net/http would not even return: no status either.
		if h.minor == 0 {
			return protoErr("Transfer-Encoding in an HTTP/1.0 response")
		}
		if h.contentLength >= 0 {
			return protoErr("both Transfer-Encoding and Content-Length")
		}
	}
	resp.status = h.status
	resp.proto = h.proto()
	keep := !h.close && (h.minor >= 1 || h.keepAlive)
	var err error
	switch {
	case noBody:
	case h.chunked:
		err = c.readChunked(resp)
	case h.contentLength >= 0:
		err = c.discard(h.contentLength, resp)
	default:
		keep = false // the body ends when the server closes
		err = c.readToEOF(resp)
	}
	resp.keepAlive = keep
	return err
}

// fill reads more bytes into rbuf, compacting it or, when a head does not
// fit, growing it; callers bound what they buffer. An error arriving with
// data is kept for the next call; once there is one, fill returns it.
func (c *h1Conn) fill() error {
	if c.rerr != nil {
		return c.rerr
	}
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	if c.w == len(c.rbuf) {
		if c.r > 0 {
			c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
			c.r = 0
		} else {
			// No head needs more than h1MaxHead bytes and a read beyond;
			// the callers fail before they ask for more.
			size := min(2*len(c.rbuf), h1MaxHead+h1BufSize)
			if size == len(c.rbuf) {
				return protoErr("response head larger than %d bytes", h1MaxHead)
			}
			b := make([]byte, size)
			copy(b, c.rbuf)
			c.rbuf = b
		}
	}
	for {
		n, err := c.nc.Read(c.rbuf[c.w:])
		if n > 0 {
			if c.firstByte.IsZero() {
				c.firstByte = time.Now()
			}
			c.w += n
			c.rerr = err
			return nil
		}
		if err != nil {
			c.rerr = err
			return err
		}
	}
}

// readHead reads one head, from the status line to the empty line, and
// parses it into h and resp. Bytes that cannot start "HTTP/" fail at once,
// so a server that speaks something else is not waited for. Like net/http
// it bounds the head's bytes (h1MaxHead), not its number of fields.
func (c *h1Conn) readHead(h *h1Head, resp *h1Response) error {
	scan, lineStart := 0, 0
	for {
		buf := c.rbuf[c.r:c.w]
		if n := min(len(buf), 5); string(buf[:n]) != "HTTP/"[:n] {
			return protoErr("not an HTTP/1 response: %s", clip(buf))
		}
		for {
			i := bytes.IndexByte(buf[scan:], '\n')
			if i < 0 {
				scan = len(buf)
				break
			}
			nl := scan + i
			scan = nl + 1
			if lineStart > 0 && (nl == lineStart || nl == lineStart+1 && buf[lineStart] == '\r') {
				c.headBytes += scan
				if c.headBytes > h1MaxHead {
					return protoErr("response head larger than %d bytes", h1MaxHead)
				}
				resp.head = append(resp.head[:0], buf[:scan]...)
				c.r += scan
				return parseHead(h, resp)
			}
			lineStart = scan
		}
		if c.headBytes+len(buf) > h1MaxHead {
			return protoErr("response head larger than %d bytes", h1MaxHead)
		}
		if err := c.fill(); err != nil {
			if err == io.EOF && len(buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// parseHead parses the complete head resp.head into h, and the Server
// field and the captured fields into resp. A head with an obs-fold is
// unfolded first (see unfold).
func parseHead(h *h1Head, resp *h1Response) error {
	*h = h1Head{contentLength: -1}
	resp.server = ""
	clear(resp.values)
	clear(resp.captured)
	line, rest := nextLine(resp.head)
	if err := parseStatusLine(line, h); err != nil {
		return err
	}
	serverSeen := false
	for first := true; len(rest) > 0; first = false {
		line, rest = nextLine(rest)
		if len(line) == 0 {
			break
		}
		if !first && isFold(line) {
			// Rare: the head is parsed again, unfolded.
			resp.head = unfold(resp.head)
			return parseHead(h, resp)
		}
		name, value, err := parseField(line)
		if err != nil {
			return err
		}
		switch {
		case equalFold(name, "Content-Length"):
			n, ok := parseContentLength(value)
			if !ok {
				return protoErr("Content-Length %s", clip(value))
			}
			if h.contentLength >= 0 && n != h.contentLength {
				return protoErr("conflicting Content-Length fields %d and %d", h.contentLength, n)
			}
			h.contentLength = n
		case equalFold(name, "Transfer-Encoding"):
			if h.chunked {
				return protoErr("more than one Transfer-Encoding field")
			}
			if !equalFold(value, "chunked") {
				return protoErr("unsupported Transfer-Encoding %s", clip(value))
			}
			h.chunked = true
		case equalFold(name, "Connection"):
			connectionTokens(value, h)
		case equalFold(name, "Server"):
			if !serverSeen {
				resp.server, serverSeen = resp.intern.get(value), true
			}
		}
		for i, k := range resp.capture {
			if !equalFold(name, k) {
				continue
			}
			if !resp.captured[i] {
				resp.values[i], resp.captured[i] = resp.intern.get(value), true
			} else if len(resp.values[i]) < MaxEvidenceValue {
				// A repeated field: rare, and joined as net/http's
				// Header would list it.
				resp.values[i] = cutValue(resp.values[i] + ", " + string(value[:min(len(value), MaxEvidenceValue)]))
			}
		}
	}
	return nil
}

// parseStatusLine parses "HTTP/1.x SP 3DIGIT [SP reason-phrase]" whose
// status is a real one, 100–599 (validStatus).
func parseStatusLine(line []byte, h *h1Head) error {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || !isDigit(line[7]) || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) || line[9] < '1' || line[9] > '5' ||
		len(line) > 12 && line[12] != ' ' {
		return protoErr("status line %s", clip(line))
	}
	if hasCTL(line[12:]) {
		return protoErr("status line %s", clip(line))
	}
	h.minor = line[7] - '0'
	h.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	return nil
}

// nextLine splits b after its first line, which ends in LF or CRLF (as
// net/http accepts); the line is returned without its end.
func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, rest
}

// isFold reports whether a field line continues the one before it: an
// obs-fold (RFC 9112 §5.2), a line end followed by white space.
func isFold(line []byte) bool { return len(line) > 0 && (line[0] == ' ' || line[0] == '\t') }

// unfold rewrites head in place with every obs-fold replaced by one space
// and the white space around it dropped, as RFC 9112 §5.2 asks of a user
// agent and net/http does: "X-A: a\r\n  b" becomes "X-A: a b". Its lines
// end in LF then. The line after the status line must not be a fold.
func unfold(head []byte) []byte {
	// Each line written is no longer than what was read for it, so the
	// writes never overtake the reads.
	out, rest := head[:0], head
	for len(rest) > 0 {
		var line []byte
		line, rest = nextLine(rest)
		if isFold(line) {
			out = append(trimOWSRight(out[:len(out)-1]), ' ')
			line = trimOWS(line)
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// parseField splits a field line into name and value, rejecting a fold
// with no field to continue, white space before the colon, names that are
// not tokens and control characters (a stray CR among them) in values.
func parseField(line []byte) (name, value []byte, err error) {
	if isFold(line) {
		return nil, nil, protoErr("obsolete line folding with no field to continue: %s", clip(line))
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || !validTokenBytes(line[:colon]) {
		return nil, nil, protoErr("header line %s", clip(line))
	}
	value = trimOWS(line[colon+1:])
	if hasCTL(value) {
		return nil, nil, protoErr("control character in header line %s", clip(line))
	}
	return line[:colon], value, nil
}

// connectionTokens notes the close and keep-alive options of a Connection field.
func connectionTokens(v []byte, h *h1Head) {
	for len(v) > 0 {
		var tok []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			tok, v = v, nil
		}
		tok = trimOWS(tok)
		switch {
		case equalFold(tok, "close"):
			h.close = true
		case equalFold(tok, "keep-alive"):
			h.keepAlive = true
		}
	}
}

// parseContentLength parses 1*DIGIT, leading zeros and all (RFC 9112
// allows any number of them), up to the largest int64 (as net/http).
func parseContentLength(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, b := range v {
		if !isDigit(b) {
			return 0, false
		}
		d := int64(b - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// discard reads n body bytes.
func (c *h1Conn) discard(n int64, resp *h1Response) error {
	for n > 0 {
		if c.r == c.w {
			if err := c.fill(); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			continue
		}
		k := c.w - c.r
		if int64(k) > n {
			k = int(n)
		}
		resp.take(c.rbuf[c.r : c.r+k])
		c.r += k
		n -= int64(k)
	}
	return nil
}

// readToEOF reads a body that ends when the server closes the connection.
func (c *h1Conn) readToEOF(resp *h1Response) error {
	for {
		resp.take(c.rbuf[c.r:c.w])
		c.r = c.w
		if err := c.fill(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// readChunked reads a chunked body and its trailer section. Like net/http it
// gives up when chunk framing outweighs the data by far (tiny chunks with
// long extensions).
func (c *h1Conn) readChunked(resp *h1Response) error {
	var excess int64
	for {
		line, err := c.readLine(h1MaxChunkLine, true)
		if err != nil {
			return err
		}
		size, err := parseChunkLine(line)
		if err != nil {
			return err
		}
		excess = max(excess+int64(len(line))+4-16-2*size, 0) // the line's CRLF and the data's
		if excess > 16<<10 {
			return protoErr("chunked encoding with too much non-data")
		}
		if size == 0 {
			return c.readTrailers()
		}
		if err := c.discard(size, resp); err != nil {
			return err
		}
		for c.w-c.r < 2 {
			if err := c.fill(); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
		}
		if c.rbuf[c.r] != '\r' || c.rbuf[c.r+1] != '\n' {
			return protoErr("chunk data not followed by CRLF")
		}
		c.r += 2
	}
}

// readTrailers reads the field lines after the last chunk up to the empty
// line, within the head limits. A fold continues the field before it, as
// in a head; the fields are not kept.
func (c *h1Conn) readTrailers() error {
	for fields := 0; ; fields++ {
		if fields > h1MaxFields {
			return protoErr("more than %d trailer fields", h1MaxFields)
		}
		line, err := c.readLine(h1MaxHead-c.headBytes, false)
		if err != nil {
			return err
		}
		c.headBytes += len(line) + 2
		if len(line) == 0 {
			return nil
		}
		if fields > 0 && isFold(line) {
			if hasCTL(line) {
				return protoErr("control character in trailer line %s", clip(line))
			}
			continue
		}
		if _, _, err := parseField(line); err != nil {
			return err
		}
	}
}

// readLine consumes one line of at most max bytes and returns it without its
// end, valid until the next read. crlf rejects a line ending in a bare LF
// (chunk lines; RFC 9112 erratum 7633).
func (c *h1Conn) readLine(max int, crlf bool) ([]byte, error) {
	scan := 0
	for {
		buf := c.rbuf[c.r:c.w]
		if i := bytes.IndexByte(buf[scan:], '\n'); i >= 0 {
			nl := scan + i
			line := buf[:nl]
			c.r += nl + 1
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			} else if crlf {
				return nil, protoErr("chunk line %s ends in a bare LF", clip(line))
			}
			if len(line) > max {
				return nil, protoErr("line longer than %d bytes", max)
			}
			return line, nil
		}
		scan = len(buf)
		if len(buf) > max+1 {
			return nil, protoErr("line longer than %d bytes", max)
		}
		if err := c.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// parseChunkLine parses chunk-size [chunk-ext]: hex digits, then any
// extensions (; name [= token / quoted-string], white space around the
// separators), then optional white space.
func parseChunkLine(line []byte) (int64, error) {
	i := 0
	var size int64
	for ; i < len(line) && hexVal(line[i]) >= 0; i++ {
		if i == 15 {
			return 0, protoErr("chunk size %s too large", clip(line))
		}
		size = size<<4 | int64(hexVal(line[i]))
	}
	if i == 0 {
		return 0, protoErr("chunk line %s", clip(line))
	}
	rest := trimOWSLeft(line[i:])
	for len(rest) > 0 {
		if rest[0] != ';' {
			return 0, protoErr("chunk line %s", clip(line))
		}
		rest = trimOWSLeft(rest[1:])
		n := tokenLen(rest)
		if n == 0 {
			return 0, protoErr("chunk extension in %s", clip(line))
		}
		rest = trimOWSLeft(rest[n:])
		if len(rest) > 0 && rest[0] == '=' {
			rest = trimOWSLeft(rest[1:])
			if len(rest) > 0 && rest[0] == '"' {
				n = quotedLen(rest)
			} else {
				n = tokenLen(rest)
			}
			if n == 0 {
				return 0, protoErr("chunk extension in %s", clip(line))
			}
			rest = trimOWSLeft(rest[n:])
		}
	}
	return size, nil
}

// quotedLen returns the length of the quoted-string b starts with, 0 if none.
func quotedLen(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			i++
			if i == len(b) || b[i] < ' ' && b[i] != '\t' || b[i] == 0x7f {
				return 0
			}
		case c < ' ' && c != '\t' || c == 0x7f:
			return 0
		}
	}
	return 0
}

func hexVal(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'a' <= b && b <= 'f':
		return int(b-'a') + 10
	case 'A' <= b && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// hasCTL reports whether b holds a control character a field value may
// not: any but HTAB.
func hasCTL(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func trimOWSLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func trimOWSRight(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func trimOWS(b []byte) []byte { return trimOWSRight(trimOWSLeft(b)) }

// equalFold reports whether b equals the ASCII string s without regard to case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// tchars marks the bytes of an RFC 9110 token.
var tchars = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// tokenLen returns the length of the token b starts with.
func tokenLen(b []byte) int {
	n := 0
	for n < len(b) && tchars[b[n]] {
		n++
	}
	return n
}

func validTokenBytes(b []byte) bool { return len(b) > 0 && tokenLen(b) == len(b) }

func validToken(s string) bool {
	for i := range len(s) {
		if !tchars[s[i]] {
			return false
		}
	}
	return s != ""
}
