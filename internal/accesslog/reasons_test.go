package accesslog

import "testing"

// TestReasonWords: Envoy's flags, HAProxy's termination states, Azure's
// ErrorInfo (any case), Google's statusDetails in words; none for what
// pinprobe does not know, nor for a kind that gives no reasons.
func TestReasonWords(t *testing.T) {
	for _, tt := range []struct {
		kind       Kind
		code, want string
	}{
		{Envoy, "UF", "it could not connect to the backend"},
		{Envoy, "UF,URX", "it could not connect to the backend; it gave up after the retries or connect attempts allowed"},
		{Envoy, "UpstreamConnectionFailure", "it could not connect to the backend"},
		{Envoy, "ZZ", ""},
		{HAProxy, "SC--", "it could not connect to the backend: refused or reset"},
		{HAProxy, "sH--", "the backend did not answer in time"},
		{HAProxy, "SL--", "the backend ended the session at the end of the response"},
		{HAProxy, "----", ""},
		{HAProxy, "SQ", "the backend ended the session while waiting in the queue"},
		{ALB, "TargetNotFound", ""},
		{ALB, "LambdaUnhandled", "the Lambda function failed with an unhandled error"},
		{Azure, "errorinfo_upstream_no_live", "it found no healthy, reachable backend"},
		{GCP, "failed_to_connect_to_backend", "the load balancer could not connect to the backend"},
		{GCP, "no_such_detail", ""},
		{Nginx, "failed_to_connect_to_backend", ""},
	} {
		if got := ReasonWords(tt.kind, tt.code); got != tt.want {
			t.Errorf("ReasonWords(%s, %q) = %q; want %q", tt.kind, tt.code, got, tt.want)
		}
	}
	for code := range envoyFlags {
		if ReasonWords(Envoy, code) == "" {
			t.Errorf("ReasonWords(envoy, %s) is empty", code)
		}
	}
	for long, code := range envoyLongFlags {
		if envoyFlags[code] == "" {
			t.Errorf("%s is %s, which has no words", long, code)
		}
	}
}
