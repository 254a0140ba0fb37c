// Package probe resolves targets to every address they have, pins every
// connection to one address, and drives rate-limited request streams at them.
// Requests go through a synchronous HTTP/1.1 client of its own (the fast
// path, h1*.go) wherever the endpoint speaks HTTP/1.1, and through net/http
// for HTTP/2 or when asked (Options.Client); both report alike.
//
// In the open model each worker paces itself (pool.go): it is dealt its
// endpoint's next request and sleeps until it is due, so a request wakes
// only its worker. Results go to per-goroutine outboxes that the collector
// empties in batches (Run.Ready and Run.Take, outbox.go), or one by one on
// a channel (Run.Results).
//
// It produces typed Results and never prints: aggregation lives in
// collect, rendering in render, a run's wiring in session. Of ours it
// imports only stat.
package probe
