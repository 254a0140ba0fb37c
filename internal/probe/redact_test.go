package probe

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestRedactRawURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:pa55@h.test:99999/x?token=abc", "https://user:REDACTED@h.test:99999/x?token=REDACTED"},
		{"https://TOKEN123@h.test/", "https://REDACTED@h.test/"},
		{"ftp://u:secretpw@h.test/?q=1&auth=zz&session=s1&jwt=j&code=c&pass=p", "ftp://u:REDACTED@h.test/?auth=REDACTED&code=REDACTED&jwt=REDACTED&pass=REDACTED&q=1&session=REDACTED"},
		{"user:secretpw@h.test/path?x-amz-signature=zz", "user:REDACTED@h.test/path?x-amz-signature=REDACTED"},
		{"http://[::1:secretpw@h/", "http://[:REDACTED@h/"}, // malformed: what could be a password goes
		{"http://h.test/?q=secretish", "http://h.test/?q=secretish"},
	}
	for _, tt := range tests {
		if got := RedactRawURL(tt.in); got != tt.want {
			t.Errorf("RedactRawURL(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestParseTargetErrorsRedact: a usage error ends up in CI logs, so no
// error of ParseTarget may quote a credential.
func TestParseTargetErrorsRedact(t *testing.T) {
	for _, raw := range []string{
		"https://user:hunter22@app.test:99999/?token=t0k3n",
		"user:hunter22@app.test/?token=t0k3n",
		"https://user:hunter22@/?token=t0k3n",
		"gopher://user:hunter22@app.test/?token=t0k3n",
		"https://user:hunter22@[::1/?token=t0k3n",
		"https://hunter22@app.test:0/?signature=t0k3n",
	} {
		_, err := ParseTarget(raw)
		if err == nil {
			t.Errorf("ParseTarget(%q) = nil error; want one", raw)
			continue
		}
		for _, secret := range []string{"hunter22", "t0k3n"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("ParseTarget(%q): error %q shows %q", raw, err, secret)
			}
		}
	}
}

func TestRedactHeaderArg(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization Bearer abc": "Authorization REDACTED",
		"X-Api-Key:abc":            "X-Api-Key: REDACTED",
		"X-Trace 1":                "X-Trace 1",
		"Accept: text/html":        "Accept: text/html",
		"X-Auth=s3cr3t":            "X-Auth=REDACTED",
		"Authorization:Bearer x":   "Authorization: REDACTED",
		"Authorization":            "Authorization",
		"Authorization: ":          "Authorization:",
		"X-Api-Key:":               "X-Api-Key:",
		"  X-Api-Key=s3cr3t x":     "X-Api-Key=REDACTED",
		"Cookie;a=s3cr3t":          "Cookie;REDACTED",
		"Bearer s3cr3t":            "Bearer REDACTED",
		"bearer":                   "bearer",
		"X-Trace=1":                "X-Trace=1",
	} {
		if got := RedactHeaderArg(in); got != want {
			t.Errorf("RedactHeaderArg(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestSecrets(t *testing.T) {
	tg, err := ParseTarget("https://alice:hunter22@app.test/?token=t0k3n&q=1")
	if err != nil {
		t.Fatal(err)
	}
	tg.Header = http.Header{"Authorization": {"Bearer abcdef"}, "X-Trace": {"visible"}, "X-Api-Key": {"k"}}
	got := Secrets(tg)
	for _, want := range []string{"Bearer abcdef", "abcdef", "hunter22", "YWxpY2U6aHVudGVyMjI=", "t0k3n"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets = %q; want it to hold %q", got, want)
		}
	}
	for _, not := range []string{"visible", "k", "1"} {
		if slices.Contains(got, not) {
			t.Errorf("Secrets = %q; want it without %q", got, not)
		}
	}
}
