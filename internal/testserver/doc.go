// Package testserver holds the real loopback servers pinprobe's tests run
// against: listeners on one port of several addresses, counting fleets,
// sticky gateways, fault servers, a test PKI, a DNS server whose zone
// changes, nginx and HAProxy launchers, a logging reverse proxy (for the
// logs of gateways that cannot run here), and Shapes, fault shapes with
// their healthy twins and verdicts. Every helper takes a testing.TB and
// cleans up; nothing touches an address outside 127.0.0.0/8 and [::1]. Of
// ours it imports only loopback, so every package's tests may import it.
package testserver
