// Package accesslog reads gateways' access logs as a stream of Records: nginx
// and HAProxy (default formats or a given log format), Envoy (its default,
// Istio's, or a text_format or json_format), Azure Application Gateway
// exports (every shape its documentation gives), AWS ALB, Traefik and Google
// Cloud load balancer logs. Open detects gzip, a byte-order mark (UTF-8
// dropped, UTF-16 decoded) and the format; Reader.Next returns one Record at
// a time, in bounded memory: a line longer than MaxLine is skipped and
// counted, a JSON wrapper streamed record by record, a line that does not
// parse counted (Stats). A reader says what its format logs (Logged), cannot
// tell (Cannot) and whether it may be a sample (Partial); ReasonWords says a
// gateway's reason code in words. A Record holds the log's own text, for the
// caller to clean and redact.
//
// It is a leaf: of ours it imports only words (the "did you mean").
package accesslog
