// Package watch turns a watch's stream of results into Prometheus metrics,
// a verdict that looks forever (internal/detect) and the events of its
// suspects.
//
// Entry points: New makes a Watch, the sink session.Watch drives (Started,
// Stopped, Answers, Results and Tick, all on one goroutine); Handler serves
// its registry at /metrics, in the text format, OpenMetrics (with the
// exemplars) or protobuf (with native histograms), as the scraper asks;
// Suspects lists the suspects since the start, for the live page.
//
// Guarantees: every series is labelled by what the watch was given or
// found (host, URL with its secrets redacted, address, family, status or
// error class, instance header's value) and never by a request's content;
// the number of series is bounded by the hosts, addresses and Options.MaxBackends
// (docs/watch.md states the bound), and an address that left DNS has its
// series deleted after Options.Retire. Memory does not grow with time.
//
// It imports the engine's Result and the report's DNS record, the
// detector, and nothing above them.
package watch
