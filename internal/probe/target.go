package probe

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Target is one URL to probe and the request to send to it.
type Target struct {
	URL    *url.URL    // as given; its host stays in the Host header and TLS SNI
	Method string      // GET when empty
	Header http.Header // extra request headers; a "Host" entry overrides the Host header
	Body   []byte      // request body, nil for none
}

// ParseTarget parses raw as an absolute http or https URL.
//
// Its errors quote the URL with its secrets redacted (RedactRawURL): a
// usage error ends up in CI logs.
func ParseTarget(raw string) (*Target, error) {
	shown := RedactRawURL(raw)
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("URL %q has no scheme: use http:// or https:// before it", shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("malformed URL %q: %s", shown, RedactRawURL(unwrapURLError(err).Error()))
	}
	switch u.Scheme {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("URL %q has no scheme: use http:// or https://", shown)
	default:
		return nil, fmt.Errorf("URL %q: unsupported scheme %q (http or https)", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("URL %q has no host", shown)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("URL %q: port %q out of range 1-65535", shown, p)
		}
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.Fragment = ""
	return &Target{URL: u, Method: http.MethodGet}, nil
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// Host returns the target's host name (or IP literal) without brackets or port.
func (t *Target) Host() string { return t.URL.Hostname() }

// Port returns the target's port, the scheme's default when the URL names none.
func (t *Target) Port() uint16 {
	if p := t.URL.Port(); p != "" {
		n, _ := strconv.Atoi(p) // validated by ParseTarget
		return uint16(n)
	}
	if t.URL.Scheme == "https" {
		return 443
	}
	return 80
}

// TLS reports whether the target is reached over TLS.
func (t *Target) TLS() bool { return t.URL.Scheme == "https" }

// String returns the target URL with its secrets redacted (see RedactURL).
func (t *Target) String() string { return RedactURL(t.URL) }

// Family names an IP address family as the reports do: "ipv4" or "ipv6".
type Family string

// The two address families.
const (
	IPv4 Family = "ipv4"
	IPv6 Family = "ipv6"
)

// FamilyOf returns the family of a.
func FamilyOf(a netip.Addr) Family {
	if a.Unmap().Is4() {
		return IPv4
	}
	return IPv6
}

// Endpoint is one target pinned to one address.
type Endpoint struct {
	ID     int // index in the run's endpoint list, stable for the run
	Target *Target
	Addr   netip.Addr
}

// Family returns the endpoint's address family.
func (e *Endpoint) Family() Family { return FamilyOf(e.Addr) }

// AddrPort returns the address and port every connection of the endpoint dials.
func (e *Endpoint) AddrPort() netip.AddrPort { return netip.AddrPortFrom(e.Addr, e.Target.Port()) }

// String names the endpoint as "URL via address".
func (e *Endpoint) String() string { return e.Target.String() + " via " + e.Addr.String() }

// ParseHeader parses a "Name: value" header line as curl's -H takes it.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return "", "", fmt.Errorf("want \"Name: value\"")
	}
	return http.CanonicalHeaderKey(name), strings.TrimSpace(value), nil
}
