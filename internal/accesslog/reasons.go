package accesslog

// ReasonWords says in words what a gateway's reason code means (a
// Record's Reason, as kind logs it): "" when pinprobe does not know the
// code. The code itself stays the reason; the words go beside it.
func ReasonWords(kind Kind, code string) string {
	switch kind {
	case GCP:
		return gcpReasonWords[code]
	}
	return ""
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
