package report

import (
	"reflect"
	"strings"
	"testing"
)

// TestCleanEveryString proves the clean methods of clean.go complete: in a
// report with every field set and every string and map key "k\x01\n",
// cleanStrings leaves no control character but the newlines of bodies,
// and says where one is left.
func TestCleanEveryString(t *testing.T) {
	var r Report
	fillWith(reflect.ValueOf(&r).Elem(), "k\x01\n")
	cleanStrings(&r)
	n := 0
	walkStrings(reflect.ValueOf(&r).Elem(), "", false, func(path, s string, body bool) {
		n++
		want := `k\x01\x0a`
		if body {
			want = "k\\x01\n"
		}
		if s != want {
			t.Errorf("%s = %q after cleaning; want %q", path, s, want)
		}
	})
	if n < 120 {
		t.Errorf("%d strings and keys found; the document has more", n)
	}
}

// walkStrings calls f with every string and map key under v, and whether
// it is a body (which keeps its newlines).
func walkStrings(v reflect.Value, path string, body bool, f func(path, s string, body bool)) {
	switch v.Kind() {
	case reflect.String:
		f(path, v.String(), body)
	case reflect.Pointer:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, body, f)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkStrings(v.Index(i), path+"[]", body, f)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			f(path+" key", it.Key().String(), false)
			walkStrings(it.Value(), path+"[key]", false, f)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		for i := range v.NumField() {
			fd := v.Type().Field(i)
			if !fd.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(fd.Tag.Get("json"), ",")
			walkStrings(v.Field(i), path+"."+name, name == "body", f)
		}
	}
}

// BenchmarkCleanStrings cleans the strings of the demo's saved report.
func BenchmarkCleanStrings(b *testing.B) {
	r := demoReport(b)
	b.ReportAllocs()
	for b.Loop() {
		cleanStrings(r)
	}
}
