package probe

import (
	"context"
	"crypto/tls"
	"net/netip"
	"sync"
	"time"
)

// Check is the outcome of one endpoint's preflight: a TCP connect and, for
// https targets, a TLS handshake verified against the target's host name.
type Check struct {
	Endpoint  int
	Connect   time.Duration // TCP connect time
	Handshake time.Duration // TLS handshake time, 0 for http
	ALPN      string        // negotiated protocol, "" when none
	Local     netip.AddrPort
	Err       error
	Class     ErrorClass
}

// Preflight checks every endpoint at once and returns the checks in the
// order of eps. It sends no HTTP request.
func Preflight(ctx context.Context, eps []*Endpoint, o ConnOptions) []Check {
	out := make([]Check, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { out[i] = preflight(ctx, ep, o) })
	}
	wg.Wait()
	return out
}

func preflight(ctx context.Context, ep *Endpoint, o ConnOptions) Check {
	c := Check{Endpoint: ep.ID}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(err error) Check {
		c.Err, c.Class = err, Classify(err)
		return c
	}
	start := time.Now()
	conn, err := pinnedDial(ep, timeout)(ctx, "tcp", "")
	c.Connect = time.Since(start)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	c.Local = addrPortOf(conn.LocalAddr())
	if !ep.Target.TLS() {
		return c
	}
	cfg := tlsConfig(ep, o.TLS)
	switch o.HTTP {
	case HTTP1:
		cfg.NextProtos = []string{"http/1.1"}
	case HTTP2:
		cfg.NextProtos = []string{"h2"}
	default:
		cfg.NextProtos = []string{"h2", "http/1.1"}
	}
	tc := tls.Client(conn, cfg)
	start = time.Now()
	err = tc.HandshakeContext(ctx)
	c.Handshake = time.Since(start)
	if err != nil {
		c = fail(err)
		if c.Class == ClassTimeout {
			c.Class = ClassConnectTimeout // not connected in time, as Attack reports it
		}
		return c
	}
	c.ALPN = tc.ConnectionState().NegotiatedProtocol
	return c
}
