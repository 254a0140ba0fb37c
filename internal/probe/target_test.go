package probe

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in       string
		wantURL  string
		wantHost string
		wantPort uint16
		wantTLS  bool
		wantErr  string
	}{
		{in: "https://sign.example.com", wantURL: "https://sign.example.com/", wantHost: "sign.example.com", wantPort: 443, wantTLS: true},
		{in: "http://sign.example.com:8080/a?b=c#frag", wantURL: "http://sign.example.com:8080/a?b=c", wantHost: "sign.example.com", wantPort: 8080},
		{in: "http://[::1]:8080/", wantURL: "http://[::1]:8080/", wantHost: "::1", wantPort: 8080},
		{in: "http://127.0.0.2/", wantURL: "http://127.0.0.2/", wantHost: "127.0.0.2", wantPort: 80},
		{in: "https://user:secret@sign.example.com/", wantURL: "https://user:REDACTED@sign.example.com/", wantHost: "sign.example.com", wantPort: 443, wantTLS: true},
		{in: "sign.example.com", wantErr: "has no scheme"},
		{in: "ftp://sign.example.com/", wantErr: `unsupported scheme "ftp"`},
		{in: "http:///path", wantErr: "has no host"},
		{in: "http://sign.example.com:0/", wantErr: "out of range"},
		{in: "http://sign.example.com:70000/", wantErr: "out of range"},
		{in: "http://sign.example.com:port/", wantErr: "malformed URL"},
		{in: "http://[::1/", wantErr: "malformed URL"},
	}
	for _, tt := range tests {
		tg, err := ParseTarget(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTarget(%q) error %v; want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", tt.in, err)
			continue
		}
		if got := tg.String(); got != tt.wantURL {
			t.Errorf("ParseTarget(%q).String() = %q; want %q", tt.in, got, tt.wantURL)
		}
		if tg.Host() != tt.wantHost || tg.Port() != tt.wantPort || tg.TLS() != tt.wantTLS || tg.Method != http.MethodGet {
			t.Errorf("ParseTarget(%q) = host %q port %d tls %v method %q; want %q %d %v GET",
				tt.in, tg.Host(), tg.Port(), tg.TLS(), tg.Method, tt.wantHost, tt.wantPort, tt.wantTLS)
		}
	}
}

func TestEndpointAddressing(t *testing.T) {
	tg, err := ParseTarget("https://sign.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr       string
		wantFamily Family
		wantDial   string
	}{
		{"127.0.0.1", IPv4, "127.0.0.1:443"},
		{"::1", IPv6, "[::1]:443"},
		{"::ffff:192.0.2.7", IPv4, "[::ffff:192.0.2.7]:443"},
		{"2001:db8::7", IPv6, "[2001:db8::7]:443"},
	}
	for _, tt := range tests {
		ep := &Endpoint{Target: tg, Addr: netip.MustParseAddr(tt.addr)}
		if ep.Family() != tt.wantFamily || ep.AddrPort().String() != tt.wantDial {
			t.Errorf("%s: family %s, dials %s; want %s, %s", tt.addr, ep.Family(), ep.AddrPort(), tt.wantFamily, tt.wantDial)
		}
	}
	ep := &Endpoint{Target: tg, Addr: netip.MustParseAddr("2001:db8::7")}
	if got, want := ep.String(), "https://sign.example.com/ via 2001:db8::7"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		in, name, value string
		ok              bool
	}{
		{"X-Request-Id: abc", "X-Request-Id", "abc", true},
		{"accept:  text/html ", "Accept", "text/html", true},
		{"Authorization: Bearer a:b", "Authorization", "Bearer a:b", true},
		{"X-Empty:", "X-Empty", "", true},
		{"no colon", "", "", false},
		{": value", "", "", false},
		{"Bad Name: v", "", "", false},
	}
	for _, tt := range tests {
		name, value, err := ParseHeader(tt.in)
		if (err == nil) != tt.ok || name != tt.name || value != tt.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v; want %q, %q, ok %v", tt.in, name, value, err, tt.name, tt.value, tt.ok)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:pa55@h.test/x", "https://user:REDACTED@h.test/x"},
		{"https://user@h.test/x", "https://REDACTED@h.test/x"}, // a user name alone is usually a token
		{"https://h.test/x?access_token=abc&page=2", "https://h.test/x?access_token=REDACTED&page=2"},
		{"https://h.test/x?sig=abc&X-Amz-Signature=def&q=1", "https://h.test/x?X-Amz-Signature=REDACTED&q=1&sig=REDACTED"},
		{"https://h.test/x?q=1", "https://h.test/x?q=1"},
	}
	for _, tt := range tests {
		tg, err := ParseTarget(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.String(); got != tt.want {
			t.Errorf("ParseTarget(%q).String() = %q; want %q", tt.in, got, tt.want)
		}
		if tg.URL.String() != tt.in {
			t.Errorf("the URL sent changed: %q; want %q", tg.URL, tt.in)
		}
	}
}
