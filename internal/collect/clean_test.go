package collect_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// The secrets of these tests: a bearer token, and a Basic credential
// (alice:hunter2-basic) as -H or a URL's user:password gives it.
const (
	cleanToken = "tok3n-straddle-secret"
	cleanBasic = "alice:hunter2-basic"
)

var cleanSecrets = []string{
	"Bearer " + cleanToken, cleanToken,
	"Basic " + base64.StdEncoding.EncodeToString([]byte(cleanBasic)), base64.StdEncoding.EncodeToString([]byte(cleanBasic)),
}

// leaks returns the parts of the test secrets in s: any of their first
// four or more bytes (a token cut anywhere), and the decoded Basic
// credential's password.
func leaks(s string) []string {
	var out []string
	for _, v := range []string{cleanToken, cleanSecrets[3], cleanBasic, "hunter2-basic"} {
		for n := 4; n <= len(v); n++ {
			if strings.Contains(s, v[:n]) {
				out = append(out, v[:n])
				break
			}
		}
	}
	return out
}

func jsonOf(t *testing.T, r *report.Report) string { return string(docfix.JSON(t, r)) }

// TestInstanceValuesCleaned: instance header values (the groups) are
// cleaned where they enter, as the samples' headers are: a server that
// echoes the caller's bearer token, its Basic credential or the password
// inside it into X-Served-By shows REDACTED, and control and bidi
// characters are written out.
func TestInstanceValuesCleaned(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1")
	agg.SetGroupBy([]string{"X-Served-By"})
	agg.SetSecrets(cleanSecrets)
	values := map[string]string{
		"Bearer " + cleanToken:       "REDACTED",
		cleanSecrets[2]:              "REDACTED",
		"user " + cleanBasic:         "user REDACTED",
		"gw-1 pass=hunter2-basic":    "gw-1 pass=REDACTED",
		"gw-\u202e2":                 `gw-\u{202e}2`,
		"gw-\u2066" + "3\u009b31m":   `gw-\u{2066}3\u{009b}31m`,
		"gw-\x1b[2J4":                `gw-\x1b[2J4`,
		"<img src=x onerror=alert>":  "<img src=x onerror=alert>", // markup is the renderers' to escape
		"plain-gw-5":                 "plain-gw-5",
		"gw-6 tok3n-straddle-secret": "gw-6 REDACTED",
	}
	for range 3 { // the second and third time from the cache
		for v := range values {
			agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 0, Start: fixture.FzStart, Status: 200, Latency: time.Millisecond, Groups: []string{v}}))
		}
	}
	rep := fixture.FzClose(agg, time.Second)
	got := map[string]int64{}
	for _, g := range rep.Groups {
		got[g.Value] = g.Requests
	}
	for raw, want := range values {
		if got[want] == 0 {
			t.Errorf("X-Served-By %q: no group %q; groups %v", raw, want, got)
		}
	}
	if l := leaks(jsonOf(t, rep)); len(l) > 0 {
		t.Errorf("the report holds %q", l)
	}
}

// TestSecretStraddlingTheCut: the engine keeps the first probe.BodyPrefix
// bytes of a body and probe.MaxEvidenceValue of a header value; a secret
// that straddles that cut leaves its first bytes at the end, which are
// REDACTED too, in the sample's body and headers, the fingerprint's body
// and Server, and the instance values. A value that was not cut keeps an
// end that merely looks like a secret's beginning.
func TestSecretStraddlingTheCut(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1")
	agg.SetGroupBy([]string{"X-Served-By"})
	agg.SetSecrets(cleanSecrets)
	cut := func(n int, tail string) string { return strings.Repeat("a", n-len(tail)) + tail }
	body := []byte(cut(probe.BodyPrefix, "Authorization: Bearer tok3n-str"))
	value := cut(probe.MaxEvidenceValue, "echo=tok3n-s")
	server := cut(probe.MaxEvidenceValue, "gw Basic "+cleanSecrets[3][:6])
	group := cut(probe.MaxEvidenceValue, "by "+cleanToken[:5])
	h := http.Header{"X-Echo": {value, "second"}, "Server": {server}}
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{
		Endpoint: 0, Start: fixture.FzStart, Status: 502, Latency: time.Millisecond, Server: server,
		BodyHash: probe.BodyHash(body), Exemplar: body, Groups: []string{group},
		Evidence: &probe.ResponseEvidence{Proto: "HTTP/1.1", Header: h, Body: body},
	}))
	// Whole: a body that ends as a secret begins, and was not cut.
	whole := []byte("please send Authorization: Bearer")
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{
		Endpoint: 0, Start: fixture.FzStart, Status: 503, Latency: time.Millisecond,
		BodyHash: probe.BodyHash(whole), Exemplar: whole, Groups: []string{"gw-tok"},
		Evidence: &probe.ResponseEvidence{Proto: "HTTP/1.1", Body: whole},
	}))
	rep := fixture.FzClose(agg, time.Second)
	var instance, uncut string
	for _, g := range rep.Groups {
		if g.Value == "gw-tok" {
			uncut = g.Value
		} else {
			instance = g.Value
		}
	}
	s := rep.Endpoints[0].Samples
	if len(s) != 2 {
		t.Fatalf("%d samples; want 2", len(s))
	}
	for what, got := range map[string]string{
		"sample body": s[0].Body, "sample X-Echo": s[0].Headers["X-Echo"], "sample Server": s[0].Headers["Server"],
		"fingerprint body": rep.Fingerprints[0].Body, "fingerprint Server": rep.Fingerprints[0].Server, "instance": instance,
	} {
		if !strings.Contains(got, collect.Redacted) || len(leaks(got)) > 0 || strings.Contains(got, "tok") {
			t.Errorf("%s ends %q; want the secret's beginning REDACTED", what, got[max(0, len(got)-40):])
		}
	}
	if want := "aaaecho=" + collect.Redacted + ", second"; !strings.HasSuffix(s[0].Headers["X-Echo"], want) {
		t.Errorf("X-Echo ends %q; want %q: each value cut on its own", s[0].Headers["X-Echo"][len(s[0].Headers["X-Echo"])-40:], want)
	}
	if s[1].Body != string(whole) || uncut != "gw-tok" {
		t.Errorf("uncut: body %q, instance %q; want them as sent", s[1].Body, uncut)
	}
	if l := leaks(jsonOf(t, rep)); len(l) > 0 {
		t.Errorf("the report holds %q", l)
	}
}
