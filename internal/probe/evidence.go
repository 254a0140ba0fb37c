package probe

import (
	"net/http"
	"slices"
	"strings"
)

// ResponseEvidence is what a sample keeps of the response, bounded whatever
// the server sent: at most MaxEvidenceHeaders header lines, each value cut
// at MaxEvidenceValue bytes, MaxEvidenceHeaderBytes of header text in all,
// and the first BodyPrefix bytes of the body.
type ResponseEvidence struct {
	Proto  string
	Header http.Header // as received, bounded; reports redact secrets
	Body   []byte      // the first BodyPrefix bytes
	// Truncated says that some of the header was left out or cut.
	Truncated bool
}

// The bounds of ResponseEvidence's header.
const (
	MaxEvidenceHeaders     = 64      // header lines (values) kept
	MaxEvidenceValue       = 512     // bytes kept of each value
	MaxEvidenceHeaderBytes = 8 << 10 // bytes of "Name: value\r\n" text kept in all
)

// boundedEvidence copies what a sample keeps of a response. Header names
// are taken in sorted order, so what is kept does not depend on map order;
// a line that does not fit what is left of the byte budget is left out.
func boundedEvidence(proto string, h http.Header, body []byte) *ResponseEvidence {
	ev := &ResponseEvidence{Proto: proto, Body: append([]byte(nil), body...)}
	if h == nil {
		return ev
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	ev.Header = make(http.Header, min(len(names), MaxEvidenceHeaders))
	lines, bytes := 0, 0
	for _, k := range names {
		for _, v := range h[k] {
			if lines == MaxEvidenceHeaders {
				ev.Truncated = true
				return ev
			}
			if len(v) > MaxEvidenceValue {
				v = cutValue(v)
				ev.Truncated = true
			}
			size := len(k) + len(": \r\n") + len(v)
			if bytes+size > MaxEvidenceHeaderBytes {
				ev.Truncated = true
				continue
			}
			ev.Header[k] = append(ev.Header[k], v)
			lines++
			bytes += size
		}
	}
	return ev
}

// cutValue returns v cut at MaxEvidenceValue bytes, as a copy when it is
// cut so that the rest of a huge header is not kept alive.
func cutValue(v string) string {
	if len(v) <= MaxEvidenceValue {
		return v
	}
	return strings.Clone(v[:MaxEvidenceValue])
}
