// Package accesslog reads gateways' access logs as a stream of Records: nginx
// and HAProxy (default formats or a given log format), Azure Application
// Gateway exports and AWS ALB logs. Open detects gzip and the format;
// Reader.Next returns one Record at a time, in bounded memory: a line longer
// than MaxLine is skipped and counted, one that does not parse counted (Stats).
// A Record holds the log's own text, for the caller to clean and redact.
//
// It is a leaf: of ours it imports only words (the "did you mean").
package accesslog
