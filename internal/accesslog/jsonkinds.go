package accesslog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonPeek is how much of a JSON log jsonKind reads ahead to tell whose it
// is: a record of any of these gateways' fits many times over.
const jsonPeek = 16 << 10

// jsonKind tells the kind of a JSON log from its first records: Traefik's,
// Google Cloud's, or "" (Azure's, or none pinprobe knows). A record a line
// is told by the first that tells (Traefik's own log may come first, on
// the same stdout); an indented array by its start.
func (r *Reader) jsonKind() Kind {
	head, _ := r.src.Peek(jsonPeek)
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	for _, line := range bytes.Split(head, []byte("\n")) {
		switch {
		case isTraefikJSON(line):
			return Traefik
		case isGCPJSON(line):
			return GCP
		}
	}
	switch {
	case isTraefikJSON(head):
		return Traefik
	case isGCPJSON(head):
		return GCP
	}
	return ""
}

// openJSON sets the reader up for a JSON log of kind (Traefik or GCP).
func (r *Reader) openJSON(kind Kind) {
	r.kind = kind
	switch kind {
	case Traefik:
		r.format = "Traefik (JSON)"
		r.readJSONRecords(func(obj []byte, rec *Record) (ok, access bool) {
			// Traefik's own log, on the same stdout, is its other log;
			// another gateway's record does not parse as Traefik's.
			if !isTraefikJSON(obj) {
				return false, !isTraefikOwn(obj)
			}
			var t traefikJSON
			if json.Unmarshal(obj, &t) != nil {
				return false, true
			}
			return t.record(rec, &r.logged), true
		})
	case GCP:
		g := &gcpState{}
		r.format = "Google Cloud load balancer (JSON)"
		r.partial = gcpPartial
		r.cannot = g.cannot
		r.readJSONRecords(func(obj []byte, rec *Record) (ok, access bool) {
			ok, access = g.decode(obj, rec)
			r.logged |= g.logged
			return ok, access
		})
	}
}

// readJSONRecords reads a JSON log's records (an array, or one a line)
// with decode, which makes a Record of one: ok false for a record it
// cannot place (counted as skipped), access false for a record of the
// gateway's other logs (counted as other).
func (r *Reader) readJSONRecords(decode func(obj []byte, rec *Record) (ok, access bool)) {
	s := newJSONScan(r.src, r.max)
	r.next = func(rec *Record) error {
		for {
			obj, _, err := s.next()
			switch {
			case errors.Is(err, io.EOF):
				return io.EOF
			case err != nil:
				retry, stop := r.scanError(s, err, "the JSON ends in the middle of a record at line %d: the rest is not read",
					r.st.Records == 0 && r.st.Lines == 0, func(err error) error { return fmt.Errorf("%w: %v", ErrFormat, err) })
				if retry {
					continue
				}
				return stop
			}
			r.st.Lines++
			*rec = Record{Line: s.valLine}
			ok, access := decode(obj, rec)
			switch {
			case ok:
				r.st.Records++
				return nil
			case !access:
				r.st.Other++
			default:
				r.skipped(s.valLine)
			}
		}
	}
}

// jsonText is a raw JSON scalar as text: a string's contents, a number's
// digits; "" for null and anything else.
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	if raw[0] == '{' || raw[0] == '[' {
		return ""
	}
	return string(raw)
}

// jsonScalar is a JSON value as text: a string's contents, a number's or
// a literal's digits; "" for null, objects and arrays.
func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
