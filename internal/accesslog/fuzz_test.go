package accesslog

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzOpen: whatever the bytes, Open returns a reader or an error, and
// Next ends (io.EOF or an error) without a panic, one record per line at
// most, with every format detected or given.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{
		`127.0.0.1 - - [01/Dec/2026:16:40:21 +0000] "GET / HTTP/1.1" 200 1 "-" "x"` + "\n",
		`::1:36414 [01/Dec/2026:16:40:21.433] fe_v6 be_dead/dead 0/0/-1/-1/3 503 217 - - SC-- 1/1/0/0/3 0/0 "GET /sign HTTP/1.1"` + "\n",
		"TimeGenerated,ClientIp,HttpStatus\n2026-12-01T16:40:21Z,203.0.113.5,502\n",
		`[{"TimeGenerated":"2026-12-01T16:40:21Z","ClientIp":"203.0.113.5","HttpStatus":200}]`,
		`{"tables":[{"name":"t","columns":[{"name":"TimeGenerated"}],"rows":[["2026-12-01T16:40:21Z"]]}]}`,
		`{"records":[{"time":"2026-12-01T16:40:21Z","properties":{"clientIP":"::1"}}]}`,
		`https 2026-12-01T16:40:21.186641Z app/lb/1 192.0.2.1:2817 10.0.0.1:80 0.000 0.001 0.000 502 502 34 366 "GET https://h:443/ HTTP/1.1" "c"` + "\n",
		"\x1f\x8b\x08\x00",
		"{\"records\":[{\"time\":\"2026-12-01T16:40:21Z\",\"properties\":{\"clientIP\":\"::1\",\"requestQuery\":\"SERVER-ROUTED=10.4.0.4&SERVER-STATUS=502\"}}],\"x\":[\"]\"]}\n{\"records\":[]}\n",
		"{\n  \"tables\": [\n    {\"name\": \"t\", \"columns\": [{\"name\": \"TimeGenerated\"}, {\"name\": \"ClientIp\"}], \"rows\": [[\"2026-12-01T16:40:21Z\", \"::1\"]]},\n    {\"columns\": [], \"rows\": []}\n  ]\n}\n",
		"\ufeff[{\"TimeGenerated\":\"2026-12-01T16:40:21Z\",\"ClientIp\":\"203.0.113.5\"}]",
		"\xff\xfe1\x002\x007\x00.\x000\x00.\x000\x00.\x001\x00 \x00-\x00\n\x00\x00\xd8",
		"2026-12-01T16:40:21Z\t203.0.113.5\t502\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	formats := []Options{{}, {Kind: Nginx}, {Kind: HAProxy}, {Kind: Azure}, {Kind: ALB},
		{Format: `$remote_addr:$remote_port [$time_local] "$request" $status up=$upstream_addr us=$upstream_status`},
		{Format: `%ci:%cp [%tr] %ft %b/%s %si:%sp %ST %{+Q}r`}}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		o := formats[int(which)%len(formats)]
		o.MaxLine = 4096
		r, err := Open(bytes.NewReader(data), o)
		if err != nil {
			return
		}
		lines := int64(bytes.Count(data, []byte("\n"))) + 1
		var n int64
		for {
			var rec Record
			err := r.Next(&rec)
			if errors.Is(err, io.EOF) || err != nil {
				break
			}
			n++
			if n > lines+int64(len(data)) {
				t.Fatalf("%d records from %d bytes", n, len(data))
			}
		}
	})
}
