package render_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestSchemaMatchesGoTypes: every struct a document holds has a definition
// of the same name in its schema, with exactly the struct's JSON fields as
// properties, required exactly when the field is written always (no
// omitempty), of the JSON type the field encodes to, each with a
// description. A field added to the code without the schema fails here,
// even before a test writes it.
func TestSchemaMatchesGoTypes(t *testing.T) {
	for _, tt := range []struct {
		kind string
		root reflect.Type
	}{
		{docfix.KindReport, reflect.TypeFor[report.Report]()},
		{docfix.KindCompare, reflect.TypeFor[compare.Comparison]()},
		{docfix.KindPreflight, reflect.TypeFor[report.PreflightCheck]()},
	} {
		defs := schemaDefs(t, tt.kind)
		seen := map[reflect.Type]bool{}
		var visit func(typ reflect.Type)
		visit = func(typ reflect.Type) {
			for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Struct || typ == reflect.TypeFor[report.Time]() || seen[typ] {
				return
			}
			seen[typ] = true
			name := typ.Name()
			def, ok := defs[name].(map[string]any)
			if !ok {
				t.Errorf("%s: no definition of %s in $defs", tt.kind, name)
				return
			}
			props, required := flatProperties(defs, def)
			fields := jsonFields(typ)
			for _, f := range fields {
				where := tt.kind + ": " + name + "." + f.name
				p, ok := props[f.name]
				if !ok {
					t.Errorf("%s: the Go field %s is not in the schema", where, f.goName)
					continue
				}
				if required[f.name] == f.omitempty {
					t.Errorf("%s: required %v; want %v (omitempty %v)", where, required[f.name], !f.omitempty, f.omitempty)
				}
				if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
					t.Errorf("%s: no description", where)
				}
				want := jsonTypes(f.typ, f.omitempty)
				if got := schemaTypes(defs, p); !slices.Equal(got, want) {
					t.Errorf("%s: schema types %v; the Go field %s encodes as %v", where, got, f.typ, want)
				}
				visit(f.typ)
			}
			for p := range props {
				if !slices.ContainsFunc(fields, func(f goField) bool { return f.name == p }) {
					t.Errorf("%s: %s.%s is in the schema but no Go field writes it", tt.kind, name, p)
				}
			}
		}
		visit(tt.root)
	}
}

// schemaDefs reads the $defs of kind's schema file.
func schemaDefs(t *testing.T, kind string) map[string]any {
	t.Helper()
	defs, _ := schemaDoc(t, kind)["$defs"].(map[string]any)
	return defs
}

// schemaDoc reads kind's schema file.
func schemaDoc(t *testing.T, kind string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(docfix.SchemaFile(kind))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", docfix.SchemaFile(kind), err)
	}
	return doc
}

// refDef returns the definition a "#/$defs/NAME" reference names.
func refDef(defs map[string]any, node map[string]any) (string, map[string]any) {
	ref, _ := node["$ref"].(string)
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return "", nil
	}
	def, _ := defs[name].(map[string]any)
	return name, def
}

// flatProperties returns a definition's properties and required ones,
// with those of the definition it references (an embedded struct).
func flatProperties(defs, def map[string]any) (map[string]map[string]any, map[string]bool) {
	props, required := map[string]map[string]any{}, map[string]bool{}
	for ; def != nil; _, def = refDef(defs, def) {
		if ps, ok := def["properties"].(map[string]any); ok {
			for k, v := range ps {
				props[k], _ = v.(map[string]any)
			}
		}
		if rs, ok := def["required"].([]any); ok {
			for _, r := range rs {
				required[r.(string)] = true
			}
		}
	}
	return props, required
}

// goField is one JSON field of a struct.
type goField struct {
	name, goName string
	typ          reflect.Type
	omitempty    bool
}

// jsonFields lists the fields encoding/json writes for typ, embedded
// structs flattened.
func jsonFields(typ reflect.Type) []goField {
	var out []goField
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, goField{name: name, goName: typ.Name() + "." + f.Name, typ: f.Type, omitempty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

// jsonTypes is what a Go type encodes to, as sorted JSON Schema types: a
// pointer written always may be null.
func jsonTypes(typ reflect.Type, omitempty bool) []string {
	nullable := false
	if typ.Kind() == reflect.Pointer {
		nullable = !omitempty
		typ = typ.Elem()
	}
	var t string
	switch {
	case typ == reflect.TypeFor[report.Time]():
		t = "string"
	case typ.Kind() == reflect.Bool:
		t = "boolean"
	case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64:
		t = "integer"
	case typ.Kind() == reflect.Float32 || typ.Kind() == reflect.Float64:
		t = "number"
	case typ.Kind() == reflect.String:
		t = "string"
	case typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array:
		t = "array"
	case typ.Kind() == reflect.Map || typ.Kind() == reflect.Struct:
		t = "object"
	default:
		t = typ.Kind().String()
	}
	if nullable {
		return []string{"null", t}
	}
	return []string{t}
}

// schemaTypes is the set of JSON types a property schema allows, from its
// type, const, enum, oneOf or the definition it references; sorted.
func schemaTypes(defs, node map[string]any) []string {
	set := map[string]bool{}
	var add func(n map[string]any)
	add = func(n map[string]any) {
		switch ty := n["type"].(type) {
		case string:
			set[ty] = true
			return
		case []any:
			for _, x := range ty {
				set[x.(string)] = true
			}
			return
		}
		if c, ok := n["const"]; ok {
			set[valueType(c)] = true
			return
		}
		if e, ok := n["enum"].([]any); ok {
			for _, v := range e {
				set[valueType(v)] = true
			}
			return
		}
		if alts, ok := n["oneOf"].([]any); ok {
			for _, a := range alts {
				add(a.(map[string]any))
			}
			return
		}
		if _, def := refDef(defs, n); def != nil {
			add(def)
		}
	}
	add(node)
	return slices.Sorted(maps.Keys(set))
}

func valueType(v any) string {
	switch v := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// TestSchemaReports: the reports the renderers' tests use, a report with
// every optional part, merged reports and an empty run's report are valid,
// and between them they exercise every property the report schema
// defines.
func TestSchemaReports(t *testing.T) {
	golden := fixture.GoldenReport(t)
	rich := richReport(t)
	merged := mergedRichReport(t, rich)
	v4only := fixture.CmpRun(t, fixture.CmpStart, fixture.CmpEndpoint{Target: "http://v4.example.com/", Address: "192.0.2.40", N: 50, Failed: 5, FailStatus: 503, Latency: time.Millisecond})
	v4only.Plan.Only = "ipv4"
	v4only.Plan.PaceGrainS = 0.01 // --pace-grain 10ms
	v4only.Verdict = judge.Judge(v4only, judge.Once())
	// A run of --until-verdict that went to the end: judged at the last
	// look's level.
	ranOut := docfix.RoundTrip(t, golden, "golden.json")
	ranOut.Verdict = judge.Judge(ranOut, judge.AtLook(30, true))
	// Two windows of one watch, merged: parts of one run, each endpoint
	// saying which of the run's request IDs it counts.
	w1, w2 := docfix.RoundTrip(t, golden, "w1.json"), docfix.RoundTrip(t, golden, "w2.json")
	w1.RunID, w2.RunID, w1.Part, w2.Part = "0a1b2c3d", "0a1b2c3d", true, true
	d := w1.EndedAt.Sub(w1.StartedAt.Time)
	w2.StartedAt, w2.EndedAt = w1.EndedAt, report.Time{Time: w1.EndedAt.Add(d)}
	for i := range w1.Endpoints {
		w1.Endpoints[i].IDRanges = []report.IDRange{{First: 1, Last: 40}}
		w2.Endpoints[i].IDRanges = []report.IDRange{{First: 41, Last: 80}, {First: 83, Last: 83}}
	}
	windows, err := fixture.MergeJudged([]*report.Report{w1, w2}, []string{"w1.json", "w2.json"})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]*report.Report{
		"windows, merged": windows,
		"golden":          golden,
		"hostile":         fixture.HostileReport(t),
		"empty":           emptyReport(t),
		"abandoned":       fixture.AbandonedRun(t),
		"rich":            rich,
		"rich, merged":    merged,
		"ipv4 only":       v4only,
		"ran to the end":  ranOut,
		"vantages":        fixture.VantageMerge(t),
		"a run's vantage": fixture.VantageRun(t, "eu-west", 0, 0),
		"not probed":      notProbedReport(t),
		"outage":          outageReport(t),
		"gate passed":     gatePassedReport(t),
	}
	cov := newCoverage(t, docfix.KindReport)
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		t.Run(name, func(t *testing.T) {
			doc := docfix.ReportJSON(t, docs[name])
			cov.add(t, doc)
		})
	}
	cov.check(t)
}

// TestSchemaComparisons: the golden comparison, one of a merged report
// with an interrupted run of another --fail-status, a run against itself,
// the golden run against the rich one, a deploy that made an instance slow
// (matched with --match host), two empty runs and a slowdown on too few
// requests for the p99's test are valid pinprobe.compare/v1 documents, and
// exercise every property of the schema.
func TestSchemaComparisons(t *testing.T) {
	a := fixture.CmpRun(t, fixture.CmpStart, fixture.CmpEndpoint{Address: "127.0.0.1", N: 100, Latency: time.Millisecond})
	b := fixture.CmpRun(t, fixture.CmpStart, fixture.CmpEndpoint{Address: "127.0.0.1", N: 100, Failed: 50, FailStatus: 0, Latency: time.Millisecond})
	merged, err := fixture.MergeJudged([]*report.Report{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	after := fixture.CmpRun(t, fixture.CmpStart.Add(time.Hour), fixture.CmpEndpoint{Address: "127.0.0.1", N: 200, Latency: time.Millisecond})
	after.Plan.FailStatus = "5xx,429"
	after.Interrupted = true
	rich := richReport(t)
	cov := newCoverage(t, docfix.KindCompare)
	for _, tt := range []struct {
		name string
		c    *compare.Comparison
	}{
		{"golden", cmpfix.GoldenComparison(t)},
		{"latency, --match host", cmpfix.LatencyComparison(t)},
		{"merged before", compare.Reports(merged, after)},
		{"itself", compare.Reports(a, a)},
		{"rich", compare.Reports(fixture.GoldenReport(t), rich)},
		{"empty", compare.Reports(emptyReport(t), emptyReport(t))},
		{"slower, too few requests for the p99", cmpfix.SlowerComparison(t, 150, 11)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cov.add(t, cmpfix.CompareJSON(t, tt.c))
		})
	}
	cov.check(t)
}

// TestSchemaPreflight: the preflight document of passed and failed checks,
// over http and https, IPv4 and IPv6, is a valid pinprobe.preflight/v1
// document that exercises every property of the schema.
func TestSchemaPreflight(t *testing.T) {
	web := fixture.MustTarget(t, "http://app.example.com:8080/")
	tls := fixture.MustTarget(t, "https://app.example.com/")
	eps := []*probe.Endpoint{
		{ID: 0, Target: web, Addr: netip.MustParseAddr("192.0.2.1")},
		{ID: 1, Target: tls, Addr: netip.MustParseAddr("2001:db8::1")},
		{ID: 2, Target: tls, Addr: netip.MustParseAddr("192.0.2.2")},
	}
	checks := []probe.Check{
		{Endpoint: 0, Connect: 300 * time.Microsecond, Local: netip.MustParseAddrPort("192.0.2.100:50001")},
		{Endpoint: 1, Connect: 400 * time.Microsecond, Handshake: 3 * time.Millisecond, ALPN: "h2", Local: netip.MustParseAddrPort("[2001:db8::100]:50002")},
		{Endpoint: 2, Connect: 10 * time.Second, Err: errors.New("dial tcp 192.0.2.2:443: i/o timeout"), Class: probe.ClassConnectTimeout},
	}
	var buf bytes.Buffer
	if err := report.PreflightJSON(&buf, collect.Preflight(eps, checks)); err != nil {
		t.Fatal(err)
	}
	docfix.CheckSchema(t, docfix.KindPreflight, buf.Bytes())
	cov := newCoverage(t, docfix.KindPreflight)
	cov.add(t, buf.Bytes())
	cov.check(t)
	buf.Reset()
	if err := report.PreflightJSON(&buf, collect.Preflight(nil, nil)); err != nil {
		t.Fatal(err)
	}
	docfix.CheckSchema(t, docfix.KindPreflight, buf.Bytes())
}

// TestSchemaRefuses: the schemas are strict. A report with a field the
// code does not write, without a field it always writes, or with a value
// outside the fixed set is refused, as are a comparison and a preflight
// document so broken, and each kind of document against another's schema.
func TestSchemaRefuses(t *testing.T) {
	good := docfix.ReportJSON(t, fixture.GoldenReport(t))
	goodCmp := cmpfix.CompareJSON(t, cmpfix.GoldenComparison(t))
	var pre bytes.Buffer
	web := fixture.MustTarget(t, "http://app.example.com/")
	if err := report.PreflightJSON(&pre, collect.Preflight([]*probe.Endpoint{{Target: web, Addr: netip.MustParseAddr("192.0.2.1")}},
		[]probe.Check{{Err: errors.New("connection refused"), Class: probe.ClassConnectRefused}})); err != nil {
		t.Fatal(err)
	}
	goodPre := pre.Bytes()
	for _, tt := range []struct {
		name, kind string
		doc        []byte
		edit       func(m map[string]any)
	}{
		{"an unknown top-level field", docfix.KindReport, good, func(m map[string]any) { m["verdicts"] = []any{} }},
		{"an unknown field of an endpoint", docfix.KindReport, good, func(m map[string]any) { jsonEndpoint(m, 0)["weight"] = 1 }},
		{"an unknown field of totals", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "totals")["p95"] = 1.5 }},
		{"an unknown field of a family", docfix.KindReport, good, func(m map[string]any) { jsonObj(jsonObj(m, "families"), "ipv6")["extra"] = true }},
		{"an unknown field of a sample", docfix.KindReport, good, func(m map[string]any) { jsonSamples(m, 1)[0].(map[string]any)["cookie"] = "x" }},
		{"an unknown field of a phase", docfix.KindReport, good, func(m map[string]any) { jsonObj(jsonObj(jsonEndpoint(m, 0), "phases_ms"), "tls")["p90"] = 1 }},
		{"an unknown field of the verdict", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "verdict")["confidence"] = 0.9 }},
		{"no schema", docfix.KindReport, good, func(m map[string]any) { delete(m, "schema") }},
		{"no totals", docfix.KindReport, good, func(m map[string]any) { delete(m, "totals") }},
		{"no hdr in totals", docfix.KindReport, good, func(m map[string]any) { delete(jsonObj(m, "totals"), "hdr") }},
		{"no address of an endpoint", docfix.KindReport, good, func(m map[string]any) { delete(jsonEndpoint(m, 1), "address") }},
		{"no changes of a dns entry", docfix.KindReport, good, func(m map[string]any) { delete(m["dns"].([]any)[0].(map[string]any), "changes") }},
		{"no thresholds", docfix.KindReport, good, func(m map[string]any) { delete(m, "thresholds") }},
		{"another schema", docfix.KindReport, good, func(m map[string]any) { m["schema"] = "pinprobe.report/v2" }},
		{"verdict status unknown", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "verdict")["status"] = "fine" }},
		{"family ipv5", docfix.KindReport, good, func(m map[string]any) { jsonEndpoint(m, 0)["family"] = "ipv5" }},
		{"family key ipv5", docfix.KindReport, good, func(m map[string]any) { fs := jsonObj(m, "families"); fs["ipv5"] = fs["ipv4"] }},
		{"error class unknown", docfix.KindReport, good, func(m map[string]any) { jsonObj(jsonEndpoint(m, 2), "errors")["refused"] = 1 }},
		{"status not a number", docfix.KindReport, good, func(m map[string]any) { jsonObj(jsonEndpoint(m, 0), "status")["2xx"] = 1 }},
		{"a timestamp not in UTC", docfix.KindReport, good, func(m map[string]any) { m["started_at"] = "2026-06-16T22:43:00.000+02:00" }},
		{"a timestamp without milliseconds", docfix.KindReport, good, func(m map[string]any) { m["ended_at"] = "2026-06-16T20:43:12Z" }},
		{"a negative count", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "totals")["failed"] = -1 }},
		{"a fractional count", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "totals")["requests"] = 1.5 }},
		{"a failure rate above 1", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "totals")["failure_rate"] = 1.5 }},
		{"a port out of range", docfix.KindReport, good, func(m map[string]any) { jsonEndpoint(m, 0)["port"] = 70000 }},
		{"http 3", docfix.KindReport, good, func(m map[string]any) { jsonObj(m, "plan")["http"] = "3" }},
		{"suspect kind unknown", docfix.KindReport, good, func(m map[string]any) {
			jsonObj(m, "verdict")["suspects"] = []any{map[string]any{"kind": "host", "address": "2001:db8::7", "family": "ipv6",
				"target": "https://sign.example.com/", "requests": 40, "failed": 30, "failure_rate": 0.75, "ci95": []any{0.6, 0.86}, "p": 1e-9}}
		}},
		{"a group suspect without its group", docfix.KindReport, good, func(m map[string]any) {
			jsonObj(m, "verdict")["suspects"] = []any{map[string]any{"kind": "group", "address": "", "family": "",
				"target": "", "requests": 40, "failed": 30, "failure_rate": 0.75, "ci95": []any{0.6, 0.86}, "p": 1e-9}}
		}},
		{"threshold status unknown", docfix.KindReport, good, func(m map[string]any) {
			m["thresholds"] = []any{map[string]any{"name": "max-p99", "scope": "total", "limit": 50, "unit": "ms", "value": 30, "status": "passed", "ok": true}}
		}},
		{"threshold unit unknown", docfix.KindReport, good, func(m map[string]any) {
			m["thresholds"] = []any{map[string]any{"name": "max-p99", "scope": "total", "limit": 50, "unit": "s", "value": 30, "status": "ok", "ok": true}}
		}},
		{"a threshold judged without a value", docfix.KindReport, good, func(m map[string]any) {
			m["thresholds"] = []any{map[string]any{"name": "max-p99", "scope": "total", "limit": 50, "unit": "ms", "value": nil, "status": "ok", "ok": true}}
		}},
		{"a breached threshold that passed", docfix.KindReport, good, func(m map[string]any) {
			m["thresholds"] = []any{map[string]any{"name": "max-p99", "scope": "total", "limit": 50, "unit": "ms", "value": 80, "status": "breached", "ok": true}}
		}},
		{"comparison: unknown field", docfix.KindCompare, goodCmp, func(m map[string]any) { m["verdict"] = "regressed" }},
		{"comparison: no conclusion", docfix.KindCompare, goodCmp, func(m map[string]any) { delete(m, "conclusion") }},
		{"comparison: status unknown", docfix.KindCompare, goodCmp, func(m map[string]any) { m["status"] = "worse" }},
		{"comparison: change unknown", docfix.KindCompare, goodCmp, func(m map[string]any) { jsonObj(m, "totals")["change"] = "changed" }},
		{"comparison: unknown field of a side", docfix.KindCompare, goodCmp, func(m map[string]any) { jsonObj(jsonObj(m, "totals"), "before")["p90_ms"] = 1 }},
		{"preflight: unknown field", docfix.KindPreflight, goodPre, func(m map[string]any) { m["ok"] = false }},
		{"preflight: failed without a class", docfix.KindPreflight, goodPre, func(m map[string]any) { delete(m["checks"].([]any)[0].(map[string]any), "class") }},
		{"preflight: class unknown", docfix.KindPreflight, goodPre, func(m map[string]any) { m["checks"].([]any)[0].(map[string]any)["class"] = "refused" }},
		{"a report as a comparison", docfix.KindCompare, good, func(map[string]any) {}},
		{"a comparison as a report", docfix.KindReport, goodCmp, func(map[string]any) {}},
		{"a preflight document as a report", docfix.KindReport, goodPre, func(map[string]any) {}},
	} {
		var m map[string]any
		if err := json.Unmarshal(tt.doc, &m); err != nil {
			t.Fatal(err)
		}
		tt.edit(m)
		doc, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := docfix.SchemaErr(t, tt.kind, doc); err == nil {
			t.Errorf("%s: valid against the %s schema; want it refused", tt.name, tt.kind)
		}
	}
}

func jsonObj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }
func jsonEndpoint(m map[string]any, i int) map[string]any {
	return m["endpoints"].([]any)[i].(map[string]any)
}
func jsonSamples(m map[string]any, i int) []any { return jsonEndpoint(m, i)["samples"].([]any) }

// coverage records, definition by definition, which properties of a
// schema the documents had.
type coverage struct {
	kind string
	defs map[string]any
	root map[string]any
	seen map[string]map[string]bool // definition -> property -> seen
}

func newCoverage(t *testing.T, kind string) *coverage {
	t.Helper()
	root := schemaDoc(t, kind)
	defs, _ := root["$defs"].(map[string]any)
	return &coverage{kind: kind, defs: defs, root: root, seen: map[string]map[string]bool{}}
}

// add walks a document along its schema.
func (c *coverage) add(t *testing.T, doc []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	c.walk("(root)", c.root, v)
}

func (c *coverage) walk(def string, node map[string]any, v any) {
	if name, d := refDef(c.defs, node); d != nil {
		c.walk(name, d, v)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := node[key].([]any)
		for _, a := range alts {
			c.walk("", a.(map[string]any), v)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := node["properties"].(map[string]any)
		for k, p := range props {
			x, ok := v[k]
			if !ok {
				continue
			}
			if def != "" {
				if c.seen[def] == nil {
					c.seen[def] = map[string]bool{}
				}
				c.seen[def][k] = true
			}
			c.walk("", p.(map[string]any), x)
		}
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			for _, x := range v {
				c.walk("", ap, x)
			}
		}
	case []any:
		if items, ok := node["items"].(map[string]any); ok {
			for _, x := range v {
				c.walk("", items, x)
			}
		}
	}
}

// check fails t for every property of the schema no document had.
func (c *coverage) check(t *testing.T) {
	t.Helper()
	all := map[string]map[string]any{"(root)": c.root}
	for name, d := range c.defs {
		all[name] = d.(map[string]any)
	}
	var missing []string
	for name, d := range all {
		props, _ := d["properties"].(map[string]any)
		for p := range props {
			if !c.seen[name][p] {
				missing = append(missing, name+"."+p)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s: no document validated here has %s", c.kind, strings.Join(missing, ", "))
	}
}

// emptyReport is the report of a run interrupted before its first
// request.
func emptyReport(t *testing.T) *report.Report {
	t.Helper()
	tg := fixture.MustTarget(t, "https://sign.example.com/")
	eps := []*probe.Endpoint{{ID: 0, Target: tg, Addr: netip.MustParseAddr("203.0.113.7")}}
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	agg := collect.NewAggregator(eps)
	agg.SetTimeline(start, time.Second, true)
	return fixture.CloseJudged(agg, &report.Report{
		Version: "0.1.0", Command: []string{"pinprobe", tg.String()},
		StartedAt: report.Time{Time: start}, EndedAt: report.Time{Time: start.Add(20 * time.Millisecond)}, Interrupted: true,
		Plan: report.Plan{Rate: 20, DurationS: 30, Concurrency: 10, Timeout: 10, HTTP: "auto", FailStatus: "5xx", ConnRequests: 4},
		DNS:  []report.DNS{{Host: "sign.example.com", Port: 443, Source: "system", Addresses: []string{"203.0.113.7"}, Changes: []report.DNSChange{}}},
	})
}

// gatePassedReport is a healthy run of two addresses that passed
// --fail-on-verdict, which says the smallest fault it would have seen.
func gatePassedReport(t *testing.T) *report.Report {
	r := fixture.CmpRun(t, fixture.CmpStart,
		fixture.CmpEndpoint{Address: "192.0.2.7", N: 400, Latency: time.Millisecond},
		fixture.CmpEndpoint{Address: "192.0.2.8", N: 400, Latency: time.Millisecond})
	r.Verdict = judge.Judge(r, judge.Once())
	r.Thresholds = report.CheckLimits(r, report.Limits{MaxFailureRate: -1, FailOnVerdict: true})
	if len(r.Thresholds) != 1 || r.Thresholds[0].SmallestFault == nil {
		t.Fatalf("thresholds %+v; want the verdict's, with its smallest fault", r.Thresholds)
	}
	return r
}

// outageReport is a run whose every address answers 502 to every request.
func outageReport(t *testing.T) *report.Report {
	r := fixture.CmpRun(t, fixture.CmpStart,
		fixture.CmpEndpoint{Address: "192.0.2.7", N: 40, Failed: 40, FailStatus: 502, Latency: time.Millisecond},
		fixture.CmpEndpoint{Address: "2001:db8::7", N: 40, Failed: 40, FailStatus: 502, Latency: time.Millisecond})
	r.Verdict = judge.Judge(r, judge.Once())
	if !r.Verdict.Outage {
		t.Fatalf("every request of every address failed: verdict %+v, want an outage", r.Verdict)
	}
	return r
}

// notProbedReport is the report of a run whose every endpoint failed its
// preflight, one over TLS after its connect, the other at its connect.
func notProbedReport(t *testing.T) *report.Report {
	t.Helper()
	tg := fixture.MustTarget(t, "https://sign.example.com/")
	eps := []*probe.Endpoint{{ID: 0, Target: tg, Addr: netip.MustParseAddr("203.0.113.7")}, {ID: 1, Target: tg, Addr: netip.MustParseAddr("2001:db8::7")}}
	checks := []probe.Check{
		{Endpoint: 0, Connect: 400 * time.Microsecond, Handshake: 2 * time.Millisecond, ALPN: "h2", Local: netip.MustParseAddrPort("192.0.2.100:50001"),
			Err: errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), Class: probe.ClassTLS},
		{Endpoint: 1, Connect: 10 * time.Second, Err: errors.New("dial tcp [2001:db8::7]:443: i/o timeout"), Class: probe.ClassConnectTimeout},
	}
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	agg := collect.NewAggregator(eps)
	agg.SetTimeline(start, time.Second, true)
	return fixture.CloseJudged(agg, &report.Report{
		Version: "0.1.0", Command: []string{"pinprobe", tg.String()},
		StartedAt: report.Time{Time: start}, EndedAt: report.Time{Time: start.Add(10 * time.Second)},
		Plan:      report.Plan{Rate: 20, DurationS: 30, Concurrency: 10, Timeout: 10, HTTP: "auto", FailStatus: "5xx", ConnRequests: 4},
		DNS:       []report.DNS{{Host: "sign.example.com", Port: 443, Source: "system", Addresses: []string{"203.0.113.7", "2001:db8::7"}, Changes: []report.DNSChange{}}},
		Preflight: collect.Preflight(eps, checks),
		NotProbed: "every endpoint fails its preflight, for different reasons (the first: tls: failed to verify certificate): nothing can be probed",
	})
}

// Endpoints of richReport.
const (
	rxHealthy   = iota // 192.0.2.1: a new connection (and client port) per request, some unsent (client errors) and dropped
	rxFailing          // 192.0.2.2: half its requests 502 (an endpoint suspect), an EOF after some
	rxSlow             // 2001:db8::1: healthy, ten times slower (a slow finding)
	rxInstances        // 198.51.100.1: four instances by X-Served-By, gw-3 failing (a group suspect)
	rxConns            // 198.51.100.2: every request of one connection in five fails (a connections suspect)
	rxAdded            // 2001:db8::5: appeared in DNS during the run
	rxReturned         // 2001:db8::6: left DNS and came back
	rxRemoved          // 2001:db8::7: left DNS before its first request
)

// richReport is a run with every optional part of a report: instances
// named by a response header, per-connection records past the first 256,
// failures that stick to connections, failures right after a failed
// response, client errors, drops, more than 1,000 client ports, more than
// 64 kinds of failure, addresses appearing, leaving and coming back, a
// slow address, suspects of every kind, the release gate and a settled
// verdict.
func richReport(t *testing.T) *report.Report {
	t.Helper()
	a := fixture.MustTarget(t, "https://a.example.com/")
	b := fixture.MustTarget(t, "http://b.example.com:8080/")
	c := fixture.MustTarget(t, "http://c.example.com/")
	e := fixture.MustTarget(t, "https://e.example.com/")
	eps := []*probe.Endpoint{
		{ID: rxHealthy, Target: a, Addr: netip.MustParseAddr("192.0.2.1")},
		{ID: rxFailing, Target: a, Addr: netip.MustParseAddr("192.0.2.2")},
		{ID: rxSlow, Target: a, Addr: netip.MustParseAddr("2001:db8::1")},
		{ID: rxInstances, Target: b, Addr: netip.MustParseAddr("198.51.100.1")},
		{ID: rxConns, Target: c, Addr: netip.MustParseAddr("198.51.100.2")},
		{ID: rxAdded, Target: e, Addr: netip.MustParseAddr("2001:db8::5")},
		{ID: rxReturned, Target: e, Addr: netip.MustParseAddr("2001:db8::6")},
		{ID: rxRemoved, Target: e, Addr: netip.MustParseAddr("2001:db8::7")},
	}
	fail, err := report.ParseFailStatus("5xx")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	const span = 20 * time.Second
	agg := collect.NewAggregator(eps)
	agg.SetTimeline(start, time.Second, true)
	agg.SetGroupBy([]string{"X-Served-By", "X-Backend"})
	client4, client6 := netip.MustParseAddr("192.0.2.100"), netip.MustParseAddr("2001:db8::100")

	var results []probe.Result
	// result makes request i of n on ep, spread over the run, on
	// connection conn (0: none) at position pos on it.
	result := func(ep, i, n int, conn uint64, pos int, latency time.Duration) probe.Result {
		e := eps[ep]
		r := probe.Result{Endpoint: ep, Start: start.Add(span * time.Duration(i) / time.Duration(n)), Latency: latency,
			Status: 200, Bytes: 120, TTFB: latency * 9 / 10, ConnID: conn, ConnReq: pos, Reused: pos > 1,
			RequestID: fmt.Sprintf("pinprobe-0123abcd-%d-%d", ep, i+1)}
		if conn != 0 {
			cl := client4
			if e.Addr.Is6() {
				cl = client6
			}
			r.Local = netip.AddrPortFrom(cl, uint16(40000+1000*ep)+uint16(conn))
			r.Remote = netip.AddrPortFrom(e.Addr, e.Target.Port())
			if pos == 1 {
				r.Connect = 400 * time.Microsecond
				if e.Target.TLS() {
					r.TLS = 2 * time.Millisecond
				}
			}
		}
		return r
	}
	fail502 := func(r *probe.Result, server string) {
		r.Status, r.Bytes, r.Server, r.BodyHash = 502, 176, server, uint64(len(server))<<32|0x502
		r.Exemplar = []byte("<html><center>502 Bad Gateway</center><hr><center>" + server + "</center></html>")
	}
	// The addresses of a.example.com name themselves in X-Backend: the
	// header agrees with the address.
	backend := func(r probe.Result) probe.Result {
		r.Groups = []string{"", eps[r.Endpoint].Addr.String()}
		return r
	}
	for i := range 1100 { // a connection per request: more than 1,000 ports, more than 256 connections
		results = append(results, backend(result(rxHealthy, i, 1100, uint64(i+1), 1, 2*time.Millisecond+time.Duration(i%7)*100*time.Microsecond)))
	}
	for i := range 5 {
		r := result(rxHealthy, i, 5, 0, 0, 50*time.Microsecond)
		r.Status, r.Err, r.Class = 0, errors.New("dial tcp 192.0.2.1:443: socket: too many open files"), probe.ClassClient
		results = append(results, r)
	}
	results = append(results, probe.Result{Endpoint: rxHealthy, Start: start.Add(time.Second), Dropped: 3})
	for i := range 400 { // four requests a connection; every other one fails, some with an EOF right after a 502
		r := result(rxFailing, i, 400, uint64(i/4+1), i%4+1, 2*time.Millisecond+time.Duration(i%5)*100*time.Microsecond)
		switch {
		case i%4 == 3 && i%8 == 7:
			r.Status, r.Err, r.Class, r.TTFB, r.Bytes = 0, errors.New("unexpected EOF"), probe.ClassEOF, 0, 0
		case i%2 == 0:
			server := "Microsoft-Azure-Application-Gateway/v2"
			if i%4 == 0 && i/4 < 70 {
				server = fmt.Sprintf("edge-%d", i/4) // past 64 kinds of failure
			}
			fail502(&r, server)
		}
		results = append(results, backend(r))
	}
	for i := range 400 {
		results = append(results, backend(result(rxSlow, i, 400, uint64(i/4+1), i%4+1, 30*time.Millisecond+time.Duration(i%9)*time.Millisecond)))
	}
	for i := range 400 { // instance gw-(i%4+1) answers; gw-3 fails, gw-2 is slow
		latency := 3 * time.Millisecond
		if i%4 == 1 {
			latency = 40 * time.Millisecond
		}
		r := result(rxInstances, i, 400, uint64(i/4+1), i%4+1, latency)
		r.Groups = []string{fmt.Sprintf("gw-%d", i%4+1)}
		if i%4 == 2 {
			fail502(&r, "gw-proxy")
		}
		results = append(results, r)
	}
	for i := range 400 { // four connections at a time, in turn; connection k fails all its requests when k%5 == 0
		conn := uint64(i/16*4 + i%4 + 1)
		r := result(rxConns, i, 400, conn, i%16/4+1, 3*time.Millisecond)
		if conn%5 == 0 {
			r.Status, r.Server = 503, "envoy"
		}
		results = append(results, r)
	}
	added, left, back := start.Add(5*time.Second), start.Add(8*time.Second), start.Add(12*time.Second)
	for i := range 40 {
		r := result(rxAdded, i, 40, uint64(i+1), 1, 4*time.Millisecond)
		r.Start = added.Add(time.Duration(i) * 300 * time.Millisecond)
		results = append(results, r)
		r = result(rxReturned, i, 40, uint64(i+1), 1, 4*time.Millisecond)
		if r.Start.After(left) && r.Start.Before(back) {
			continue
		}
		results = append(results, r)
	}
	// The process stopped for 2 s: each endpoint's scheduler reports its
	// own requests of the one pause.
	stopped := start.Add(15 * time.Second)
	results = append(results, probe.Result{Endpoint: rxHealthy, Start: stopped, Missed: 110, Paused: 2 * time.Second},
		probe.Result{Endpoint: rxConns, Start: stopped.Add(25 * time.Millisecond), Missed: 40, Paused: 1975 * time.Millisecond})
	sort.SliceStable(results, func(i, j int) bool { return results[i].Start.Before(results[j].Start) })

	// Evidence for the first three failures and the first success of each
	// endpoint, as the engine keeps it.
	failKept, okKept := make([]int, len(eps)), make([]bool, len(eps))
	for i := range results {
		r := &results[i]
		if !r.Request() || r.Class == probe.ClassClient {
			continue
		}
		*r = fixture.Decide(fail, *r)
		failed := r.Failed
		if (failed && failKept[r.Endpoint] < 3) || (!failed && !okKept[r.Endpoint]) {
			if failed {
				failKept[r.Endpoint]++
			} else {
				okKept[r.Endpoint] = true
			}
			ev := &probe.ResponseEvidence{}
			if r.Err == nil {
				h := http.Header{"Content-Type": {"text/html"}, "Set-Cookie": {"affinity=5f1c0ffee; Path=/"}}
				if r.Server != "" {
					h.Set("Server", r.Server)
				}
				if r.Groups != nil {
					h.Set("X-Served-By", r.Groups[0])
				}
				body := r.Exemplar
				if body == nil {
					body = []byte("ok\xff")
				}
				// A gateway with too many headers: the engine kept some and says so.
				ev = &probe.ResponseEvidence{Proto: "HTTP/1.1", Header: h, Body: body, Truncated: r.Endpoint == rxSlow}
			}
			r.Evidence = ev
		}
	}
	// The DNS changes, each when the first request after it is counted, as
	// the session applies them between results.
	var wasAdded, wasRemoved, cameBack bool
	for _, r := range results {
		if !wasAdded && !r.Start.Before(added) {
			agg.MarkAdded(rxAdded, added)
			wasAdded = true
		}
		if !wasRemoved && r.Start.After(left) {
			agg.MarkRemoved(rxReturned, left)
			agg.MarkRemoved(rxRemoved, left)
			wasRemoved = true
		}
		if !cameBack && !r.Start.Before(back) {
			agg.MarkAdded(rxReturned, back)
			cameBack = true
		}
		agg.Add(fixture.Decide(fail, r))
	}
	rep := fixture.CloseJudged(agg, &report.Report{
		Version: "0.1.0",
		RunID:   "5eed0001",
		Command: []string{"pinprobe", "--until-verdict", "-r", "120", "-d", "20s", "--group-by", "X-Served-By", "-H", "Authorization: " + collect.Redacted,
			a.String(), b.String(), c.String(), e.String(), "https://gone.example.com/"},
		StartedAt: report.Time{Time: start}, EndedAt: report.Time{Time: start.Add(span + 300*time.Millisecond)}, SendS: span.Seconds(),
		Plan: report.Plan{Rate: 120, DurationS: 20, Concurrency: 20, Timeout: 10, HTTP: "1.1", FailStatus: "5xx", ConnRequests: 4, BusyWorkers: 64,
			GroupBy: []string{"X-Served-By"}},
		DNS: []report.DNS{
			{Host: "a.example.com", Port: 443, Source: "resolve", Addresses: []string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}, Changes: []report.DNSChange{}},
			{Host: "b.example.com", Port: 8080, Source: "dns 127.0.0.1:53", Addresses: []string{"198.51.100.1"}, Changes: []report.DNSChange{}},
			{Host: "c.example.com", Port: 80, Source: "system", Addresses: []string{"198.51.100.2"}, Changes: []report.DNSChange{}},
			{Host: "e.example.com", Port: 443, Source: "system", Addresses: []string{"2001:db8::6", "2001:db8::7"}, Changes: []report.DNSChange{
				{At: report.Time{Time: added}, Added: []string{"2001:db8::5"}, Removed: []string{}},
				{At: report.Time{Time: left}, Added: []string{}, Removed: []string{"2001:db8::6", "2001:db8::7"}},
				{At: report.Time{Time: back}, Added: []string{"2001:db8::6"}, Removed: []string{}},
			}, Looks: 19, Missed: &report.DNSMissed{Looks: 2, First: report.Time{Time: left.Add(time.Second)}, Last: report.Time{Time: left.Add(2 * time.Second)}, Error: "timed out"}},
			{Host: "gone.example.com", Port: 443, Source: "system", Addresses: []string{}, Error: "resolve gone.example.com (system): no such host",
				Changes: []report.DNSChange{}},
		},
		Settled: &report.Settled{At: report.Time{Time: start.Add(span)}, Requests: 2500, Look: 19, MaxLooks: 20, Alpha: judge.LookAlpha(judge.Alpha, 20, false),
			Suspects: 3, Bounded: 6, Tolerance: judge.Tolerance, MinConnections: 40, Reach: 1},
	})
	// It stopped at a look of --until-verdict: judged at that look's level.
	rep.Verdict = judge.Judge(rep, judge.AtLook(20, false))
	rep.Thresholds = report.CheckLimits(rep, report.Limits{MaxFailureRate: 0.2, MaxP99: 25 * time.Millisecond, FailOnVerdict: true})
	if err := report.Validate(rep); err != nil {
		t.Fatalf("the rich report breaks its invariants: %v", err)
	}
	return rep
}

// mergedRichReport merges rich with a second process of the same run that
// ran at another rate and wrote no port set (as pinprobe did before it
// had one), and the result with a third, so the merge has notes, inputs of
// inputs and a lower bound of ports.
func mergedRichReport(t *testing.T, rich *report.Report) *report.Report {
	t.Helper()
	second := docfix.RoundTrip(t, rich, "rich.json")
	second.RunID = "5eed0002" // another pod's run
	second.Plan.Rate = 60
	second.Client.PortSet = ""
	m, err := fixture.MergeJudged([]*report.Report{docfix.RoundTrip(t, rich, "rich.json"), second}, []string{"pod-0.json", "pod-1.json"})
	if err != nil {
		t.Fatal(err)
	}
	third := docfix.RoundTrip(t, rich, "rich.json")
	third.RunID = "5eed0003"
	m, err = fixture.MergeJudged([]*report.Report{m, third}, []string{"pods.json", "pod-2.json"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
