// Package testserver holds the real servers pinprobe's tests run against, all
// on loopback: listeners on one port of several loopback addresses, HTTP
// fleets whose every address answers by a policy and counts what it saw,
// "sticky" gateways that keep each TCP connection on one instance, fault
// servers that misbehave in one precise way each, a test PKI, a DNS server
// whose zone changes during a test, launchers for real nginx and HAProxy
// processes, and a reverse proxy that records each request it forwards
// (StartLoggingProxy), for a test to write as a gateway's log where the
// gateway itself (Envoy) is not installed. Shapes is a table of fault shapes (a failing address, two
// addresses, a shared pool's instance, a sticky instance with and without
// its header, a flapping address, a reset beside a 503, a whole family),
// each with a healthy twin, served on one port of several addresses with
// the ground truth a correct verdict states.
//
// Every helper takes a testing.TB, registers its own teardown with
// t.Cleanup, and leaves no goroutine, socket, process or file behind it
// (files go to t.TempDir). Nothing here listens on or sends to an address
// outside 127.0.0.0/8 and [::1].
//
// The package imports none of pinprobe's own packages, so every package's
// tests may import it.
package testserver
