package testserver

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NginxBinary finds nginx: in PATH, or /usr/sbin/nginx. Where it is
// missing it skips the test, or fails it when the environment variable CI
// is set (.ci/run installs nginx).
func NginxBinary(t testing.TB) string {
	t.Helper()
	return findBinary(t, "nginx", "nginx", "/usr/sbin/nginx")
}

// HAProxyBinary finds haproxy: in PATH, or /usr/sbin/haproxy. Where it is
// missing it skips the test, or fails it when CI is set.
func HAProxyBinary(t testing.TB) string {
	t.Helper()
	return findBinary(t, "haproxy", "haproxy", "/usr/sbin/haproxy")
}

// PrometheusBinary finds prometheus (Debian's package, which brings
// promtool). Where it is missing it skips the test, or fails it when CI is
// set.
func PrometheusBinary(t testing.TB) string {
	t.Helper()
	return findBinary(t, "prometheus", "prometheus")
}

// Prometheus runs prometheus on listen, scraping targets every second (job
// "pinprobe") and evaluating the rule files rules every second, with the
// feature flags native histograms and exemplars need in 2.42; its
// configuration and storage in a t.TempDir(). It returns once prometheus
// listens, and stops its process group when the test ends.
func Prometheus(t testing.TB, listen netip.AddrPort, rules []string, targets ...string) *Process {
	t.Helper()
	return prometheus(t, listen, rules, "", targets)
}

// PrometheusScrape is Prometheus without rules, its job scraping targets
// with the settings job (YAML of the job's level, its later lines indented
// four spaces: scheme, tls_config, basic_auth).
func PrometheusScrape(t testing.TB, listen netip.AddrPort, job string, targets ...string) *Process {
	t.Helper()
	return prometheus(t, listen, nil, job, targets)
}

func prometheus(t testing.TB, listen netip.AddrPort, rules []string, job string, targets []string) *Process {
	t.Helper()
	bin := PrometheusBinary(t)
	dir := t.TempDir()
	quoted := quotedAll(targets)
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%s]
scrape_configs:
  - job_name: pinprobe
    %s
    static_configs:
      - targets: [%s]
`, strings.Join(quotedAll(rules), ", "), job, strings.Join(quoted, ", "))
	path := writeConf(t, dir, "prometheus.yml", conf)
	return StartProcess(t, ProcessSpec{
		Name: "prometheus",
		Path: bin,
		Args: []string{"--config.file=" + path, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + listen.String(), "--enable-feature=native-histograms,exemplar-storage"},
		Dir:          dir,
		Listen:       []netip.AddrPort{listen},
		ReadyTimeout: 20 * time.Second,
	})
}

// TmuxBinary finds tmux, a terminal of a set size for a test to watch a
// live view in. Where it is missing it skips the test, or fails it when CI
// is set.
func TmuxBinary(t testing.TB) string {
	t.Helper()
	return findBinary(t, "tmux", "tmux")
}

// Nginx runs nginx (master and one worker, in the foreground) with httpBlock
// as the contents of its http block: server blocks, upstreams. The
// launcher writes the rest: pid file, temporary paths and the error log
// (stderr, see Process.Log) all in a t.TempDir(), access log off. It
// returns once nginx listens on every address of listen, and stops the
// whole process group when the test ends (see StartProcess).
func Nginx(t testing.TB, httpBlock string, listen ...netip.AddrPort) *Process {
	t.Helper()
	return StartProcess(t, nginxSpec(t, httpBlock, listen))
}

// nginxSpec writes nginx's configuration and returns how to run it.
func nginxSpec(t testing.TB, httpBlock string, listen []netip.AddrPort) ProcessSpec {
	t.Helper()
	bin := NginxBinary(t)
	dir := t.TempDir()
	conf := fmt.Sprintf(`# written by pinprobe's testserver.Nginx
worker_processes 1;
daemon off;
master_process on;
pid %[1]s/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/client_body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
%[2]s
}
`, dir, httpBlock)
	path := writeConf(t, dir, "nginx.conf", conf)
	return ProcessSpec{Name: "nginx", Path: bin, Dir: dir, Listen: listen,
		Args: []string{"-p", dir + "/", "-e", "stderr", "-c", path}}
}

// HAProxy runs haproxy in the foreground (-db) with config as its proxy
// sections (frontend, backend, listen). The launcher writes the global
// section and defaults with timeouts (connect 2s, client and server 30s);
// each section sets its own mode. It returns once haproxy listens on every
// address of listen, and stops it when the test ends (see StartProcess).
func HAProxy(t testing.TB, config string, listen ...netip.AddrPort) *Process {
	t.Helper()
	return StartProcess(t, haproxySpec(t, config, listen))
}

// haproxySpec writes haproxy's configuration and returns how to run it.
func haproxySpec(t testing.TB, config string, listen []netip.AddrPort) ProcessSpec {
	t.Helper()
	bin := HAProxyBinary(t)
	dir := t.TempDir()
	conf := fmt.Sprintf(`# written by pinprobe's testserver.HAProxy
global
  maxconn 1024

defaults
  timeout connect 2s
  timeout client 30s
  timeout server 30s

%s
`, config)
	path := writeConf(t, dir, "haproxy.cfg", conf)
	return ProcessSpec{Name: "haproxy", Path: bin, Dir: dir, Listen: listen, Args: []string{"-db", "-f", path}}
}

// writeConf writes a launcher's configuration conf as dir/name and
// returns its path.
func writeConf(t testing.TB, dir, name, conf string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatalf("testserver: write %s: %v", name, err)
	}
	return path
}

// quotedAll is each of ss quoted, for a YAML flow list.
func quotedAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
