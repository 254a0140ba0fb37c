package probe

import (
	"net/url"
	"strings"
)

// Redacted replaces every secret in what pinprobe shows.
const Redacted = "REDACTED"

// IsSecret reports whether a header or query parameter named name carries a
// secret that no report may show: credentials, cookies, and any name that
// contains token, key, secret, password or signature.
func IsSecret(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie", "sig", "code":
		return true
	}
	for _, s := range []string{"token", "key", "secret", "password", "passwd", "signature"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// RedactURL returns u as text with its password and the values of secret
// query parameters replaced by REDACTED.
func RedactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), Redacted)
		}
	}
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for k, vs := range q {
			if IsSecret(k) {
				for i := range vs {
					vs[i] = Redacted
				}
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return c.String()
}
