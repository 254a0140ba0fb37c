// Package probe resolves targets to every address they have, pins every
// connection to one address, and drives rate-limited request streams at them:
// through its own synchronous HTTP/1.1 client (h1*.go) where it can, net/http
// for HTTP/2 or when asked (Options.Client). In the open model each worker
// paces itself (pool.go); results go to per-goroutine outboxes the collector
// empties in batches (Run.Ready, Run.Take), or one by one (Run.Results).
//
// It produces typed Results and never prints. Of ours it imports only stat.
package probe
