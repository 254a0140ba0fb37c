package probe

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// BodyPrefix is how many bytes of a response body pinprobe keeps as evidence
// and hashes into a failure's fingerprint.
const BodyPrefix = 512

// NormalizeBody reduces a body prefix to what stays the same between two
// answers of the same producer: lower case, white space collapsed, and
// every run of characters that holds a digit (request IDs, UUIDs, times,
// addresses) replaced by "#".
func NormalizeBody(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	for _, tok := range strings.Fields(strings.ToLower(string(b))) {
		if out.Len() > 0 {
			out.WriteByte(' ')
		}
		writeMasked(&out, tok)
	}
	return out.String()
}

// writeMasked writes tok with every maximal run of letters, digits and
// hex-ish punctuation that contains a digit replaced by "#".
func writeMasked(out *strings.Builder, tok string) {
	start := -1
	digit := false
	flush := func(end int) {
		if start < 0 {
			return
		}
		if digit {
			out.WriteByte('#')
		} else {
			out.WriteString(tok[start:end])
		}
		start, digit = -1, false
	}
	for i, r := range tok {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' || r == ':'
		if !word {
			flush(i)
			out.WriteRune(r)
			continue
		}
		if start < 0 {
			start = i
		}
		if unicode.IsDigit(r) {
			digit = true
		}
	}
	flush(len(tok))
}

// BodyHash is the fingerprint hash of a body prefix: FNV-1a of its
// normalised form, 0 for an empty body.
func BodyHash(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(NormalizeBody(b)))
	return h.Sum64()
}
