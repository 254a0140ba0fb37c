// Package probe resolves targets to every address they have, pins every
// connection to one address, and drives rate-limited request streams at them.
// Requests go through a synchronous HTTP/1.1 client of its own (the fast
// path, h1*.go) wherever the endpoint speaks HTTP/1.1, and through net/http
// for HTTP/2 or when asked (Options.Client); both report alike.
//
// It produces typed Results on a channel and never prints: aggregation and
// rendering live in package report, wiring and exit codes in package main.
package probe
