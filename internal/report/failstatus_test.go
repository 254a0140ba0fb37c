package report

import (
	"strings"
	"testing"
)

func TestParseFailStatus(t *testing.T) {
	tests := []struct {
		spec  string
		fails []int
		ok    []int
	}{
		{"5xx", []int{500, 502, 503, 599}, []int{200, 429, 499, 600, 0}},
		{"429", []int{429}, []int{428, 430, 500, 502}},
		{"500-503", []int{500, 501, 502, 503}, []int{499, 504, 599}},
		{"5xx,429", []int{429, 500, 599}, []int{200, 404, 428, 430}},
		{" 5XX , 429 ", []int{429, 502}, []int{200}},
		{"4xx,5xx", []int{400, 404, 499, 500, 599}, []int{200, 399, 600}},
		{"1xx", []int{100, 101, 199}, []int{200}},
		{"502-502", []int{502}, []int{501, 503}},
		{"404,500-502,503", []int{404, 500, 501, 502, 503}, []int{405, 504}},
	}
	for _, tt := range tests {
		f, err := ParseFailStatus(tt.spec)
		if err != nil {
			t.Errorf("ParseFailStatus(%q): %v; want no error", tt.spec, err)
			continue
		}
		for _, s := range tt.fails {
			if !f.Fails(s) {
				t.Errorf("ParseFailStatus(%q).Fails(%d) = false; want true", tt.spec, s)
			}
		}
		for _, s := range tt.ok {
			if f.Fails(s) {
				t.Errorf("ParseFailStatus(%q).Fails(%d) = true; want false", tt.spec, s)
			}
		}
		if got := f.String(); got != tt.spec {
			t.Errorf("ParseFailStatus(%q).String() = %q; want the spec", tt.spec, got)
		}
		for _, s := range []int{-1, 1000, 1 << 20} {
			if f.Fails(s) {
				t.Errorf("ParseFailStatus(%q).Fails(%d) = true; want false out of range", tt.spec, s)
			}
		}
	}
}

func TestParseFailStatusBad(t *testing.T) {
	tests := []struct {
		spec string
		want string // in the error
	}{
		{"", `""`},
		{"abc", `"abc"`},
		{"7xx", `"7xx"`},
		{"0xx", `"0xx"`},
		{"5x", `"5x"`},
		{"50x", `"50x"`},
		{"xx", `"xx"`},
		{"99", `"99"`},
		{"1000", `"1000"`},
		{"700", `"700"`},
		{"-1", `"-1"`},
		{"503-500", "empty range"},
		{"500-", `"500-"`},
		{"-503", `"-503"`},
		{"500-5xx", `"500-5xx"`},
		{"5xx,", "empty item"},
		{"5xx,abc", `"abc"`},
		{"5xx;429", `"5xx;429"`},
		{"5 0 0", `"5 0 0"`},
	}
	for _, tt := range tests {
		_, err := ParseFailStatus(tt.spec)
		if err == nil {
			t.Errorf("ParseFailStatus(%q) = no error; want one", tt.spec)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseFailStatus(%q) = %q; want it to contain %s", tt.spec, err, tt.want)
		}
	}
}
