package report

import (
	"strings"
	"testing"
)

func FuzzParseFailStatus(f *testing.F) {
	for _, s := range []string{"5xx", "5xx,429,500-503", "4xx,5xx", "99", "7xx", "503-500", "", ",", "600", "1xx-2xx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseFailStatus(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("ParseFailStatus(%q): error %q is not one line", s, err)
			}
			return
		}
		for code := 0; code < 1000; code++ {
			if fs.Fails(code) && (code < 100 || code > 599) {
				t.Errorf("ParseFailStatus(%q) fails status %d, outside 100-599", s, code)
			}
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"0.1%", "0.001", "5%", "100%", "1", "1.5", "-1%", "NaN", "Inf%", "1e-9%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err == nil && !(r >= 0 && r <= 1) {
			t.Errorf("ParseRate(%q) = %v; want a rate in [0, 1] or an error", s, r)
		}
	})
}
