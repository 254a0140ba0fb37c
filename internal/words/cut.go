package words

import (
	"net/netip"
	"strings"
)

// CutMiddle shortens s to n runes with an ellipsis in the middle, so the
// host and the end of a path stay; below 5 runes there is nothing worth
// keeping of both ends, and s is left whole.
func CutMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 5 {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// ShellQuote is s as one word of a POSIX shell: as it is when it holds
// only characters no shell treats specially, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FamilyOf names a's address family as the reports do: "ipv4" (an IPv4
// address, mapped or not) or "ipv6".
func FamilyOf(a netip.Addr) string {
	if a.Unmap().Is4() {
		return "ipv4"
	}
	return "ipv6"
}
