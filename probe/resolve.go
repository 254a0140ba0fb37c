package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// Server, when valid, receives the DNS queries instead of the system resolver.
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
		resolver := net.DefaultResolver
		res.Source = "system"
		if r.Server.IsValid() {
			server := r.Server.String()
			res.Source = "dns " + server
			resolver = &net.Resolver{
				PreferGo: true,
				Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, network, server)
				},
			}
		}
		found, err := resolver.LookupNetIP(ctx, "ip", host)
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
			res.Err = fmt.Errorf("resolve %s (%s): no %s address among %s", host, res.Source, r.Only, joinAddrs(addrs))
		}
	}
	return res
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

func joinAddrs(addrs []netip.Addr) string {
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
