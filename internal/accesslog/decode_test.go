package accesslog

import (
	"strings"
	"testing"
	"unicode/utf16"
)

// TestDecodeText: a byte-order mark, UTF-8 or UTF-16 (either order), on
// any kind of log: the mark dropped, UTF-16 decoded, the lines read as
// they are; a character cut in half read as U+FFFD, never a panic.
func TestDecodeText(t *testing.T) {
	nginx := `127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET /é HTTP/1.1" 200 1 "-" "x 😀"` + "\n"
	enc := func(s string, le bool) string {
		b := []byte{0xfe, 0xff}
		if le {
			b = []byte{0xff, 0xfe}
		}
		for _, u := range utf16.Encode([]rune(s)) {
			if le {
				b = append(b, byte(u), byte(u>>8))
			} else {
				b = append(b, byte(u>>8), byte(u))
			}
		}
		return string(b)
	}
	for _, tt := range []struct{ name, log, enc string }{
		{"UTF-8 BOM", "\ufeff" + nginx + nginx, ""},
		{"UTF-16LE", enc(nginx+nginx, true), "UTF-16LE"},
		{"UTF-16BE", enc(nginx+nginx, false), "UTF-16BE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, recs := readAll(t, tt.log, Options{})
			if r.Kind() != Nginx || len(recs) != 2 || r.Encoding() != tt.enc || recs[0].URI != "/é" {
				t.Errorf("kind %s, %d records, encoding %q, URI %q; want nginx, 2, %q, /é", r.Kind(), len(recs), r.Encoding(), recs[0].URI, tt.enc)
			}
		})
	}
	// Cut in the middle of a unit, or of a surrogate pair.
	for _, cut := range []string{enc(nginx, true) + "\x41", enc(nginx, true)[:len(enc(nginx, true))-8]} {
		r, err := Open(strings.NewReader(cut), Options{})
		if err != nil {
			continue // a line cut short is no format: said, not a panic
		}
		for {
			var rec Record
			if err := r.Next(&rec); err != nil {
				break
			}
		}
	}
}
