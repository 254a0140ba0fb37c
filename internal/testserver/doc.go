// Package testserver holds the real loopback servers pinprobe's tests run
// against: listeners on one port of several addresses, fleets that answer by a
// policy and count, sticky gateways, fault servers, a test PKI, a DNS server
// whose zone changes, nginx and HAProxy launchers, a reverse proxy that hands
// each request it served to a test (StartLoggingProxy: to write the log of a
// gateway that cannot run here), and Shapes, fault shapes each with its
// healthy twin and the verdict it should get. Every helper takes a testing.TB
// and cleans up (t.Cleanup, t.TempDir); nothing touches an address outside
// 127.0.0.0/8 and [::1]. Of ours it imports only loopback, so every
// package's tests may import it.
package testserver
