package testserver

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/netip"
	"os"
	"testing"
)

func TestPKI(t *testing.T) {
	t.Parallel()
	pki := NewPKI(t)
	raw, err := os.ReadFile(pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(raw); b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("CAFile holds no PEM certificate")
	} else if c, err := x509.ParseCertificate(b.Bytes); err != nil || !c.Equal(pki.CA) {
		t.Fatalf("CAFile is not the CA: %v", err)
	}
	const host = "app.test"
	tests := []struct {
		name string
		cert tls.Certificate
		ok   func(err error) bool
	}{
		{"leaf", pki.Leaf(host), func(err error) bool { return err == nil }},
		{"leaf with IP SAN", pki.Leaf("other.test", "127.0.0.1", host), func(err error) bool { return err == nil }},
		{"expired", pki.Expired(host), func(err error) bool {
			var e x509.CertificateInvalidError
			return errors.As(err, &e) && e.Reason == x509.Expired
		}},
		{"wrong host", pki.Leaf("other.test"), func(err error) bool {
			var e x509.HostnameError
			return errors.As(err, &e)
		}},
		{"self-signed", SelfSigned(t, host), func(err error) bool {
			var e x509.UnknownAuthorityError
			return errors.As(err, &e)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ln, err := tls.Listen("tcp", netip.AddrPortFrom(Lo4a, 0).String(), &tls.Config{Certificates: []tls.Certificate{tt.cert}})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.(*tls.Conn).Handshake()
				c.Close()
			}()
			c, err := tls.Dial("tcp", ln.Addr().String(), pki.ClientConfig(host))
			if err == nil {
				c.Close()
			}
			if !tt.ok(err) {
				t.Errorf("handshake: %v; not the outcome a %s certificate gives", err, tt.name)
			}
		})
	}
}
