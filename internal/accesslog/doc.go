// Package accesslog reads gateways' access logs as a stream of Records:
// nginx (its default combined format, or any log_format given in nginx's
// own variable syntax), HAProxy (the default HTTP log format, or a
// log-format string), Azure Application Gateway access logs as exported
// from Log Analytics or written by diagnostic settings (the AGWAccessLogs
// columns, the older AzureDiagnostics ones, and the records Event Hub and
// storage accounts get, v1 or v2; CSV or JSON) and AWS Application Load
// Balancer access logs.
//
// Open detects gzip, a byte-order mark (a UTF-8 one is dropped, UTF-16
// in either order is decoded: PowerShell writes both) and, unless told,
// the format, from the first lines; Reader.Next returns one Record at a
// time. Memory stays bounded however large the log: a line (or CSV or
// JSON record) longer than MaxLine is skipped and counted, never held (a
// JSON wrapper, {"records": …} or {"tables": …}, is streamed record by
// record), and a line that does not parse is counted with its number
// (Stats). Nothing here judges what a line says or
// cleans it: a Record holds the log's own text, for the caller to clean
// and redact where it enters its document.
//
// It is a leaf: of ours it imports only words (the "did you mean").
package accesslog
