package phrase

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

func FamilyName(f string) string {
	if n, ok := FamilyNames[f]; ok {
		return n
	}
	return f
}

func IsASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func IsASCIIAlnum(c byte) bool { return IsASCIILetter(c) || c >= '0' && c <= '9' }

// safeText replaces control characters (except newlines and tabs when
// multiline) and the invisible characters that reorder text with \xNN or
// \u{NNNN}, so what is shown is what was received.
func SafeText(s string, multiline bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == 0x2028, r == 0x2029, r == 0xfeff:
			fmt.Fprintf(&b, `\u{%04x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// limitBytes cuts s to at most n bytes, on a character boundary.
func LimitBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
