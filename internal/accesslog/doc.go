// Package accesslog reads gateways' access logs as a stream of Records:
// nginx, HAProxy and Envoy (default formats or a given one), Azure
// Application Gateway exports (every shape), AWS ALB, Traefik and Google
// Cloud load balancer logs. Open detects gzip, a byte-order mark (UTF-16
// decoded) and the format; Reader.Next returns a Record at a time in
// bounded memory (a line past MaxLine skipped and counted, a JSON wrapper
// streamed). A reader says what its format logs, cannot tell and whether
// it may be a sample; ReasonWords says a reason code in words. A Record
// holds the log's own text, for the caller to clean and redact.
package accesslog
