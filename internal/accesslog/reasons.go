package accesslog

import "strings"

// ReasonWords says a Record's Reason of a log of kind in words, to follow
// "the gateway says: " ("it could not connect to the backend"); "" when
// pinprobe has no words for it. Envoy's flags may come several at once
// ("UF,URX"): each is said, in the log's order.
func ReasonWords(kind Kind, code string) string {
	code = strings.TrimSpace(code)
	switch kind {
	case Envoy:
		var out []string
		for _, f := range strings.FieldsFunc(code, func(c rune) bool { return c == ',' || c == ' ' }) {
			w := envoyFlags[f]
			if w == "" {
				w = envoyFlags[envoyLongFlags[f]]
			}
			if w == "" {
				return ""
			}
			out = append(out, w)
		}
		return strings.Join(out, "; ")
	case HAProxy:
		return haproxyTermination(code)
	case Azure:
		return azureReasons[strings.ToUpper(code)]
	case ALB:
		return albReasons[code]
	case GCP:
		return gcpReasonWords[code]
	}
	return ""
}

// envoyFlags are Envoy's %RESPONSE_FLAGS%, in words.
var envoyFlags = map[string]string{
	"UH":    "no backend of the cluster was healthy",
	"UF":    "it could not connect to the backend",
	"UO":    "the backend's circuit breaker was open (overflow)",
	"NR":    "no route matched the request",
	"URX":   "it gave up after the retries or connect attempts allowed",
	"NC":    "the route's cluster was not found",
	"DT":    "the request took longer than its maximum duration",
	"DC":    "the client closed the connection",
	"LH":    "the local service failed its health check",
	"UT":    "the backend did not answer in time",
	"LR":    "it reset the connection itself",
	"UR":    "the backend reset the connection",
	"UC":    "the backend closed the connection",
	"DI":    "fault injection delayed the request",
	"FI":    "fault injection aborted the request",
	"RL":    "the request was rate-limited locally",
	"UAEX":  "the external authorization service denied the request",
	"RLSE":  "the rate-limit service failed",
	"IH":    "a strictly checked request header was invalid",
	"SI":    "the stream was idle too long",
	"DPE":   "the client's request broke the HTTP protocol",
	"UPE":   "the backend's response broke the HTTP protocol",
	"UMSDR": "the request to the backend took longer than its maximum duration",
	"OM":    "the overload manager ended the request",
	"DF":    "resolving the backend's name failed",
	"DO":    "the request was dropped to shed load (drop overload)",
	"DR":    "the client reset the stream",
	"UDO":   "the request was dropped before it reached the backend",
}

// envoyLongFlags are %RESPONSE_FLAGS_LONG%'s names of the flags.
var envoyLongFlags = map[string]string{
	"NoHealthyUpstream": "UH", "UpstreamConnectionFailure": "UF", "UpstreamOverflow": "UO", "NoRouteFound": "NR",
	"UpstreamRetryLimitExceeded": "URX", "NoClusterFound": "NC", "DurationTimeout": "DT",
	"DownstreamConnectionTermination": "DC", "FailedLocalHealthCheck": "LH", "UpstreamRequestTimeout": "UT",
	"LocalReset": "LR", "UpstreamRemoteReset": "UR", "UpstreamConnectionTermination": "UC", "DelayInjected": "DI",
	"FaultInjected": "FI", "RateLimited": "RL", "UnauthorizedExternalService": "UAEX", "RateLimitServiceError": "RLSE",
	"InvalidEnvoyRequestHeaders": "IH", "StreamIdleTimeout": "SI", "DownstreamProtocolError": "DPE",
	"UpstreamProtocolError": "UPE", "UpstreamMaxStreamDurationReached": "UMSDR", "OverloadManagerTerminated": "OM",
	"DnsResolutionFailed": "DF", "DropOverload": "DO", "DownstreamRemoteReset": "DR",
}

// haproxyTermination says HAProxy's termination state (its first two
// characters: who ended the session, and at which step) in words.
func haproxyTermination(code string) string {
	if len(code) < 2 || code[:2] == "--" {
		return ""
	}
	if w, ok := haproxyStates[code[:2]]; ok {
		return w
	}
	who, ok1 := haproxyWho[code[0]]
	when, ok2 := haproxyStep[code[1]]
	if !ok1 || !ok2 {
		return ""
	}
	return who + " " + when
}

// haproxyStates are the termination states seen most, in words.
var haproxyStates = map[string]string{
	"SC": "it could not connect to the backend: refused or reset",
	"sC": "connecting to the backend timed out",
	"SH": "the backend closed or reset the connection before its response headers",
	"sH": "the backend did not answer in time",
	"SD": "the backend closed or reset the connection during the response",
	"sD": "the backend stopped sending the response in time",
	"sQ": "the request waited too long in the queue for a server",
	"PR": "the proxy refused the request (a rule, or an invalid request)",
	"PH": "the proxy refused the backend's response (invalid, or a rule)",
	"LR": "the proxy answered the request itself",
	"CD": "the client closed the connection during the response",
	"CR": "the client closed the connection before it sent its request",
	"CH": "the client closed the connection while waiting for the response",
	"cD": "the client stopped reading the response in time",
	"cR": "the client did not send its request in time",
	"RC": "a resource ran out while connecting to the backend",
	"IC": "an internal error while connecting to the backend",
	"KC": "the session was killed by the administrator",
	"DC": "the backend was marked down",
}

var (
	haproxyWho = map[byte]string{'C': "the client ended the session", 'S': "the backend ended the session",
		'P': "the proxy ended the session", 'L': "the proxy answered", 'R': "a resource ran out",
		'I': "an internal error ended the session", 'D': "the backend was marked down", 'U': "the session moved to another backend",
		'K': "the session was killed", 'c': "the client timed out", 's': "the backend timed out"}
	haproxyStep = map[byte]string{'R': "while the request came", 'Q': "while waiting in the queue", 'C': "while connecting to the backend",
		'H': "while waiting for the response headers", 'D': "during the response", 'L': "at the end of the response",
		'T': "while the request was held (tarpit)", '-': "when it ended"}
)

// azureReasons are Application Gateway's ErrorInfo values.
var azureReasons = map[string]string{
	"ERRORINFO_UPSTREAM_NO_LIVE":           "it found no healthy, reachable backend",
	"ERRORINFO_UPSTREAM_CLOSED_CONNECTION": "the backend closed the connection before it answered",
	"ERRORINFO_UPSTREAM_TIMED_OUT":         "the backend did not answer within the request timeout",
	"ERRORINFO_CLIENT_CLOSED_REQUEST":      "the client closed the connection first",
	"ERRORINFO_INVALID_METHOD":             "the request's method was invalid",
	"ERRORINFO_INVALID_REQUEST":            "the request was invalid",
	"ERRORINFO_INVALID_VERSION":            "the request's HTTP version was invalid",
	"ERRORINFO_INVALID_HOST":               "the request's Host was invalid",
	"ERRORINFO_INVALID_CONTENT_LENGTH":     "the request's Content-Length was invalid",
	"ERRORINFO_HTTPS_NO_CERT":              "the client sent no certificate",
}

// albReasons are the ALB's error_reason values about its targets (the
// others are of its authentication, before any target).
var albReasons = map[string]string{
	"LambdaConnectionError":   "it could not connect to the Lambda function",
	"LambdaConnectionTimeout": "connecting to the Lambda function timed out",
	"LambdaInvalidResponse":   "the Lambda function's response was invalid",
	"LambdaUnhandled":         "the Lambda function failed with an unhandled error",
	"LambdaThrottling":        "the Lambda function was throttled",
}

// gcpReasonWords are Google Cloud load balancers' statusDetails, as its
// logging documentation explains them.
var gcpReasonWords = map[string]string{
	"failed_to_connect_to_backend":                          "the load balancer could not connect to the backend",
	"failed_to_pick_backend":                                "the load balancer found no healthy backend to send the request to",
	"backend_timeout":                                       "the backend did not answer within the backend service's timeout",
	"backend_connection_closed_before_data_sent_to_client":  "the backend closed its connection before it sent a response",
	"backend_connection_closed_after_partial_response_sent": "the backend closed its connection in the middle of its response",
	"backend_early_response_with_non_error_status":          "the backend answered before it had read the whole request",
	"aborted_request_due_to_backend_early_response":         "the backend answered before it had read the whole request, with an error",
	"backend_response_corrupted":                            "the backend's response was malformed",
	"backend_response_headers_too_long":                     "the backend's response headers were too long",
	"client_disconnected_before_any_response":               "the client closed the connection before any response",
	"client_disconnected_after_partial_response":            "the client closed the connection in the middle of the response",
	"client_timed_out":                                      "the client sent nothing for too long",
	"denied_by_security_policy":                             "a Cloud Armor security policy denied the request",
	"throttled_by_security_policy":                          "a Cloud Armor rate limit throttled the request",
	"banned_by_security_policy":                             "a Cloud Armor rate-based ban refused the request",
	"handled_by_identity_aware_proxy":                       "Identity-Aware Proxy answered the request",
	"invalid_request_headers":                               "the request's headers were invalid",
	"headers_too_long":                                      "the request's headers were too long",
	"ssl_certificate_chain_verification_failed":             "the backend's certificate chain did not verify",
	"ssl_certificate_san_verification_failed":               "the backend's certificate did not name it",
	"websocket_handshake_failed":                            "the WebSocket handshake with the backend failed",
	"response_sent_by_backend":                              "the backend sent the response",
	"redirected_by_load_balancer":                           "the load balancer redirected the request",
	"response_from_cache":                                   "the response came from Cloud CDN's cache",
	"response_from_cache_validated":                         "the response came from Cloud CDN's cache, validated by the backend",
}
