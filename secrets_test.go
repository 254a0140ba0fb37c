package main

// Secrets a server sends back, and what a server names its instances:
// neither reaches any format or the -o file as it came.

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// echoingGateway answers in turn as four instances, named in X-Served-By:
// the first fails (502), names itself with markup and a bidi override, and
// echoes the caller's Authorization into a header and its error page so
// that it straddles the cut at 512 bytes; the second names itself with the
// caller's Authorization, the others with a Markdown link and a C1
// control.
func echoingGateway(n *atomic.Int64) http.Handler {
	pad := func(n int, s string) string { return strings.Repeat("x", max(0, n)) + s }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch n.Add(1) % 4 {
		case 0:
			w.Header().Set("X-Served-By", "<img src=x onerror=alert(1)>\u202egw")
			w.Header().Set("X-Echo", pad(512-12, auth))
			w.Header().Set("Server", pad(512-len("gw ")-12, "gw "+auth))
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, pad(512-12, auth)+" and more after the cut")
		case 1:
			w.Header().Set("X-Served-By", auth)
		case 2:
			w.Header().Set("X-Served-By", "[l](javascript:alert(1))")
		case 3:
			w.Header().Set("X-Served-By", "gw-\u009b31m-\u2066")
		}
	})
}

// TestEchoedSecretsNeverShown: a gateway that echoes the caller's bearer
// token or Basic credential, into an instance header, a header and its
// error page cut at 512 bytes, shows none of it in any format, on stderr or
// in the -o file; the instance names it chose reach the text report with
// their control and bidi characters written out, and Markdown (as
// cmark-gfm renders it) and HTML as text, the title included.
func TestEchoedSecretsNeverShown(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	port := testserver.ServeSamePort(t, echoingGateway(&n), nil, testserver.Lo4a)
	resolve := fmt.Sprintf("app.test:%d:127.0.0.1", port)
	const token = "Zq9bearer-token-echoed"
	for _, cred := range []struct {
		name   string
		args   []string
		secret []string // what must never be shown, not even its first 4 bytes
	}{
		{"bearer", []string{"-H", "Authorization: Bearer " + token, fmt.Sprintf("http://app.test:%d/", port)}, []string{token}},
		{"basic", []string{fmt.Sprintf("http://alice:Zq9basic-pass@app.test:%d/", port)}, []string{"Zq9basic-pass", "YWxpY2U6WnE5"}},
	} {
		t.Run(cred.name, func(t *testing.T) {
			for _, format := range []string{"text", "json", "markdown", "html"} {
				out := filepath.Join(t.TempDir(), "run.json")
				args := append([]string{"-q", "-r", "1000", "-n", "80", "--no-request-id", "--resolve", resolve, "-o", out, "--format", format}, cred.args...)
				code, stdout, stderr := pinprobe(t, args...)
				if code != exitOK {
					t.Fatalf("--format %s: exit %d\n%s", format, code, stderr)
				}
				saved, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				for where, text := range map[string]string{format: stdout, "stderr": stderr, "-o": string(saved)} {
					for _, s := range cred.secret {
						if i := strings.Index(text, s[:4]); i >= 0 {
							t.Errorf("--format %s: %s holds the secret's %q: …%s…", format, where, s[:4], text[max(0, i-40):min(len(text), i+40)])
						}
					}
					if strings.ContainsAny(text, "\u202e\u2066\u009b") {
						t.Errorf("--format %s: %s holds a raw bidi or C1 control character", format, where)
					}
				}
				if !strings.Contains(stdout, "X-Served-By") || !strings.Contains(stdout, "onerror") {
					t.Errorf("--format %s: the instances are not in the report", format)
				}
				switch format {
				case "text":
					if !strings.Contains(stdout, `\u{202e}gw`) || !strings.Contains(stdout, `\u{009b}31m`) {
						t.Errorf("text: the instances' control characters are not written out:\n%s", stdout)
					}
				case "markdown":
					title, _, _ := strings.Cut(stdout, "\n")
					if !strings.Contains(title, "onerror") {
						t.Errorf("markdown: the title %q does not name the failing instance", title)
					}
					checkMarkdownAsText(t, stdout, "<img", `href="javascript`)
				case "html":
					if strings.Contains(stdout, "<img src=x") || strings.Contains(stdout, `href="javascript`) {
						t.Errorf("html: an instance's name became markup")
					}
				}
			}
		})
	}
}

// checkMarkdownAsText renders doc with cmark-gfm, raw HTML let through as
// a careless portal would, and fails if any of leaks is in the HTML.
func checkMarkdownAsText(t *testing.T, doc string, leaks ...string) {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cmark-gfm is not installed: .ci/run installs it")
		}
		t.Log("cmark-gfm is not installed: the Markdown is not rendered")
		return
	}
	cmd := exec.Command(bin, "--unsafe", "-e", "table", "-e", "autolink")
	cmd.Stdin = strings.NewReader(doc)
	html, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	for _, l := range leaks {
		if i := strings.Index(string(html), l); i >= 0 {
			t.Errorf("markdown: cmark-gfm made %q of it: …%s…", l, html[max(0, i-60):min(len(html), i+60)])
		}
	}
}
