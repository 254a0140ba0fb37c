package accesslog

import (
	"strings"
	"testing"
	"time"
)

// TestHAProxySampleFetches: log-format strings that say times, addresses,
// IDs and where a request went with sample fetches %[…] and their
// converters, each line as HAProxy writes it, read into what a join
// needs.
func TestHAProxySampleFetches(t *testing.T) {
	for _, tt := range []struct {
		name, format, line string
		want               want
	}{
		{"utime ISO", `%[src]:%[src_port] [%[date,utime(%Y-%m-%dT%H:%M:%S+00:00)]] %[be_name]/%[srv_name] %[status] %ST %Ta`,
			`::1:36414 [2026-12-01T16:40:21+00:00] be_dead/dead - 503 3`,
			want{time: "2026-12-01T16:40:20.997Z", client: "::1", port: 36414, status: 503, backend: "be_dead/dead", resolution: time.Second}},
		{"utime escaped space, accept date", `%[src] %[accept_date,utime(%Y-%m-%d\ %H:%M:%S)] %ST`,
			`10.0.0.9 2026-12-01 16:40:21 200`,
			want{time: "2026-12-01T16:40:21Z", client: "10.0.0.9", status: 200, resolution: time.Second}},
		{"ltime has no zone", `%[src] [%[request_date,ltime(%d/%b/%Y:%H:%M:%S)]] %ST`,
			`10.0.0.9 [01/Dec/2026:17:40:21] 200`,
			want{time: "2026-12-01T17:40:21Z", noZone: true, client: "10.0.0.9", status: 200}},
		{"ltime with its offset", `%[src] [%[request_date,ltime(%d/%b/%Y:%H:%M:%S %z)]] %ST`,
			`10.0.0.9 [01/Dec/2026:17:40:21 +0100] 200`,
			want{time: "2026-12-01T16:40:21Z", client: "10.0.0.9", status: 200}},
		{"ms_utime with %N", `%[src] %[accept_date(ms),ms_utime(%Y-%m-%dT%H:%M:%S.%3NZ)] %ST`,
			`10.0.0.9 2026-12-01T16:40:21.433Z 502`,
			want{time: "2026-12-01T16:40:21.433Z", client: "10.0.0.9", status: 502, resolution: time.Millisecond}},
		{"us_ltime", `%[src] %[accept_date(us),us_ltime(%FT%T.%N)] %ST`,
			`10.0.0.9 2026-12-01T16:40:21.433512 502`,
			want{time: "2026-12-01T16:40:21.433512Z", noZone: true, client: "10.0.0.9", status: 502, resolution: time.Microsecond}},
		{"raw date in ms, the log's time its end", `%[src]:%[src_port] %[date(0,ms)] %Ta %ST`,
			`127.0.0.1:5 1796143221250 250 200`,
			want{time: "2026-12-01T16:40:21Z", client: "127.0.0.1", port: 5, status: 200, resolution: time.Millisecond}},
		{"raw date, no duration", `%[src] %[date] %ST`,
			`127.0.0.1 1796143221 200`,
			want{time: "2026-12-01T16:40:21Z", atEnd: true, client: "127.0.0.1", status: 200, resolution: time.Second}},
		{"addresses and IDs", `%[src]:%[src_port] %[dst]:%[dst_port] %[date(0,ms)] %[fe_name] %[be_name]/%[srv_name] %[bc_dst]:%[bc_dst_port] %[status] %[unique-id] %[req.hdr(x-request-id)] %[hostname]`,
			`192.0.2.7:40000 127.0.0.1:8443 1796143221000 fe_main be_app/s2 10.0.0.4:8080 502 7F000001:C830_7F000001:49F3 pinprobe-376a1b4c-2-1 gw3`,
			want{time: "2026-12-01T16:40:21Z", atEnd: true, client: "192.0.2.7", port: 40000, status: 502, backend: "be_app/s2", backendAt: "10.0.0.4:8080",
				listener: "fe_main", requestID: "pinprobe-376a1b4c-2-1", instance: "gw3"}},
		{"dst names the listener without fe_name", `%[src] %[dst]:%[dst_port] %[date] %ST %[capture.req.hdr(0),json]`,
			`192.0.2.7 127.0.0.1:8443 1796143221 503 pinprobe-376a1b4c-2-3`,
			want{time: "2026-12-01T16:40:21Z", atEnd: true, client: "192.0.2.7", status: 503, listener: "127.0.0.1:8443", requestID: "pinprobe-376a1b4c-2-3"}},
		{"an ID kept in a variable", `%ci:%cp [%tr] %[var(txn.rid)] %[var(txn.backend)] %ST`,
			`127.0.0.1:5 [01/Dec/2026:16:40:21.500] pinprobe-376a1b4c-2-4 be_x 200`,
			want{time: "2026-12-01T16:40:21.5Z", noZone: true, client: "127.0.0.1", port: 5, status: 200, requestID: "pinprobe-376a1b4c-2-4"}},
		{"unknown fetch skipped", `%ci:%cp [%tr] %[bogus_fetch(1)] %b/%s %ST`,
			`127.0.0.1:5 [01/Dec/2026:16:40:21.500] what ever be/s1 200`,
			want{time: "2026-12-01T16:40:21.5Z", noZone: true, client: "127.0.0.1", port: 5, status: 200, backend: "be/s1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, recs := readAll(t, tt.line+"\n", Options{Format: tt.format})
			if r.Kind() != HAProxy {
				t.Errorf("kind %s; want haproxy", r.Kind())
			}
			if len(recs) != 1 {
				t.Fatalf("%d records (stats %+v, %+v); want 1", len(recs), r.Stats(), r.Stats().Unmatched)
			}
			tt.want.check(t, recs[0])
		})
	}
}

// TestHAProxySampleNotes: what of a format is not read is said, one line
// each, and the format is refused only when what the join needs is
// missing.
func TestHAProxySampleNotes(t *testing.T) {
	for _, tt := range []struct {
		name, format string
		notes        []string // substrings, one per note
		err          string
	}{
		{"known and read", `%[src]:%[src_port] %[date] %[be_name]/%[srv_name] %[ssl_fc_sni] %[req.hdr(user-agent)]`, nil, ""},
		{"unknown fetch", `%ci [%tr] %[bogus_fetch(1)] %ST`, []string{"%[bogus_fetch] is a sample fetch pinprobe does not know"}, ""},
		{"converted address", `%[src,ipmask(24)] %ci [%tr]`, []string{"%[src,ipmask(24)]: its value is converted (ipmask)"}, ""},
		{"a date pinprobe cannot read", `%ci %[date,utime(%U)]`, []string{"does not read %U"}, "logs no time"},
		{"a date converted otherwise", `%ci %[date,add(1)]`, []string{"a date converted by add"}, "a date converted by add"},
		{"unit mismatch", `%ci %[date,ms_utime(%T)]`, []string{"ms_utime takes a date in milliseconds and date gives seconds"}, "logs no time"},
		{"no client", `%[date] %ST`, nil, "%[src]"},
		{"unclosed", `%ci %[date,utime(%Y`, nil, "not closed by ]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(strings.NewReader(""), Options{Kind: HAProxy, Format: tt.format})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Open: %v; want one line saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if len(r.Notes()) != len(tt.notes) {
				t.Fatalf("notes %q; want %d", r.Notes(), len(tt.notes))
			}
			for i, n := range tt.notes {
				if !strings.Contains(r.Notes()[i], n) {
					t.Errorf("note %q; want it to say %q", r.Notes()[i], n)
				}
			}
		})
	}
}

// TestStrftime: the conversions HAProxy's time converters and Envoy's
// %START_TIME(…)% write, read back; what does not fit is refused.
func TestStrftime(t *testing.T) {
	for _, tt := range []struct {
		v, f string
		utc  bool
		want string // "" refused
		res  time.Duration
	}{
		{"2026-12-01T16:40:21+00:00", "%Y-%m-%dT%H:%M:%S+00:00", true, "2026-12-01T16:40:21Z", time.Second},
		{"01/Dec/2026:16:40:21 -0500", "%d/%b/%Y:%H:%M:%S %z", false, "2026-12-01T21:40:21Z", time.Second},
		{"Tue, 01 December 2026 04:40:21 PM", "%a, %d %B %Y %I:%M:%S %p", true, "2026-12-01T16:40:21Z", time.Second},
		{"2026-12-01 16:40:21.5", "%F %T.%N", true, "2026-12-01T16:40:21.5Z", 100 * time.Millisecond},
		{"1796143221.528", "%s.%3f", true, "2026-12-01T16:40:21.528Z", time.Millisecond},
		{"2026/12/01T16:40:21.123456Z", "%Y/%m/%dT%H:%M:%E6SZ", true, "2026-12-01T16:40:21.123456Z", time.Microsecond},
		{"Dec  1 16:40:21 2026", "%b %e %T %Y", true, "2026-12-01T16:40:21Z", time.Second},
		{"2026-13-01", "%F", true, "", 0},
		{"2026-12-01T16:40:21", "%Y-%m-%dT%H:%M:%S+00:00", true, "", 0},
		{"2026-12-01T16:40:21+00:00 and more", "%Y-%m-%dT%H:%M:%S+00:00", true, "", 0},
		{"99999-12-01", "%Y-%m-%d", true, "", 0},
		{"", "%Y", true, "", 0},
		{"2026", "%Y%", true, "", 0},
	} {
		got, res, _, ok := parseStrftime(tt.v, tt.f, tt.utc)
		switch {
		case tt.want == "" && ok:
			t.Errorf("parseStrftime(%q, %q) = %v; want refused", tt.v, tt.f, got)
		case tt.want != "" && (!ok || !got.Equal(mustTime(tt.want)) || res != tt.res):
			t.Errorf("parseStrftime(%q, %q) = %v, %v, %v; want %s, %v", tt.v, tt.f, got, res, ok, tt.want, tt.res)
		}
	}
}
