package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Resolution is what resolving one host:port gave.
type Resolution struct {
	Host   string
	Port   uint16
	Source string       // "system", "dns ADDR:PORT", "resolve" (--resolve), "literal" or "demo"
	Addrs  []netip.Addr // after the family filter: IPv4 first, each family sorted
	Err    error        // why Addrs is empty, when it is
}

// Resolver finds every A and AAAA address of a host.
type Resolver struct {
	// Static replaces DNS for "host:port" keys (see StaticKey), as curl's --resolve does.
	Static map[string][]netip.Addr
	// StaticSource names where Static came from in reports; "resolve" when empty.
	StaticSource string
	// Server, when valid, receives the A and AAAA queries instead of the
	// system resolver; /etc/hosts is not read then.
	Server netip.AddrPort
	// Only keeps one family when set.
	Only Family
	// Timeout bounds one resolution; 5s when zero.
	Timeout time.Duration
}

// StaticKey is the key of Resolver.Static for host and port.
func StaticKey(host string, port uint16) string {
	return strings.ToLower(strings.TrimSuffix(host, ".")) + ":" + strconv.Itoa(int(port))
}

// FromDNS reports whether Resolve asks DNS for host: its answer may change
// while a run goes on. An IP literal or a Static entry never does.
func (r *Resolver) FromDNS(host string, port uint16) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	_, static := r.Static[StaticKey(host, port)]
	return !static
}

// Resolve returns every address of host that passes the family filter.
func (r *Resolver) Resolve(ctx context.Context, host string, port uint16) Resolution {
	res := Resolution{Host: host, Port: port}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		res.Source = "literal"
		addrs = []netip.Addr{a}
	} else if static, ok := r.Static[StaticKey(host, port)]; ok {
		res.Source = r.StaticSource
		if res.Source == "" {
			res.Source = "resolve"
		}
		addrs = static
	} else {
		timeout := r.Timeout
		if timeout <= 0 {
			timeout = 5 * time.Second
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var found []netip.Addr
		var err error
		if r.Server.IsValid() {
			res.Source = "dns " + r.Server.String()
			found, err = lookupServer(ctx, r.Server.String(), host, timeout)
		} else {
			res.Source = "system"
			found, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
		if err != nil {
			res.Err = fmt.Errorf("resolve %s (%s): %w", host, res.Source, dnsCause(err))
			return res
		}
		addrs = found
	}
	res.Addrs = filterAddrs(addrs, r.Only)
	if len(res.Addrs) == 0 {
		switch {
		case len(addrs) == 0:
			res.Err = fmt.Errorf("resolve %s (%s): no addresses", host, res.Source)
		default:
			res.Err = fmt.Errorf("resolve %s (%s): no %s address among %s", host, res.Source, r.Only, JoinAddrs(addrs))
		}
	}
	return res
}

// lookupServer asks server for the A and AAAA records of host, both at once.
// Unlike the system resolver it never reads /etc/hosts: every answer comes
// from server. A failure of one query is ignored when the other gave addresses.
func lookupServer(ctx context.Context, server, host string, timeout time.Duration) ([]netip.Addr, error) {
	var (
		wg    sync.WaitGroup
		addrs [2][]netip.Addr
		errs  [2]error
	)
	for i, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		wg.Go(func() { addrs[i], errs[i] = query(ctx, server, dns.Fqdn(host), qtype, timeout) })
	}
	wg.Wait()
	if all := slices.Concat(addrs[0], addrs[1]); len(all) > 0 {
		return all, nil
	}
	return nil, cmp.Or(errs[0], errs[1])
}

// query asks server one question over UDP with EDNS0, then over TCP when the
// answer is truncated. It returns the addresses in the answer section whatever
// their owner name, as that is where a CNAME chain ends.
func query(ctx context.Context, server, name string, qtype uint16, timeout time.Duration) ([]netip.Addr, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(1232, false)
	in, err := exchange(ctx, "udp", server, m, timeout)
	if err == nil && in.Truncated {
		in, err = exchange(ctx, "tcp", server, m, timeout)
	}
	if err != nil {
		return nil, err
	}
	switch in.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return nil, errors.New("no such host")
	default:
		rcode, ok := dns.RcodeToString[in.Rcode]
		if !ok {
			rcode = "rcode " + strconv.Itoa(in.Rcode)
		}
		return nil, fmt.Errorf("server answered %s", rcode)
	}
	var addrs []netip.Addr
	for _, rr := range in.Answer {
		var ip net.IP
		switch rr := rr.(type) {
		case *dns.A:
			ip = rr.A
		case *dns.AAAA:
			ip = rr.AAAA
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			addrs = append(addrs, a)
		}
	}
	return addrs, nil
}

// exchange sends m to server over network and returns the answer. The wait
// ends at ctx's deadline or, as the client does not watch ctx.Done, when ctx is
// cancelled, which closes the connection.
func exchange(ctx context.Context, network, server string, m *dns.Msg, timeout time.Duration) (*dns.Msg, error) {
	c := &dns.Client{Net: network, Timeout: timeout}
	conn, err := c.DialContext(ctx, server)
	if err == nil {
		defer conn.Close()
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		defer stop()
		var in *dns.Msg
		if in, _, err = c.ExchangeWithConnContext(ctx, m, conn); err == nil {
			return in, nil
		}
	}
	var ne net.Error
	var se *os.SyscallError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return nil, errors.New("timed out")
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &se):
		return nil, se.Err // "connection refused" rather than "read udp A->B: read: connection refused"
	}
	return nil, err
}

// dnsCause shortens a *net.DNSError to its cause: the host and server are named by the caller.
func dnsCause(err error) error {
	var de *net.DNSError
	if errors.As(err, &de) {
		switch {
		case de.IsNotFound:
			return errors.New("no such host")
		case de.IsTimeout:
			return errors.New("timed out")
		}
		return errors.New(de.Err)
	}
	return err
}

// filterAddrs unmaps, deduplicates, filters by family and sorts IPv4 before IPv6.
func filterAddrs(in []netip.Addr, only Family) []netip.Addr {
	out := make([]netip.Addr, 0, len(in))
	for _, a := range in {
		a = a.Unmap()
		if only != "" && FamilyOf(a) != only {
			continue
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b netip.Addr) int {
		if a.Is4() != b.Is4() {
			if a.Is4() {
				return -1
			}
			return 1
		}
		return a.Compare(b)
	})
	return out
}

// JoinAddrs lists addresses as "127.0.0.1, ::1".
func JoinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// ParseResolve parses curl's --resolve syntax HOST:PORT:ADDR[,ADDR...]. IPv6
// addresses may be written with or without brackets.
func ParseResolve(s string) (key string, addrs []netip.Addr, err error) {
	host, rest, ok := cutHost(s)
	if !ok {
		return "", nil, fmt.Errorf("want HOST:PORT:ADDR[,ADDR...]")
	}
	portStr, list, ok := strings.Cut(rest, ":")
	if !ok || list == "" {
		return "", nil, fmt.Errorf("want HOST:PORT:ADDR[,ADDR...]")
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return "", nil, fmt.Errorf("port %q out of range 1-65535", portStr)
	}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		f = strings.TrimSuffix(strings.TrimPrefix(f, "["), "]")
		a, err := netip.ParseAddr(f)
		if err != nil {
			return "", nil, fmt.Errorf("%q is not an IP address", f)
		}
		if a.Zone() != "" {
			return "", nil, fmt.Errorf("zoned address %q is not supported", f)
		}
		addrs = append(addrs, a.Unmap())
	}
	return StaticKey(host, uint16(port)), addrs, nil
}

// cutHost splits "host:rest" or "[v6]:rest".
func cutHost(s string) (host, rest string, ok bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return "", "", false
		}
		return s[1:end], s[end+2:], true
	}
	host, rest, ok = strings.Cut(s, ":")
	return host, rest, ok && host != ""
}
