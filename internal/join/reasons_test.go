package join

import "testing"

// TestReasonWords: a reason is said in words by the kind of the logs it
// came from; a code no kind knows has none.
func TestReasonWords(t *testing.T) {
	j := &Join{Logs: []Log{{Kind: "nginx"}, {Kind: "envoy"}, {Kind: "haproxy"}}}
	for code, want := range map[string]string{
		"UF":             "it could not connect to the backend",
		"SC--":           "it could not connect to the backend: refused or reset",
		"TargetNotFound": "",
	} {
		if got := j.ReasonWords(code); got != want {
			t.Errorf("ReasonWords(%q) = %q; want %q", code, got, want)
		}
	}
}
