package testserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// PKI is a certificate authority made for one test, and the leaf
// certificates it signs. Trust it with Pool (a tls.Config's RootCAs) or
// CAFile (a PEM file, for --cacert).
type PKI struct {
	// CA is the authority's certificate.
	CA *x509.Certificate
	// Pool holds CA only.
	Pool *x509.CertPool
	// CAFile is the path of CA's PEM in t.TempDir().
	CAFile string

	t      testing.TB
	key    *ecdsa.PrivateKey
	serial atomic.Int64
}

// NewPKI makes an ECDSA P-256 CA valid from an hour ago to a day from now
// and writes its PEM to CAFile.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pinprobe test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testserver: create CA: %v", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testserver: parse CA: %v", err)
	}
	p := &PKI{CA: ca, Pool: x509.NewCertPool(), t: t, key: key}
	p.Pool.AddCert(ca)
	p.serial.Store(1)
	p.CAFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatalf("testserver: write CA: %v", err)
	}
	return p
}

// Leaf returns a server certificate signed by the CA, valid now for names:
// each a DNS name, or an IP address (which becomes an IP SAN). A leaf for
// other names than the client asks for is the wrong-host certificate.
func (p *PKI) Leaf(names ...string) tls.Certificate {
	p.t.Helper()
	now := time.Now()
	return p.sign(names, now.Add(-time.Hour), now.Add(24*time.Hour))
}

// Expired returns a server certificate signed by the CA for names that
// expired an hour ago.
func (p *PKI) Expired(names ...string) tls.Certificate {
	p.t.Helper()
	now := time.Now()
	return p.sign(names, now.Add(-48*time.Hour), now.Add(-time.Hour))
}

// ServerConfig serves a Leaf for names, offering HTTP/2 and HTTP/1.1 by
// ALPN.
func (p *PKI) ServerConfig(names ...string) *tls.Config {
	p.t.Helper()
	return &tls.Config{Certificates: []tls.Certificate{p.Leaf(names...)}, NextProtos: []string{"h2", "http/1.1"}}
}

// tlsFor is how a server of host is served: over TLS with a certificate of
// pki's, or in cleartext (a nil config) without a PKI; scheme says which.
func tlsFor(pki *PKI, host string) (scheme string, cfg *tls.Config) {
	if pki == nil {
		return "http", nil
	}
	return "https", pki.ServerConfig(host)
}

// ClientConfig trusts the CA only, with serverName as SNI and the name
// verified ("" to derive it from the dialled address).
func (p *PKI) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{RootCAs: p.Pool, ServerName: serverName}
}

func (p *PKI) sign(names []string, notBefore, notAfter time.Time) tls.Certificate {
	p.t.Helper()
	key := newKey(p.t)
	tmpl := leafTemplate(names, notBefore, notAfter)
	tmpl.SerialNumber = big.NewInt(p.serial.Add(1))
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.key)
	if err != nil {
		p.t.Fatalf("testserver: sign certificate for %v: %v", names, err)
	}
	return tls.Certificate{Certificate: [][]byte{der, p.CA.Raw}, PrivateKey: key}
}

// SelfSigned returns a certificate for names that signs itself: no CA
// trusts it.
func SelfSigned(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	tmpl := leafTemplate(names, now.Add(-time.Hour), now.Add(24*time.Hour))
	tmpl.SerialNumber = big.NewInt(1)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testserver: self-sign certificate for %v: %v", names, err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func leafTemplate(names []string, notBefore, notAfter time.Time) *x509.Certificate {
	tmpl := &x509.Certificate{
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if len(names) > 0 {
		tmpl.Subject.CommonName = names[0]
	}
	for _, n := range names {
		if a, err := netip.ParseAddr(n); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	return tmpl
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testserver: generate key: %v", err)
	}
	return key
}
