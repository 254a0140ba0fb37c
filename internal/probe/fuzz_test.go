package probe

import (
	"strings"
	"testing"
)

// Fuzz targets for every parser of the command line that lives in probe:
// no input may panic, an error is one line, and what parses holds together.

func FuzzParseResolve(f *testing.F) {
	for _, s := range []string{"app.test:443:127.0.0.1", "app.test:80:127.0.0.1,::1", "[::1]:80:127.0.0.1",
		"h:0:1.2.3.4", "h:65536:1.2.3.4", "h:80:[::1]", "h:80:fe80::1%eth0", ":80:1.1.1.1", "h:80:", "h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, addrs, err := ParseResolve(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("ParseResolve(%q): error %q is not one line", s, err)
			}
			return
		}
		if key == "" || len(addrs) == 0 {
			t.Errorf("ParseResolve(%q) = %q, %v: accepted without a key or an address", s, key, addrs)
		}
		for _, a := range addrs {
			if !a.IsValid() || a.Zone() != "" {
				t.Errorf("ParseResolve(%q): address %v", s, a)
			}
		}
	})
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"https://sign.example.com/", "http://u:p@h:8080/x?token=t#f", "http://[::1]:80/", "ftp://h/",
		"h/x", "http:///x", "http://h:99999/", "https://TOKEN@h/", "http://[::1", "\x00://\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := ParseTarget(raw)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("ParseTarget(%q): error %q is not one line", raw, err)
			}
			return
		}
		if tg.Host() == "" || tg.Port() == 0 || !(tg.URL.Scheme == "http" || tg.URL.Scheme == "https") {
			t.Errorf("ParseTarget(%q) = %v: no host, port or scheme", raw, tg.URL)
		}
		// What is shown never holds the URL's password.
		if u := tg.URL.User; u != nil {
			if pass, ok := u.Password(); ok && len(pass) >= 4 && strings.Contains(tg.String(), pass) && !strings.Contains(Redacted, pass) {
				t.Errorf("ParseTarget(%q).String() = %q shows the password", raw, tg.String())
			}
		}
	})
}

func FuzzRedactRawURL(f *testing.F) {
	for _, s := range []string{"https://u:hunter22@h/?token=t0k3n", "u:hunter22@h", "http://[::1:hunter22@h/", "x?auth=hunter22&q=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := RedactRawURL(raw)
		// A password written as user:PASSWORD@ never survives.
		if i := strings.Index(raw, "://"); i >= 0 {
			rest := raw[i+3:]
			if at := strings.Index(rest, "@"); at > 0 && !strings.ContainsAny(rest[:at], "/?#") {
				if _, pass, ok := strings.Cut(rest[:at], ":"); ok && pass != "" && pass != Redacted && strings.Contains(authority(out), ":"+pass+"@") {
					t.Errorf("RedactRawURL(%q) = %q keeps the password %q", raw, out, pass)
				}
			}
		}
	})
}

// authority is what follows the first "://" of s up to the path, query or
// fragment: where a URL's user:password@ is (text before the scheme, or in
// the path, may hold ":x@" by chance).
func authority(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return ""
	}
	s = s[i+3:]
	if j := strings.IndexAny(s, "/?#"); j >= 0 {
		s = s[:j]
	}
	return s
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"X-Trace: 1", "Authorization: Bearer x", "NoColon", ": v", "A : b", "A:\r\nB: c", "Ü: x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, _, err := ParseHeader(s)
		if err != nil {
			return
		}
		if name == "" || strings.ContainsAny(name, " \t\r\n") {
			t.Errorf("ParseHeader(%q): name %q", s, name)
		}
		if strings.Contains(RedactHeaderArg(s), "\n") && IsSecret(name) {
			t.Errorf("RedactHeaderArg(%q) spans lines", s)
		}
	})
}
