package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
)

// goldenJSON is the golden report as saved.
func goldenJSON(t *testing.T) []byte { return docfix.JSON(t, docfix.SavedGolden(t)) }

// refusal is an edit of a saved report that Read must refuse, with what
// its one-line error says.
type refusal struct {
	name string
	edit func(m map[string]any)
	want string
}

// refuses checks that Read refuses each edit of good, on one line naming the
// file and containing what the edit wants.
func refuses(t *testing.T, good []byte, tests []refusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := report.Read(bytes.NewReader(docfix.EditJSON(t, good, tt.edit)), "forged.json")
			if err == nil || !strings.HasPrefix(err.Error(), "read report forged.json: ") || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Read = %v; want one line naming forged.json and containing %q", err, tt.want)
			}
		})
	}
}

// TestReadReportRefusesImpossibleNumbers: numbers no run can produce —
// negative counts that still add up, a bucket failing more requests than it
// holds, durations and timestamps that overflow the arithmetic of a merge —
// are refused with where they are, instead of being shown (200×45 404×-5)
// or panicking the renderer or the merge.
func TestReadReportRefusesImpossibleNumbers(t *testing.T) {
	good := goldenJSON(t)
	refuses(t, good, []refusal{
		{"negative status that adds up", func(m map[string]any) {
			for _, s := range []map[string]any{docfix.Obj(t, m, "endpoints", "0", "status"), docfix.Obj(t, m, "families", "ipv4", "status"), docfix.Obj(t, m, "totals", "status")} {
				s["200"] = s["200"].(float64) + 5
				s["404"] = -5.0
			}
		}, `totals.status."404": -5 is negative`},
		{"negative bytes", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "0")["bytes"] = -1.0 }, "endpoints[0].bytes: -1 is negative"},
		{"negative fingerprint count", func(m map[string]any) { docfix.Obj(t, m, "fingerprints", "0")["fresh"] = -3.0 }, "fingerprints[0].fresh: -3 is negative"},
		{"negative latency", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "1", "latency_ms")["min"] = -0.5 }, "endpoints[1].latency_ms.min: -0.5 is negative"},
		{"count past 2^40", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "1", "conns")["connections"] = 1e15 }, "endpoints[1].conns.connections: 1000000000000000 is more than"},
		{"bucket failing more than it holds", func(m map[string]any) {
			req := docfix.Arr(t, m, "timeline", "series", "1", "requests")
			req[0], req[1] = 1.0, 7.0 // the sums still match the endpoint's
			// Without the latencies, which count each bucket's requests too.
			delete(docfix.Obj(t, m, "timeline", "series", "1"), "latency")
			delete(docfix.Obj(t, m, "timeline"), "families")
		}, "timeline 2001:db8::7 (https://sign.example.com/): bucket 0: 3 failed of 1 requests"},
		{"latency bins out of order", func(m map[string]any) {
			bins := docfix.Arr(t, m, "timeline", "series", "1", "latency", "bins", "0")
			bins[0], bins[1] = bins[1], bins[0]
		}, "timeline 2001:db8::7 (https://sign.example.com/): latency bucket 0: bins must rise from 0 to 255"},
		{"family latency of more requests than it sent", func(m map[string]any) {
			counts := docfix.Arr(t, m, "timeline", "families", "1", "latency", "counts", "0")
			counts[0] = counts[0].(float64) + 1
		}, "timeline: latency of family ipv6: bucket 0: latencies of 9 requests, not 8"},
		{"interval of 127 years", func(m map[string]any) { docfix.Obj(t, m, "timeline")["interval_s"] = 4e9 }, "timeline.interval_s: 4e+09 is larger"},
		{"timeline over a century", func(m map[string]any) { docfix.Obj(t, m, "timeline")["interval_s"] = 3.1e9 }, "10 buckets of 3.1e+09 s cover more than 100 years"},
		{"timeline in year one", func(m map[string]any) { docfix.Obj(t, m, "timeline")["start"] = "0001-01-01T00:00:00.001Z" }, "timeline.start: time 0001-01-01T00:00:00Z is outside 1970 to 2200"},
		{"timeline without a start", func(m map[string]any) { docfix.Obj(t, m, "timeline")["start"] = "0001-01-01T00:00:00.000Z" }, "timeline: buckets but no start"},
		{"sample in 2500", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "1", "samples", "0")["at"] = "2500-01-01T00:00:00.000Z"
		}, "endpoints[1].samples[0].at: time 2500-01-01T00:00:00Z is outside"},
		{"send window of a thousand years", func(m map[string]any) { m["send_s"] = 3.2e10 }, "send_s: 3.2e+10 is larger"},
		{"bytes past 2^53", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "0")["bytes"] = 1.8014398509481984e16 }, "endpoints[0].bytes: 18014398509481984 is more bytes than"},
	})
	if _, err := report.Read(bytes.NewReader(docfix.EditJSON(t, good, func(map[string]any) {})), "same.json"); err != nil {
		t.Errorf("Read(golden report through EditJSON) = %v; want nil", err)
	}
	// A report written before the timeline kept latencies reads.
	old := docfix.EditJSON(t, good, func(m map[string]any) {
		delete(docfix.Obj(t, m, "timeline"), "families")
		for _, s := range docfix.Arr(t, m, "timeline", "series") {
			delete(s.(map[string]any), "latency")
		}
	})
	if r, err := report.Read(bytes.NewReader(old), "old.json"); err != nil || len(r.Timeline.Families) != 0 || r.Timeline.Series[0].Latency != nil {
		t.Errorf("Read(a report without latencies over time) = %v; want it read, without them", err)
	}
	// Bytes feed no test, and a long run moves more than 2^40 of them.
	terabytes := docfix.EditJSON(t, good, func(m map[string]any) { docfix.Obj(t, m, "endpoints", "0")["bytes"] = 1 << 45 })
	if _, err := report.Read(bytes.NewReader(terabytes), "long.json"); err != nil {
		t.Errorf("Read(a report of 32 TiB) = %v; want nil", err)
	}
}

// outside is text a terminal would act on (a title, a screen clear, a
// bell), HTML, and a right-to-left override.
const outside = "A\x1b]0;owned\x07B\x1b[2J<script>x</script>\u202eC"

// TestReadReportCleansOutsideStrings: every string of a saved report is
// made printable where it enters, once: what a terminal or a browser would
// act on is written out (\x1b, \u{202e}), so no renderer ever receives it.
func TestReadReportCleansOutsideStrings(t *testing.T) {
	good := goldenJSON(t)
	sample := []string{"endpoints", "1", "samples", "1"}
	tests := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"version", func(m map[string]any) { m["version"] = outside }},
		{"command", func(m map[string]any) { m["command"] = []any{"pinprobe", outside} }},
		{"dns source and error", func(m map[string]any) {
			docfix.Obj(t, m, "dns", "0")["source"] = outside
			docfix.Obj(t, m, "dns", "2")["error"] = outside
			docfix.Obj(t, m, "dns", "1")["host"] = outside
		}},
		{"client error", func(m map[string]any) { m["client_error"] = outside }},
		{"fingerprint", func(m map[string]any) {
			f := docfix.Obj(t, m, "fingerprints", "0")
			f["server"], f["producer"], f["body"], f["body_hash"] = outside, outside, outside+"\n\tline", outside
		}},
		{"sample", func(m map[string]any) {
			s := docfix.Obj(t, m, sample...)
			s["request_id"], s["error"], s["proto"], s["body"] = outside, outside, outside, outside
			docfix.Obj(t, m, append(sample, "headers")...)["X-Evil"] = outside
			docfix.Obj(t, m, append(sample, "headers")...)[outside] = "name"
		}},
		{"verdict", func(m map[string]any) {
			v := docfix.Obj(t, m, "verdict")
			v["status"], v["headline"], v["summary"], v["notes"] = outside, outside, outside, []any{outside}
		}},
		{"notes", func(m map[string]any) { m["notes"] = []any{outside} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := report.Read(bytes.NewReader(docfix.EditJSON(t, good, tt.edit)), "outside.json")
			if err != nil {
				t.Fatal(err)
			}
			doc := string(docfix.JSON(t, r))
			if strings.Contains(doc, `\u001b`) || strings.Contains(doc, `\u0007`) || strings.Contains(doc, "\u202e") {
				t.Errorf("a control or invisible character was kept:\n%s", doc)
			}
			if !strings.Contains(doc, `A\\x1b]0;owned\\x07B\\x1b[2J<script>x</script>\\u{202e}C`) {
				t.Errorf("the outside text is not shown written out")
			}
		})
	}
	t.Run("body keeps its lines", func(t *testing.T) {
		r, err := report.Read(bytes.NewReader(docfix.EditJSON(t, good, tests[4].edit)), "outside.json")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.Fingerprints[0].Body, `A\x1b]0;owned\x07B\x1b[2J<script>x</script>\u{202e}C`+"\n\tline"; got != want {
			t.Errorf("body %q; want %q", got, want)
		}
	})
}

// TestReadReportRefusesWhatIsNoAddress: what must be an address is checked
// as one, so no renderer or log query gets text in its place.
func TestReadReportRefusesWhatIsNoAddress(t *testing.T) {
	good := goldenJSON(t)
	refuses(t, good, []refusal{
		{"endpoint address", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "1")["address"] = outside
			docfix.Obj(t, m, "timeline", "series", "1")["address"] = outside
		}, `endpoints[1]: address "A\\x1b]0;owned\\x07B\\x1b[2J<script>x</script>\\u{202e}C" is not an IP address`},
		{"zone with markup", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "1")["address"] = "fe80::1%<img>"
			docfix.Obj(t, m, "timeline", "series", "1")["address"] = "fe80::1%<img>"
		}, `endpoints[1]: address "fe80::1%<img>" is not an IP address`},
		{"family of the other address", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "0")["address"] = "2001:db8::99"
			docfix.Obj(t, m, "timeline", "series", "0")["address"] = "2001:db8::99"
		}, `2001:db8::99 is an ipv6 address, filed under family "ipv4"`},
		{"unknown family", func(m map[string]any) {
			fams := docfix.Obj(t, m, "families")
			fams["<b>"] = fams["ipv6"]
			delete(fams, "ipv6")
			for _, i := range []string{"1", "3"} {
				docfix.Obj(t, m, "endpoints", i)["family"] = "<b>"
			}
		}, `families: "<b>" is not an address family`},
		{"target", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "1")["target"] = "javascript:alert(1)"
			docfix.Obj(t, m, "timeline", "series", "1")["target"] = "javascript:alert(1)"
		}, `endpoints[1]: target "javascript:alert(1)" is not an http or https URL`},
		{"host", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "1")["host"] = "evil.example" }, `endpoints[1]: host "evil.example" is not the host of its target "https://sign.example.com/"`},
		{"port", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "1")["port"] = 8443.0 }, `endpoints[1]: port 8443 is not the port of its target`},
		{"series of another endpoint", func(m map[string]any) {
			docfix.Obj(t, m, "timeline", "series", "1")["target"] = "https://other.example.com/"
		}, `timeline.series[1]: 2001:db8::7 ("https://other.example.com/") is not its endpoint`},
		{"sample local", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "1", "samples", "1")["local"] = "<img>" }, `endpoints[1].samples[1].local: "<img>" is not an IP address and port`},
		{"sample remote", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "1", "samples", "1")["remote"] = "[::1%a|b]:443"
		}, `endpoints[1].samples[1].remote: "[::1%a|b]:443" is not an IP address and port`},
		{"client address", func(m map[string]any) {
			docfix.Obj(t, m, "client")["local_addresses"] = []any{"192.0.2.10", "localhost"}
		}, `client.local_addresses[1]: "localhost" is not an IP address`},
		{"dns address", func(m map[string]any) { docfix.Obj(t, m, "dns", "0")["addresses"] = []any{"x"} }, `dns[0].addresses[0]: "x" is not an IP address`},
		{"dns change", func(m map[string]any) { docfix.Obj(t, m, "dns", "1", "changes", "0")["removed"] = []any{"y"} }, `dns[1].changes[0].removed[0]: "y" is not an IP address`},
		{"fingerprint address", func(m map[string]any) { docfix.Obj(t, m, "fingerprints", "0", "addresses")["<i>x</i>"] = 1.0 }, `fingerprints[0].addresses: "<i>x</i>" is not an IP address`},
		// Thousands of faults make one line: the first three, and how many more.
		{"many", func(m map[string]any) {
			var bad []any
			for i := range 5000 {
				bad = append(bad, fmt.Sprintf("x%d", i))
			}
			docfix.Obj(t, m, "dns", "0")["addresses"] = bad
		}, `dns[0].addresses[0]: "x0" is not an IP address; dns[0].addresses[1]: "x1" is not an IP address; dns[0].addresses[2]: "x2" is not an IP address; and 4997 more`},
	})
}

// TestReadReportRefusesImpossibleTimesAndLatencies: hand edits that the
// counts do not catch — an end six years before the start (printed as a
// run of 20:12:58 – 00:00:00), a duration that is not the time between
// them, a median above the p99 (printed P50 1000.00s P99 4.38ms) — are
// refused, naming the fields; the golden report, as pinprobe writes it,
// still reads.
func TestReadReportRefusesImpossibleTimesAndLatencies(t *testing.T) {
	good := goldenJSON(t)
	refuses(t, good, []refusal{
		{"ended before it started", func(m map[string]any) {
			m["started_at"], m["ended_at"] = "2026-06-16T20:12:58.000Z", "2020-01-01T00:00:00.000Z"
		}, "ended_at 2020-01-01T00:00:00Z is before started_at 2026-06-16T20:12:58Z"},
		{"duration of an hour in a run of seconds", func(m map[string]any) { m["duration_s"] = 3600.0 }, "duration_s 3600 is not the"},
		{"median above the p99", func(m map[string]any) { docfix.Obj(t, m, "totals", "latency_ms")["p50"] = 999999.0 },
			"totals: latency_ms: p50 999999 is above p90"},
		{"endpoint p999 above its max", func(m map[string]any) { docfix.Obj(t, m, "endpoints", "1", "latency_ms")["p999"] = 5000.0 },
			"latency_ms: p999 5000 is above max"},
		{"phase median above its p99", func(m map[string]any) {
			docfix.Obj(t, m, "endpoints", "0", "phases_ms", "ttfb")["p50"] = 1e6
		}, "phase ttfb: p50 1e+06 is above p99"},
	})
	if _, err := report.Read(bytes.NewReader(good), "golden.json"); err != nil {
		t.Errorf("Read(golden) = %v; want nil", err)
	}
}

// TestReadReportCutsEchoedValues: a refusal quotes a value from the file
// cut to 64 characters and "…", so a 5,000-character vantage, target or
// run ID leaves a one-line error of readable length.
func TestReadReportCutsEchoedValues(t *testing.T) {
	good, long := goldenJSON(t), strings.Repeat("v", 5000)
	for name, edit := range map[string]func(m map[string]any){
		"vantage": func(m map[string]any) { m["vantage"] = long + "!" },
		"run_id":  func(m map[string]any) { m["run_id"] = long },
		"target":  func(m map[string]any) { docfix.Obj(t, m, "endpoints", "0")["target"] = "https://" + long },
		"family":  func(m map[string]any) { docfix.Obj(t, m, "endpoints", "0")["family"] = long },
	} {
		t.Run(name, func(t *testing.T) {
			_, err := report.Read(bytes.NewReader(docfix.EditJSON(t, good, edit)), "edited.json")
			if err == nil {
				t.Fatal("Read = nil; want a refusal")
			}
			if msg := err.Error(); len(msg) > 600 || strings.Contains(msg, strings.Repeat("v", 65)) || !strings.Contains(msg, strings.Repeat("v", 50)) ||
				!strings.Contains(msg, "…") || strings.Contains(msg, "\n") {
				t.Errorf("refusal of %d bytes; want the value cut to 64 characters and \"…\" on one line: %.300s", len(msg), msg)
			}
		})
	}
}

// TestReadReportPreflight: a saved report's preflight is what a run can
// write: each check of an endpoint of the run, its address of its family,
// an error class exactly when it failed; a not-probed report reads back.
func TestReadReportPreflight(t *testing.T) {
	good := docfix.SavedJSON(t, "not-probed.json")
	r, err := report.Parse(good, "down.json")
	if err != nil || r.NotProbed == "" || len(r.Preflight) != 2 {
		t.Fatalf("a not-probed report: %v, %+v", err, r)
	}
	refuses(t, good, []refusal{
		{"no endpoint's", func(m map[string]any) { docfix.Obj(t, m, "preflight", "0")["address"] = "192.0.2.99" }, "preflight[0]: 192.0.2.99"},
		{"not an address", func(m map[string]any) { docfix.Obj(t, m, "preflight", "0")["address"] = "sign" }, `preflight[0]: address "sign" is not an IP address`},
		{"wrong family", func(m map[string]any) { docfix.Obj(t, m, "preflight", "1")["family"] = "ipv4" }, "filed under family"},
		{"ok with an error", func(m map[string]any) { docfix.Obj(t, m, "preflight", "1")["ok"] = true }, "ok true with error class"},
		{"unknown class", func(m map[string]any) { docfix.Obj(t, m, "preflight", "1")["class"] = "gremlins" }, `error class "gremlins"`},
		{"more checks than endpoints", func(m map[string]any) {
			p := docfix.Arr(t, m, "preflight")
			m["preflight"] = append(p, p[0])
		}, "3 checks of 2 endpoints"},
	})
}
