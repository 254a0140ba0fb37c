package probe

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Redacted replaces every secret in what pinprobe shows.
const Redacted = "REDACTED"

// IsSecret reports whether a header or query parameter named name carries a
// secret that no report or message may show: credentials, cookies, sessions,
// signatures, and any name that contains token, key, secret, pass, auth,
// session, jwt or signature.
func IsSecret(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "cookie", "set-cookie", "sig", "code", "pwd", "otp", "state", "nonce":
		return true
	}
	for _, s := range []string{"token", "key", "secret", "pass", "auth", "session", "jwt", "signature", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// RedactURL returns u as text with its credentials (a password, or a user
// name given alone, which is usually a token) and the values of secret
// query parameters replaced by REDACTED.
func RedactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), Redacted)
		} else if c.User.Username() != "" {
			c.User = url.User(Redacted)
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

var (
	rawUserinfo = regexp.MustCompile(`(://)([^/?#]*)@`)
	rawQueryArg = regexp.MustCompile(`([?&;])([^=&;#]*)=([^&;#]*)`)
)

// RedactRawURL redacts a URL given as text that may not parse, for error
// messages: its userinfo and the values of secret-looking query parameters.
func RedactRawURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		return RedactURL(u)
	}
	s := rawUserinfo.ReplaceAllStringFunc(raw, func(m string) string {
		parts := rawUserinfo.FindStringSubmatch(m)
		user, _, hasPass := strings.Cut(parts[2], ":")
		if hasPass {
			return parts[1] + user + ":" + Redacted + "@"
		}
		return parts[1] + Redacted + "@"
	})
	// A URL without a scheme ("user:pass@host/x") has its userinfo before the first @ too.
	if !strings.Contains(s, "://") {
		if at := strings.Index(s, "@"); at > 0 && !strings.ContainsAny(s[:at], "/?#") {
			user, _, hasPass := strings.Cut(s[:at], ":")
			if hasPass {
				s = user + ":" + Redacted + s[at:]
			} else {
				s = Redacted + s[at:]
			}
		}
	}
	return rawQueryArg.ReplaceAllStringFunc(s, func(m string) string {
		p := rawQueryArg.FindStringSubmatch(m)
		if name, err := url.QueryUnescape(p[2]); err == nil && IsSecret(name) || IsSecret(p[2]) {
			return p[1] + p[2] + "=" + Redacted
		}
		return m
	})
}

// RedactHeaderArg redacts a header as given on the command line, even when
// it is malformed. The name is the header-name characters it starts with,
// so "X-Auth=abc" and "Authorization Bearer x" (no colon) are still
// recognised; when the name is a secret's (what separates it from the value
// is kept, so a malformed argument still shows its fault), or the argument has no colon and
// starts with an authorization scheme ("Bearer x": the name was forgotten),
// only the name is kept.
func RedactHeaderArg(h string) string {
	t := strings.TrimLeft(h, " \t")
	n := 0
	for n < len(t) && httpguts.IsTokenRune(rune(t[n])) {
		n++
	}
	name, rest := t[:n], strings.TrimLeft(t[n:], " \t")
	if IsSecret(name) && strings.Trim(rest, ": \t") == "" {
		// A name with no value holds no secret: said as it was given
		// ("-H Authorization" is not "Authorization: REDACTED").
		return strings.TrimRight(t, " \t")
	}
	if IsSecret(name) {
		// Keep what separates the name from the value, so that a
		// malformed argument still shows what is wrong with it.
		sep := ": "
		switch {
		case rest != "" && rest[0] != ':' && t[n] != ' ' && t[n] != '\t':
			sep = t[n : n+1]
		case rest != "" && rest[0] != ':':
			sep = " "
		}
		return name + sep + Redacted
	}
	if !strings.Contains(h, ":") && isAuthScheme(name) && strings.TrimSpace(t[n:]) != "" {
		return name + " " + Redacted
	}
	return h
}

func isAuthScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "digest", "token", "negotiate", "apikey", "hoba", "mutual", "aws4-hmac-sha256":
		return true
	}
	return false
}

// Secrets returns the secret values a target sends, to be scrubbed from
// anything that comes back (a gateway that echoes the request into its
// error page must not put a token into a shareable report): the values of
// secret headers, the URL's credentials (and the Basic authorization made
// of them), and the values of secret query parameters. Values shorter than
// four bytes are left out: scrubbing them would mangle everything.
func Secrets(t *Target) []string {
	var out []string
	add := func(v string) {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	for k, vs := range t.Header {
		if !IsSecret(k) {
			continue
		}
		for _, v := range vs {
			add(v)
			if scheme, cred, ok := strings.Cut(v, " "); ok && scheme != "" {
				add(strings.TrimSpace(cred)) // the credential of "Bearer X" alone
			}
		}
	}
	if u := t.URL.User; u != nil {
		pass, has := u.Password()
		if has {
			add(pass)
		} else {
			add(u.Username())
		}
		add(base64.StdEncoding.EncodeToString([]byte(u.Username() + ":" + pass)))
	}
	for k, vs := range t.URL.Query() {
		if IsSecret(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}
