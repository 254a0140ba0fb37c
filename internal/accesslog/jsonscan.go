package accesslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonScan reads the records of a JSON access log one at a time, each at
// most max bytes, whatever the file's size: an array of objects (an
// export, az monitor log-analytics query -o json), objects one after
// another (JSON lines, a storage account's blobs), {"records": [...]}
// (diagnostic settings to Event Hub or storage; several such payloads
// one after another), or {"tables": [{"columns": [...], "rows": [...]}]}
// (the Log Analytics API), compact or indented. A record longer than max
// is skipped without being held; a wrapper is streamed, never read whole.
type jsonScan struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	line int64 // the line the scanner is on, from 1
	// stack of what the scanner is inside: 'a' an array of records, 'w'
	// the records array of a {"records": …} wrapper, 't' the tables
	// array of a {"tables": …} one, 'r' the rows of a table.
	state   []byte
	columns []string // the open table's columns
	tooLong bool
	valLine int64
}

var errJSONShape = errors.New("not a JSON access log")

func newJSONScan(r *bufio.Reader, max int) *jsonScan {
	return &jsonScan{r: r, max: max, line: 1}
}

// next returns the next record: an object, or (in a table) a row and its
// columns. It returns io.EOF at the end; errTooLong for a record past max
// (skipped: call next again).
func (s *jsonScan) next() (obj []byte, columns []string, err error) {
	for {
		if err := s.space(); err != nil {
			if errors.Is(err, io.EOF) && len(s.state) == 0 {
				return nil, nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, nil, io.ErrUnexpectedEOF
			}
			return nil, nil, err
		}
		c, err := s.peek()
		if err != nil {
			return nil, nil, err
		}
		top := byte(0)
		if len(s.state) > 0 {
			top = s.state[len(s.state)-1]
		}
		switch {
		case top != 0 && c == ',':
			s.r.ReadByte()
			continue
		case top != 0 && c == ']':
			s.r.ReadByte()
			s.state = s.state[:len(s.state)-1]
			if top != 'a' {
				// Rows end: the rest of their table's object; records or
				// tables end: the rest of their wrapper.
				if err := s.skipRest(); err != nil {
					return nil, nil, err
				}
			}
			continue
		case top == 't' && c == '{':
			if err := s.openTable(); err != nil {
				return nil, nil, err
			}
			continue
		case top == 't':
			return nil, nil, fmt.Errorf("line %d: %w: a value where a table (an object) was expected", s.line, errJSONShape)
		case top == 0 && c == '[':
			s.r.ReadByte()
			s.state = append(s.state, 'a')
			continue
		case top == 0 && c == '{':
			// A wrapper, or a record of its own (JSON lines).
			head, _ := s.r.Peek(64)
			switch wrapperKey(head) {
			case "records":
				if err := s.enter(`records`); err != nil {
					return nil, nil, err
				}
				s.state = append(s.state, 'w')
				continue
			case "tables":
				if err := s.enter(`tables`); err != nil {
					return nil, nil, err
				}
				s.state = append(s.state, 't')
				continue
			}
		case top == 0:
			return nil, nil, fmt.Errorf("line %d: %w: %s where a record (an object) or an array of them was expected", s.line, errJSONShape, what(c))
		}
		s.valLine = s.line
		v, err := s.value()
		if errors.Is(err, errTooLong) {
			return nil, nil, errTooLong
		}
		if err != nil {
			return nil, nil, err
		}
		if top == 'r' {
			return v, s.columns, nil
		}
		if len(v) == 0 || v[0] != '{' {
			return nil, nil, fmt.Errorf("line %d: %w: an array or value where a record (an object) was expected", s.valLine, errJSONShape)
		}
		return v, nil, nil
	}
}

// what names the character c where JSON was expected.
func what(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", string(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// wrapperKey is the first key of the object head begins, when it is
// "records" or "tables"; "" otherwise.
func wrapperKey(head []byte) string {
	h := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(head), []byte("{")))
	for _, k := range []string{"records", "tables"} {
		if bytes.HasPrefix(h, []byte(`"`+k+`"`)) {
			rest := bytes.TrimSpace(h[len(k)+2:])
			if bytes.HasPrefix(rest, []byte(":")) && bytes.HasPrefix(bytes.TrimSpace(rest[1:]), []byte("[")) {
				return k
			}
		}
	}
	return ""
}

// enter reads `{"key": [` of a wrapper.
func (s *jsonScan) enter(key string) error {
	for _, want := range []string{"{", `"` + key + `"`, ":", "["} {
		if err := s.space(); err != nil {
			return err
		}
		b := make([]byte, len(want))
		if _, err := io.ReadFull(s.r, b); err != nil || string(b) != want {
			return errJSONShape
		}
	}
	return nil
}

// openTable reads a table's `{` and its keys up to its rows, keeping its
// columns.
func (s *jsonScan) openTable() error {
	if err := s.expect('{'); err != nil {
		return err
	}
	s.columns = nil
	for {
		if err := s.space(); err != nil {
			return err
		}
		if c, _ := s.peek(); c == '}' {
			// A table without rows.
			s.r.ReadByte()
			return nil
		}
		kb, err := s.value()
		if errors.Is(err, errTooLong) {
			return fmt.Errorf("line %d: a table's key longer than %d bytes", s.line, s.max)
		}
		if err != nil || len(kb) == 0 || kb[0] != '"' {
			return fmt.Errorf("line %d: %w: a table's key expected", s.line, errJSONShape)
		}
		key := string(kb) // value's buffer is reused
		if err := s.expect(':'); err != nil {
			return err
		}
		if key == `"rows"` {
			if s.columns == nil {
				return fmt.Errorf("line %d: %w: a table's rows come before its columns (the Log Analytics API writes columns first)", s.line, errJSONShape)
			}
			if err := s.expect('['); err != nil {
				return err
			}
			s.state = append(s.state, 'r')
			return nil
		}
		v, err := s.value()
		if errors.Is(err, errTooLong) {
			return fmt.Errorf("line %d: a table's %s longer than %d bytes", s.line, key, s.max)
		}
		if err != nil {
			return err
		}
		if key == `"columns"` {
			s.columns = splitColumns(v)
		}
		if err := s.space(); err != nil {
			return err
		}
		if c, _ := s.peek(); c == ',' {
			s.r.ReadByte()
		}
	}
}

// skipRest reads the rest of the object the scanner is in, to its `}`:
// the keys after a table's rows, or after a wrapper's records or tables
// (statistics, render). Strings are read through, not held.
func (s *jsonScan) skipRest() error {
	for depth := 0; ; {
		c, err := s.r.ReadByte()
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		switch c {
		case '\n':
			s.line++
		case '"':
			if err := s.copyString(func(byte) {}); err != nil {
				return err
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				if c != '}' {
					return fmt.Errorf("line %d: %w: ] where } was expected", s.line, errJSONShape)
				}
				return nil
			}
		}
	}
}

// splitColumns lists the names of a table's columns ([{"name": …}, …]),
// once for all its rows.
func splitColumns(v []byte) []string {
	out := []string{}
	for _, part := range bytes.Split(v, []byte(`"name"`))[1:] {
		part = bytes.TrimSpace(part)
		part = bytes.TrimSpace(bytes.TrimPrefix(part, []byte(":")))
		if end := bytes.IndexByte(part[min(1, len(part)):], '"'); len(part) > 0 && part[0] == '"' && end >= 0 {
			var name string
			if json.Unmarshal(part[:end+2], &name) == nil {
				out = append(out, name)
			}
		}
	}
	return out
}

func (s *jsonScan) expect(c byte) error {
	if err := s.space(); err != nil {
		return err
	}
	b, err := s.r.ReadByte()
	if err != nil || b != c {
		return errJSONShape
	}
	return nil
}

func (s *jsonScan) peek() (byte, error) {
	b, err := s.r.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// space skips white space, counting lines.
func (s *jsonScan) space() error {
	for {
		c, err := s.peek()
		if err != nil {
			return err
		}
		switch c {
		case '\n':
			s.line++
		case ' ', '\t', '\r':
		default:
			return nil
		}
		s.r.ReadByte()
	}
}

// value reads one JSON value, at most max bytes of it kept; past that it
// is read to its end and errTooLong returned. It checks only the nesting
// and the strings: the caller decodes what it gets.
func (s *jsonScan) value() ([]byte, error) {
	if err := s.space(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	s.buf = s.buf[:0]
	s.tooLong = false
	keep := func(c byte) {
		if len(s.buf) < s.max {
			s.buf = append(s.buf, c)
		} else {
			s.tooLong = true
		}
	}
	depth := 0
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && depth == 0 && len(s.buf) > 0 {
				break
			}
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		switch c {
		case '\n':
			s.line++
		case '"':
			keep(c)
			if err := s.copyString(keep); err != nil {
				return nil, err
			}
			if depth == 0 {
				return s.done()
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, errJSONShape
			}
		case ',', ' ', '\t', '\r':
			if depth == 0 {
				s.r.UnreadByte()
				return s.done()
			}
		}
		keep(c)
		if depth == 0 && (c == '}' || c == ']') {
			return s.done()
		}
		if depth == 0 {
			if n, _ := s.r.Peek(1); len(n) == 1 && (n[0] == ',' || n[0] == ']' || n[0] == '}' || n[0] <= ' ') {
				return s.done()
			}
		}
	}
	return s.done()
}

func (s *jsonScan) done() ([]byte, error) {
	if s.tooLong {
		return nil, errTooLong
	}
	return s.buf, nil
}

// copyString reads the rest of a string, its opening quote read, passing
// each byte to keep.
func (s *jsonScan) copyString(keep func(byte)) error {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return io.ErrUnexpectedEOF
		}
		if c == '\n' {
			s.line++
		}
		keep(c)
		switch c {
		case '\\':
			c, err := s.r.ReadByte()
			if err != nil {
				return io.ErrUnexpectedEOF
			}
			keep(c)
		case '"':
			return nil
		}
	}
}
