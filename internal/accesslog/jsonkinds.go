package accesslog

import (
	"bytes"
	"encoding/json"
	"errors"
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
	for _, part := range append(bytes.Split(head, []byte("\n")), head) {
		switch {
		case isTraefikJSON(part):
			return Traefik
		case isGCPJSON(part):
			return GCP
		}
	}
	return ""
}

// openJSON sets the reader up for a JSON log of kind (Traefik, GCP or
// Azure).
func (r *Reader) openJSON(kind Kind) {
	r.kind = kind
	switch kind {
	case Azure:
		// What it logs is what its records hold, known as they are read.
		r.format = "Azure Application Gateway (JSON)"
		named := false
		r.readJSONRecords(func(obj []byte, cols []string, rec *Record) (ok, access bool) {
			a, raw, ok := decodeAzure(obj, cols)
			if !ok {
				return false, true
			}
			if !named {
				named = true
				r.azureNamed(raw, "JSON")
			}
			return r.azureRecord(&a, rec)
		})
	case Traefik:
		r.format = "Traefik (JSON)"
		r.readJSONRecords(func(obj []byte, _ []string, rec *Record) (ok, access bool) {
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
		r.readJSONRecords(func(obj []byte, _ []string, rec *Record) (ok, access bool) {
			ok, access = g.decode(obj, rec)
			r.logged |= g.logged
			return ok, access
		})
	}
}

// readJSONRecords reads a JSON log's records (an array, one a line, an
// Azure wrapper or table) with decode, which makes a Record of one (a
// table's row, with its columns): ok false for a record it cannot place,
// access false for a record of the gateway's other logs. An Azure log
// none of whose first records is Azure's is refused (notAzure).
func (r *Reader) readJSONRecords(decode func(obj []byte, cols []string, rec *Record) (ok, access bool)) {
	s := newJSONScan(r.src, r.max)
	first := int64(0) // the line of the first record
	none := func() bool { return r.kind == Azure && r.st.Records == 0 && r.st.Other == 0 }
	r.next = func(rec *Record) error {
		for {
			if none() && r.st.Lines >= detectLines {
				return notAzure(r.st.Lines, first)
			}
			obj, cols, err := s.next()
			switch {
			case errors.Is(err, io.EOF) && none() && r.st.Lines > 0:
				return notAzure(r.st.Lines, first)
			case errors.Is(err, io.EOF):
				return io.EOF
			case err != nil:
				if retry, stop := r.scanError(s, err); !retry {
					return stop
				}
				continue
			}
			r.st.Lines++
			if first == 0 {
				first = s.valLine
			}
			*rec = Record{Line: s.valLine}
			if ok, access := decode(obj, cols, rec); r.took(ok, access, s.valLine) {
				return nil
			}
		}
	}
}

// took counts what a decoder made of a record at line n: a request
// (true), a record of the gateway's other logs, or one skipped.
func (r *Reader) took(ok, access bool, n int64) bool {
	switch {
	case ok:
		r.st.Records++
	case !access:
		r.st.Other++
	default:
		r.skipped(n)
	}
	return ok
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
