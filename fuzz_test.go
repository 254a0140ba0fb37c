package main

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseArgs: any command line parses or fails as a usage error of one
// line, never a panic; every flag value goes through its own Set.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"--rate\x00max\x00-n\x0010\x00http://a.test/",
		"-r\x000\x00http://a.test/",
		"--rate\x001e7\x00-d\x00-1s\x00http://a.test/",
		"--conn-requests\x00auto\x00--group-by\x00X-Served-By\x00http://a.test/",
		"--max-failure-rate\x000.1%\x00--max-p99\x00500ms\x00http://a.test/",
		"-H\x00Authorization Bearer x\x00http://a.test/",
		"--resolve\x00a.test:80:127.0.0.1,::1\x00http://a.test/",
		"--fail-status\x005xx,429\x00--http\x002\x00https://a.test/",
		"--dns-server\x00[::1]:53\x00--interval\x0010ms\x00http://a.test/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		_, _, err := parseArgs(args)
		if err == nil {
			return
		}
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseArgs(%q): %T %v; want a usage error", args, err, err)
		}
	})
}

// FuzzTargetsFile: a targets file parses or fails with an error that names
// the file, on one line.
func FuzzTargetsFile(f *testing.F) {
	for _, s := range []string{
		"# c\nGET https://a.test/login\nX-A: 1\n\nPOST https://a.test/x\nContent-Type: text/plain\n",
		"https://a.test/\n", "G(T http://a.test/\n", "GET http://a.test/ extra\n", "POST http://a.test/\n@\n",
		"GET http://a.test/\nNoColon\n", "GET http://a.test/\nAuthorization: Bearer ${NOPE_NOT_SET}\n", "\n\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		specs, err := parseTargets(t.Context(), "t.txt", []byte(data), strings.NewReader(""))
		if err != nil {
			if !strings.Contains(err.Error(), "t.txt") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("parseTargets: error %q does not name the file on one line", err)
			}
			return
		}
		if len(specs) == 0 {
			t.Errorf("parseTargets(%q): no target and no error", data)
		}
	})
}
