package probe

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// h1Template is a target's HTTP/1.1 request rendered once: request line and
// header fields, and the body. Per request only the X-Request-Id value and
// whether the request is the connection's last change (appendRequest).
type h1Template struct {
	head   []byte // request line and fixed header fields, each ending in CRLF
	body   []byte
	noBody bool // HEAD: responses carry no body whatever their framing says
	close  bool // the user's headers say Connection: close: every request is the last
}

// h1ExcludedHeaders are the user headers the template writes itself (Host,
// User-Agent) or that would break its framing, as net/http excludes them.
var h1ExcludedHeaders = []string{"Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer"}

// newH1Template renders the request of tg as net/http would write it: the
// request-target from the URL, Host from the URL's host[:port] (in punycode,
// without an IPv6 zone) unless a "Host" header overrides it, User-Agent from
// the headers or userAgent ("" sends none), Content-Length for a body and for
// POST, PUT and PATCH, the user's headers sorted by name, and Authorization
// Basic from the URL's userinfo unless the headers set Authorization.
// CONNECT is refused: it is no request-response exchange.
func newH1Template(tg *Target, userAgent string) (*h1Template, error) {
	method := tg.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return nil, fmt.Errorf("request for %s: invalid method %q", tg, method)
	}
	if method == http.MethodConnect {
		return nil, fmt.Errorf("request for %s: CONNECT is not supported by the HTTP/1.1 client", tg)
	}
	uri := tg.URL.RequestURI()
	if strings.ContainsFunc(uri, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("request for %s: control character or space in the request-target", tg)
	}
	host := tg.URL.Host
	if vs, _ := headerValues(tg.Header, "Host"); len(vs) > 0 {
		host = vs[0]
	}
	host, err := httpguts.PunycodeHostPort(host)
	if err != nil {
		return nil, fmt.Errorf("request for %s: host %q: %w", tg, host, err)
	}
	if !httpguts.ValidHostHeader(host) {
		return nil, fmt.Errorf("request for %s: invalid Host header %q", tg, host)
	}
	host = removeZone(host)

	h := make(http.Header, len(tg.Header)+1)
	for k, vs := range tg.Header {
		if slices.ContainsFunc(h1ExcludedHeaders, func(x string) bool { return strings.EqualFold(x, k) }) {
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("request for %s: invalid header name %q", tg, k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("request for %s: invalid value for header %q", tg, k)
			}
		}
		h[k] = vs
	}
	if u := tg.URL.User; u != nil && h.Get("Authorization") == "" {
		pass, _ := u.Password()
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass)))
	}
	if vs, ok := headerValues(tg.Header, "User-Agent"); ok {
		userAgent = ""
		if len(vs) > 0 {
			userAgent = vs[0]
		}
		if !httpguts.ValidHeaderFieldValue(userAgent) {
			return nil, fmt.Errorf("request for %s: invalid value for header %q", tg, "User-Agent")
		}
	}

	var b []byte
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if ua := strings.TrimSpace(userAgent); ua != "" {
		b = appendField(b, "User-Agent", ua)
	}
	if len(tg.Body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		b = appendField(b, "Content-Length", strconv.Itoa(len(tg.Body)))
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range h[k] {
			b = appendField(b, k, strings.TrimSpace(v))
		}
	}
	return &h1Template{
		head:   b,
		body:   tg.Body,
		noBody: method == http.MethodHead,
		close:  httpguts.HeaderValuesContainsToken(h["Connection"], "close"),
	}, nil
}

// headerValues returns the values of name in h, matched without regard to case.
func headerValues(h http.Header, name string) ([]string, bool) {
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			return vs, true
		}
	}
	return nil, false
}

func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// removeZone drops the zone of an IPv6 literal host ("[fe80::1%eth0]:80"),
// which RFC 6874 says must not leave the client.
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	end := strings.LastIndexByte(host, ']')
	if end < 0 {
		return host
	}
	if pct := strings.LastIndexByte(host[:end], '%'); pct >= 0 {
		return host[:pct] + host[end:]
	}
	return host
}

// appendHead appends the request line and header fields to dst: the fixed
// ones, then X-Request-Id when requestID is not empty (it must be a valid
// field value), then Connection: close when last, then the empty line.
func (t *h1Template) appendHead(dst []byte, requestID string, last bool) []byte {
	dst = append(dst, t.head...)
	if requestID != "" {
		dst = append(dst, "X-Request-Id: "...)
		dst = append(dst, requestID...)
		dst = append(dst, "\r\n"...)
	}
	if last && !t.close {
		dst = append(dst, "Connection: close\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// appendRequest appends the whole request, head and body, to dst.
func (t *h1Template) appendRequest(dst []byte, requestID string, last bool) []byte {
	return append(t.appendHead(dst, requestID, last), t.body...)
}
