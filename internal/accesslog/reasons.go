package accesslog

import "strings"

// ReasonWords says a gateway's own reason for a request (Record.Reason)
// in words a person reads first, "" when pinprobe does not know the code:
// the caller keeps the raw code beside the words.
func ReasonWords(kind Kind, code string) string {
	switch kind {
	case HAProxy:
		return haproxyReason(code)
	case Azure:
		return azureReasons[strings.ToUpper(code)]
	case ALB:
		return albReasons[code]
	case GCP:
		return gcpReasonWords[code]
	}
	return ""
}

// haproxyReason says a termination state (%tsc, %ts): who ended the
// session (its first character) and at which step (its second).
func haproxyReason(code string) string {
	if len(code) < 2 {
		return ""
	}
	switch code[:2] {
	case "SC":
		return "the backend refused the connection, or reset it while connecting"
	case "sC":
		return "connecting to the backend timed out"
	case "sQ":
		return "the request timed out in the queue for a backend"
	case "SH":
		return "the backend closed the connection before its response headers"
	case "sH":
		return "the backend timed out before its response headers"
	case "PH":
		return "the proxy refused the backend's response (invalid, or blocked by a rule)"
	}
	who, when := haproxyEnder[code[0]], haproxyStep[code[1]]
	if who == "" || when == "" {
		return ""
	}
	return who + " " + when
}

// haproxyEnder and haproxyWhen are the termination state's two first
// characters, as HAProxy's documentation of the log describes them.
var (
	haproxyEnder = map[byte]string{
		'C': "the client aborted", 'S': "the backend aborted", 'P': "the proxy aborted",
		'L': "the proxy answered itself", 'R': "a resource of the proxy ran out", 'I': "the proxy hit an internal error",
		'D': "the session was killed as its backend went down", 'U': "the session was killed as an active server came back",
		'K': "an administrator killed the session", 'c': "the client timed out", 's': "the backend timed out",
	}
	haproxyStep = map[byte]string{
		'R': "while the request was read", 'Q': "while queued for a backend", 'C': "while connecting to the backend",
		'H': "before the response headers", 'D': "while the body was sent", 'L': "while the last data was sent",
		'T': "while the request was tarpitted",
	}
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
