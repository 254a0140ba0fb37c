package report_test

import (
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
)

func TestCheckVantage(t *testing.T) {
	for _, ok := range []string{"eu-west-1a", "us-central1-b", "laptop.corp", "A_1", strings.Repeat("z", 63)} {
		if err := report.CheckVantage(ok); err != nil {
			t.Errorf("CheckVantage(%q) = %v; want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", ".a", "eu west", "a/b", "a\x00", "é", strings.Repeat("z", 64), "<script>"} {
		if err := report.CheckVantage(bad); err == nil {
			t.Errorf("CheckVantage(%q) = nil; want an error", bad)
		}
	}
	for host, want := range map[string]string{
		"build-7.corp.example":  "build-7.corp.example",
		"-odd host!":            "odd-host-",
		"___":                   "",
		"ü-box":                 "box",
		strings.Repeat("h", 80): strings.Repeat("h", 63),
	} {
		got := report.HostVantage(host)
		if got != want {
			t.Errorf("HostVantage(%q) = %q; want %q", host, got, want)
		}
		if got != "" && report.CheckVantage(got) != nil {
			t.Errorf("HostVantage(%q) = %q, not a vantage name", host, got)
		}
	}
}
