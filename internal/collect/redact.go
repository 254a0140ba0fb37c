package collect

import "github.com/pinprobe/pinprobe/internal/probe"

// Redacted replaces every secret in a report.
const Redacted = probe.Redacted

// IsSecretHeader reports whether a header's value must never appear in a
// report: credentials, cookies, and any name containing token, key, secret,
// password or signature (see probe.IsSecret).
func IsSecretHeader(name string) bool { return probe.IsSecret(name) }
