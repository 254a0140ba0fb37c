package words

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// sortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Plural returns "s" unless n is 1: fmt.Sprintf("%d endpoint%s", n, Plural(n)).
// Agree is one when n is 1, else many: the verb of n things ("is",
// "are"; "was", "were").
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

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
	if isSafe(s, multiline) {
		return s
	}
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

// isSafe reports whether SafeText would leave s as it is: no control
// character (but newlines and tabs when multiline), no invisible one.
func isSafe(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x20 && c < 0x7f:
		case multiline && (c == '\n' || c == '\t'):
		case c >= 0x80:
			// Not ASCII: let the rune loop of SafeText look, from here.
			for _, r := range s[i:] {
				if r < 0x20 && !(multiline && (r == '\n' || r == '\t')) || r == 0x7f || r >= 0x80 && r < 0xa0 ||
					r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError {
					return false
				}
			}
			return true
		default:
			return false
		}
	}
	return true
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

// printable returns b as text: valid UTF-8 kept, other bytes as \xNN.
func Printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteString(`\x` + strconv.FormatUint(uint64(b[0]), 16))
			b = b[1:]
			continue
		}
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// clock is a time of day in UTC, to the millisecond: "20:43:05.250".
func Clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// sortByCount orders keys of m by count, most first, then by name.
func ByCount(m map[string]int64) []string {
	keys := SortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
