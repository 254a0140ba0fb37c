package phrase

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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
