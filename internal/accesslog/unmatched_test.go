package accesslog

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestUnmatched: a custom format that matched none of a log's lines left
// only "150 lines did not parse (lines 1, 2, 3, 4, 5)"; the reader now
// says where the first line leaves the format, and which format pinprobe
// knows it reads as: the cause, not only the count.
func TestUnmatched(t *testing.T) {
	const (
		demo     = `127.0.0.1:50158 [04/Dec/2026:23:52:07 +0000] "GET /sign HTTP/1.1" 200 93 up=127.0.0.1:45767 us=200`
		combined = `127.0.0.1 - - [04/Dec/2026:23:52:07 +0000] "GET /sign HTTP/1.1" 200 93 "-" "pinprobe/0.1.0"`
		iso      = `127.0.0.1:50158 [2026-12-04T23:52:07+00:00] "GET /sign HTTP/1.1" 200`
	)
	tests := []struct {
		name, format, line string
		want               Unmatched
	}{
		{"a literal the line lacks after an address", `$remote_addr - $remote_user [$time_local] "$request" $status`, demo,
			Unmatched{Line: 1, Column: 10, FormatHas: " - ", LineHas: ":50158 [04/Dec/2026:23:5"}},
		{"a literal after a variable of any text", `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent upstream=$upstream_addr`, demo,
			Unmatched{Line: 1, Column: 71, FormatHas: "$body_bytes_sent upstream=", LineHas: "93 up=127.0.0.1:45767 us"}},
		{"a value of the wrong shape", `$remote_addr:$remote_port [$time_local] $status`, demo,
			Unmatched{Line: 1, Column: 46, FormatHas: "$status", LineHas: `"GET /sign HTTP/1.1" 200`}},
		{"the format ends before the line", `$remote_addr:$remote_port [$time_local] "$request" $status`, demo,
			Unmatched{Line: 1, Column: 70, LineHas: " 93 up=127.0.0.1:45767 u"}},
		{"the line ends before the format", `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent up=$upstream_addr us=$upstream_status rt=$request_time`, demo,
			Unmatched{Line: 1, Column: 96, FormatHas: "$upstream_status rt=", LineHas: "200"}},
		{"the line ends before a literal", `$remote_addr:$remote_port [$time_local] "$request" $status $body_bytes_sent up=$upstream_addr us=$status rt=`, demo,
			Unmatched{Line: 1, Column: 99, FormatHas: " rt="}},
		{"a token with no space where the line has one", `$remote_addr:$remote_port [$time_iso8601] "$request" $status`, demo,
			Unmatched{Line: 1, Column: 38, FormatHas: `] "`, LineHas: ` +0000] "GET /sign HTTP/`}},
		{"a time in another form", `$remote_addr:$remote_port [$time_local] "$request" $status`, iso,
			Unmatched{Line: 1, Column: 69}},
		{"a log in a format pinprobe reads", `$remote_addr:$remote_port [$time_local] "$request" $status`, combined,
			Unmatched{Line: 1, Column: 10, FormatHas: ":", LineHas: ` - - [04/Dec/2026:23:52:`, ReadsAs: "nginx combined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(strings.NewReader(tt.line+"\n"+tt.line+"\n"), Options{Format: tt.format})
			if err != nil {
				t.Fatal(err)
			}
			var rec Record
			if err := r.Next(&rec); !errors.Is(err, io.EOF) {
				t.Fatalf("Next = %v, %+v; want no record", err, rec)
			}
			st := r.Stats()
			if st.Records != 0 || st.Skipped != 2 || st.Unmatched == nil {
				t.Fatalf("records %d, skipped %d, unmatched %v; want 0, 2, the first line's", st.Records, st.Skipped, st.Unmatched)
			}
			if *st.Unmatched != tt.want {
				t.Errorf("unmatched %+v; want %+v", *st.Unmatched, tt.want)
			}
		})
	}
	// A line that parses says nothing.
	r, err := Open(strings.NewReader(combined+"\n"), Options{Format: NginxCombined})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := r.Next(&rec); err != nil || r.Stats().Unmatched != nil {
		t.Errorf("a line of the format: %v, unmatched %+v; want a record and nothing unmatched", err, r.Stats().Unmatched)
	}
}
