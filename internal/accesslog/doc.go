// Package accesslog reads gateways' access logs as a stream of Records:
// nginx (its default combined format, or any log_format given in nginx's
// own variable syntax), HAProxy (the default HTTP log format, or a
// log-format string of variables and sample fetches), Azure Application Gateway access logs as exported
// from Log Analytics or written by diagnostic settings (the AGWAccessLogs
// columns, the older AzureDiagnostics ones and the storage account's
// records; CSV or JSON), AWS Application Load Balancer access logs,
// Traefik's (its common format or JSON), Google Cloud Application Load
// Balancer request logs as Cloud Logging exports them (JSON) and Envoy's
// (its default format, Istio's text and JSON, or a text_format or
// json_format given in Envoy's command operators).
//
// A reader says what its format logs (Reader.Logged), what it cannot tell
// beyond that (Reader.Cannot: Google names the backend service, not
// always the instance) and whether the log may hold only a sample of the
// requests served (Reader.Partial: Google's logConfig.sampleRate).
// ReasonWords says a gateway's reason code (Record.Reason: Envoy's
// response flags, HAProxy's termination state, …) in words.
//
// Open detects gzip and, unless told, the format, from the first lines;
// Reader.Next returns one Record at a time. Memory stays bounded however
// large the log: a line (or CSV or JSON record) longer than MaxLine is
// skipped and counted, never held, and a line that does not parse is
// counted with its number (Stats). Nothing here judges what a line says or
// cleans it: a Record holds the log's own text, for the caller to clean
// and redact where it enters its document.
//
// It is a leaf: of ours it imports only words (the "did you mean").
package accesslog
