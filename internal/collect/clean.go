package collect

import (
	"encoding/base64"
	"sort"
	"strings"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Redacted replaces every secret in a report.
const Redacted = probe.Redacted

// SetSecrets gives the aggregator the secret values the run sends (see
// probe.Secrets): wherever one comes back — a gateway that echoes the
// request into its error page, a header that reflects it, an instance
// header that names the caller — the report shows REDACTED instead. The
// user name and password inside a Basic credential count too, as a server
// that decodes it may echo them. Call it before Add.
func (a *Aggregator) SetSecrets(values []string) {
	var vs []string
	for _, v := range values {
		vs = append(vs, v)
		if scheme, cred, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "basic") {
			if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
				vs = append(vs, string(b))
				if _, pass, ok := strings.Cut(string(b), ":"); ok {
					vs = append(vs, pass)
				}
			}
		}
	}
	// Longest first, so a secret that contains another goes whole.
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	a.cl = cleaner{}
	var pairs []string
	for _, v := range vs {
		if len(v) >= 4 { // as probe.Secrets: shorter ones would mangle everything
			pairs = append(pairs, v, Redacted)
			a.cl.secrets = append(a.cl.secrets, v)
		}
	}
	if len(pairs) > 0 {
		a.cl.scrub = strings.NewReplacer(pairs...)
	}
}

// cleaner makes text from the network safe to keep and show in any format, once,
// where it enters the aggregator: the run's secrets replaced first (on the bytes
// as they came), then control and bidi characters escaped. Evidence is cut
// (probe.BodyPrefix, probe.MaxEvidenceValue) and a secret may straddle the cut,
// so where a value may have been cut, an end that begins a secret is REDACTED.
type cleaner struct {
	scrub   *strings.Replacer // nil when the run sends no secret
	secrets []string          // longest first
	// groups caches cleaned instance header values: a server sends the
	// same few again and again, and every response carries them.
	groups map[string]string
}

// maxCachedGroups bounds cleaner.groups; past it the cache starts again.
const maxCachedGroups = 1024

// text cleans s, one line unless multiline; cut says that s may have been
// cut at its end.
func (c *cleaner) text(s string, cut, multiline bool) string {
	return words.SafeText(c.scrubbed(s, cut), multiline)
}

// body cleans the first bytes of a body, which may have been cut (cut) by
// the engine's bound or by a connection that ended in it: invalid UTF-8
// written out as \xNN, lines kept.
func (c *cleaner) body(b []byte, cut bool) string {
	if c.scrub != nil {
		b = []byte(c.scrubbed(string(b), cut))
	}
	return words.SafeText(words.Printable(b), true)
}

// group cleans an instance header's value (probe.Result.Groups), which the
// engine cuts at probe.MaxEvidenceValue bytes.
func (c *cleaner) group(v string) string {
	if c.scrub == nil && plainASCII(v) {
		return v
	}
	if s, ok := c.groups[v]; ok {
		return s
	}
	s := c.text(v, len(v) >= probe.MaxEvidenceValue, false)
	if c.groups == nil || len(c.groups) >= maxCachedGroups {
		c.groups = map[string]string{}
	}
	c.groups[v] = s
	return s
}

// scrubbed is s with the run's secrets REDACTED and, when s may have been
// cut, the beginning of one at its end.
func (c *cleaner) scrubbed(s string, cut bool) string {
	if c.scrub == nil {
		return s
	}
	s = c.scrub.Replace(s)
	if !cut || strings.HasSuffix(s, Redacted) {
		return s
	}
	longest := 0
	for _, v := range c.secrets {
		for n := min(len(v)-1, len(s)); n > longest; n-- {
			if strings.HasSuffix(s, v[:n]) {
				longest = n
				break
			}
		}
	}
	if longest > 0 {
		return s[:len(s)-longest] + Redacted
	}
	return s
}

// plainASCII reports whether s is printable ASCII, which cleaning leaves
// as it is when there is no secret to scrub.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
