package report

import "strings"

// Redacted replaces every secret in a report.
const Redacted = "REDACTED"

// IsSecretHeader reports whether a header's value must never appear in a
// report: credentials, cookies, and any name containing token, key or secret.
func IsSecretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return strings.Contains(n, "token") || strings.Contains(n, "key") || strings.Contains(n, "secret")
}
