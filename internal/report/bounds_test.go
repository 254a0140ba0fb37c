package report

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBoundsCoverEveryNumber proves the typed checks of bounds.go complete:
// in a report with every field set (each slice and map one element long,
// each pointer set), every number and timestamp, set out of bounds on its
// own (negative, past its unit's bound, outside 1970 to 2200), is refused
// by checkNumbers, which names its place; at its bound it is not. A field added to the document without its check
// fails here.
func TestBoundsCoverEveryNumber(t *testing.T) {
	var r Report
	fill(reflect.ValueOf(&r).Elem())
	if err := checkNumbers(&r); err != nil {
		t.Fatalf("a report of valid numbers is refused: %v", err)
	}
	leaves := numberLeaves(reflect.ValueOf(&r).Elem(), "")
	if len(leaves) < 169 {
		t.Fatalf("%d numbers and timestamps found; the document has at least 169", len(leaves))
	}
	for _, l := range leaves {
		l.set(l.max)
		if err := checkNumbers(&r); err != nil {
			t.Errorf("%s = %v, its bound: refused: %v", l.path, l.max, err)
		}
		l.set(l.good)
		for _, bad := range l.bad {
			l.set(bad)
			err := checkNumbers(&r)
			l.set(l.good)
			if err == nil || !strings.HasPrefix(err.Error(), l.path+": ") {
				t.Errorf("%s = %v: checkNumbers says %v; want it refused at %s", l.path, bad, err, l.path)
			}
		}
	}
	if err := checkNumbers(&r); err != nil {
		t.Fatalf("the report was not restored: %v", err)
	}
}

// fill sets every field of v to a valid value: numbers 1, times in 2026,
// strings "k", one element in each slice and map, every pointer set.
func fill(v reflect.Value) { fillWith(v, "k") }

// fillWith is fill with every string and map key str.
func fillWith(v reflect.Value, str string) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}))
		return
	case v.CanInt():
		v.SetInt(1)
		return
	case v.CanUint():
		v.SetUint(1)
		return
	case v.CanFloat():
		v.SetFloat(1)
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(str)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillWith(v.Elem(), str)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillWith(v.Index(0), str)
	case reflect.Array:
		for i := range v.Len() {
			fillWith(v.Index(i), str)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		fillWith(e, str)
		v.SetMapIndex(reflect.ValueOf(str).Convert(v.Type().Key()), e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillWith(v.Field(i), str)
			}
		}
	}
}

// leaf is one number or timestamp of a filled report: where it is, and how
// to set it.
type leaf struct {
	path      string
	good, max any
	bad       []any
	set       func(any)
}

// limitOf is the bound of the float at path, by its unit: a duration in
// seconds (a name ending _s), in milliseconds (under a name ending _ms),
// or a count.
func limitOf(path string) float64 {
	switch {
	case strings.HasSuffix(path[strings.LastIndex(path, ".")+1:], "_s"):
		return MaxSeconds
	case strings.Contains(path+".", "_ms."):
		return MaxSeconds * 1000
	}
	return MaxCount
}

// numberLeaves lists every signed number, float and timestamp under v,
// path being v's place as checkNumbers names it.
func numberLeaves(v reflect.Value, path string) []leaf {
	join := func(name string) string {
		if path == "" || strings.HasPrefix(name, "[") {
			return path + name
		}
		return path + "." + name
	}
	switch {
	case v.Type() == timeType:
		good := v.Interface()
		return []leaf{{path: path, good: good, max: Time{maxReportTime.Add(-time.Millisecond)}, bad: []any{Time{minReportTime.Add(-time.Millisecond)}, Time{maxReportTime}},
			set: func(x any) { v.Set(reflect.ValueOf(x)) }}}
	case v.CanInt():
		limit := int64(MaxCount) // an integer is a count, or bytes
		if strings.HasSuffix(path, ".bytes") {
			limit = MaxBytes
		}
		return []leaf{{path: path, good: int64(1), max: limit, bad: []any{int64(-1), limit + 1},
			set: func(x any) { v.SetInt(x.(int64)) }}}
	case v.CanFloat():
		limit := limitOf(path)
		return []leaf{{path: path, good: 1.0, max: limit, bad: []any{-0.5, limit * 1.000001},
			set: func(x any) { v.SetFloat(x.(float64)) }}}
	}
	var out []leaf
	switch v.Kind() {
	case reflect.Pointer:
		out = numberLeaves(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			out = append(out, numberLeaves(v.Index(i), join("["+strconv.Itoa(i)+"]"))...)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k, e := it.Key(), it.Value()
			if e.Kind() == reflect.Pointer {
				out = append(out, numberLeaves(e, join(strconv.Quote(k.String())))...)
				continue
			}
			// A map's values are copies: set through the map.
			for _, l := range numberLeaves(reflect.New(e.Type()).Elem(), join(strconv.Quote(k.String()))) {
				out = append(out, mapLeaf(v, k, l))
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := join(name)
			if f.Anonymous {
				p = path
			}
			out = append(out, numberLeaves(v.Field(i), p)...)
		}
	}
	return out
}

// mapLeaf is l, a leaf of a copy of m[k], set in m: the copy is filled,
// set, and stored back.
func mapLeaf(m, k reflect.Value, l leaf) leaf {
	return leaf{path: l.path, good: l.good, max: l.max, bad: l.bad, set: func(x any) {
		e := reflect.New(m.Type().Elem()).Elem()
		e.Set(m.MapIndex(k))
		// Find the same leaf in the copy, by its path, and set it.
		for _, c := range numberLeaves(e, l.path[:strings.LastIndex(l.path, "\"")+1]) {
			if c.path == l.path {
				c.set(x)
			}
		}
		m.SetMapIndex(k, e)
	}}
}

// BenchmarkCheckNumbers checks the numbers of the demo's saved report.
func BenchmarkCheckNumbers(b *testing.B) {
	r := demoReport(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := checkNumbers(r); err != nil {
			b.Fatal(err)
		}
	}
}

var timeType = reflect.TypeFor[Time]()

// demoReport is the demo's saved report, decoded without Read's checks.
func demoReport(b *testing.B) *Report {
	data, err := os.ReadFile("../../examples/demo-report.json")
	if err != nil {
		b.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		b.Fatal(err)
	}
	return &r
}
