package testserver

import (
	"bytes"
	"crypto/tls"
	"io"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// goAwayGrace is how long an HTTP/2 connection stays open after its GOAWAY
// for the client to close it; then the server closes it.
const goAwayGrace = time.Second

// serveH2 speaks just enough HTTP/2 on c to answer GoAwayAfter requests
// with 200, then sends GOAWAY naming the last of them and answers no other
// stream (H2GoAway, H2CGoAway); or to answer every request with a :status
// outside 100–599 (H2BadStatus), or with RST_STREAM INTERNAL_ERROR
// (H2ResetInternal); MixedALPN's h2 connections are answered 200 without
// GOAWAY. A TLS connection must have negotiated h2 by ALPN; a
// cleartext one must start with the client preface (prior knowledge).
func (s *FaultServer) serveH2(c *faultConn) {
	if tc, ok := c.Conn.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol != "h2" {
		return
	}
	c.SetReadDeadline(time.Now().Add(writeTimeout))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c.br, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	c.SetReadDeadline(time.Time{})
	fr := http2.NewFramer(c, c.br)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	write := func(f func() error) bool {
		c.SetWriteDeadline(time.Now().Add(writeTimeout))
		return f() == nil
	}
	if !write(func() error { return fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100}) }) {
		return
	}
	answered, goneAway := 0, false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && !write(fr.WriteSettingsAck) {
				return
			}
		case *http2.PingFrame:
			if !f.IsAck() && !write(func() error { return fr.WritePing(true, f.Data) }) {
				return
			}
		case *http2.GoAwayFrame:
			return
		case *http2.MetaHeadersFrame:
			if goneAway {
				continue // above the GOAWAY's last stream: refused, the client retries it
			}
			s.heads.Add(1)
			answered++
			id := f.StreamID
			if s.fault == H2ResetInternal {
				if !write(func() error { return fr.WriteRSTStream(id, http2.ErrCodeInternal) }) {
					return
				}
				continue
			}
			status := "200"
			if s.fault == H2BadStatus {
				status = s.nextVariant().answer
			}
			hbuf.Reset()
			body := "ok\n"
			enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
			enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
			enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
			ok := write(func() error {
				return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true})
			}) && write(func() error { return fr.WriteData(id, true, []byte(body)) })
			if !ok {
				return
			}
			if answered == s.goAway && (s.fault == H2GoAway || s.fault == H2CGoAway) {
				if !write(func() error { return fr.WriteGoAway(id, http2.ErrCodeNo, []byte("pinprobe test: going away")) }) {
					return
				}
				s.goAways.Add(1)
				goneAway = true
				c.SetReadDeadline(time.Now().Add(goAwayGrace))
			}
		}
	}
}
