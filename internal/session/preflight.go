package session

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// PreflightStop says why a run cannot work when every endpoint failed its
// preflight, and the flag or fix that helps: "every endpoint fails TLS
// verification (x509: certificate signed by unknown authority): give the CA
// with --cacert FILE, or skip verification with --insecure". It returns ""
// when some endpoint connected.
func PreflightStop(eps []*probe.Endpoint, checks []probe.Check, timeout time.Duration) string {
	if len(checks) == 0 {
		return ""
	}
	classes := map[probe.ErrorClass]int{}
	for _, c := range checks {
		if c.Err == nil {
			return ""
		}
		classes[c.Class]++
	}
	first := checks[0]
	if len(classes) > 1 {
		return fmt.Sprintf("every endpoint fails its preflight, for different reasons (the first: %s): nothing can be probed", first.Err)
	}
	port := eps[first.Endpoint].Target.Port()
	msg := first.Err.Error()
	allV6 := true
	for _, ep := range eps {
		allV6 = allV6 && ep.Family() == probe.IPv6
	}
	switch first.Class {
	case probe.ClassTLS:
		var (
			unknown x509.UnknownAuthorityError
			host    x509.HostnameError
			invalid x509.CertificateInvalidError
		)
		switch {
		case errors.As(first.Err, &unknown):
			return "every endpoint fails TLS verification (" + msg + "): give the CA that signed the certificate with --cacert FILE, or skip verification with --insecure"
		case errors.As(first.Err, &host):
			return "every endpoint's certificate is for another name (" + msg + "): check the URL's host name; --insecure skips verification"
		case errors.As(first.Err, &invalid) && invalid.Reason == x509.Expired:
			return "every endpoint's certificate is out of date (" + msg + "): check the server's certificate and this machine's clock; --insecure skips verification"
		}
		return "every endpoint fails the TLS handshake (" + msg + "): check that the port speaks TLS and --http; --insecure skips certificate verification"
	case probe.ClassConnectRefused:
		return fmt.Sprintf("every address refuses connections on port %d: nothing listens there; check the URL's port", port)
	case probe.ClassNetworkUnreachable:
		if allV6 {
			return "every address is unreachable: this machine has no route to IPv6 (" + msg + "); probe IPv4 with -4, or run from a network with IPv6"
		}
		return "every address is unreachable (" + msg + "): check this machine's network, VPN or routes"
	case probe.ClassConnectTimeout:
		return fmt.Sprintf("no address accepted a connection within --timeout %s: a firewall may drop the packets, or port %d is wrong", timeout, port)
	case probe.ClassReset, probe.ClassEOF:
		return fmt.Sprintf("every address closes the connection at once (%s): check the scheme (https on a plain HTTP port?) and port %d", msg, port)
	}
	return "every endpoint fails its preflight (" + msg + "): nothing can be probed"
}
