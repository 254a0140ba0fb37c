package report

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Bounds on the numbers of a saved report. pinprobe writes none past them;
// a forged report could, and then every count, duration and timestamp a
// merge, a test or a chart computes from them could overflow.
const (
	// MaxCount is the largest count (and the largest of any other number
	// but durations) a saved report may hold: 2⁴⁰, about 1.1 trillion
	// requests, a year at 35,000 requests/s. Sums of a report's counts then
	// stay far from overflowing.
	MaxCount = 1 << 40
	// MaxSeconds bounds every duration in a report (the *_s fields, and
	// the *_ms ones in milliseconds): 100 years.
	MaxSeconds = 100 * 365.25 * 24 * 3600
)

// The timestamps a saved report may hold, besides the zero time of a field
// left unset: from 1970 (a machine whose clock was never set) to 2200, so
// the time between any two of them fits a time.Duration.
var (
	minReportTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxReportTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

var timeType = reflect.TypeFor[Time]()

// checkNumbers walks every number and timestamp of r and refuses, naming
// its place in the document: a negative number, a count past MaxCount, a
// duration past MaxSeconds, a timestamp outside 1970 to 2200. Every number
// of the schema is a count, a duration, a rate, a p-value or a level, none
// of them negative.
func checkNumbers(r *Report) error {
	w := &numberWalk{}
	w.value(reflect.ValueOf(r).Elem(), unitCount)
	return w.err
}

// unit is what a float field measures, which bounds it.
type unit int

const (
	unitCount unit = iota
	unitSeconds
	unitMillis
)

// numberWalk holds the path to the value being checked, for the error.
type numberWalk struct {
	path []string
	err  error
}

func (w *numberWalk) where() string {
	var b strings.Builder
	for _, p := range w.path {
		if !strings.HasPrefix(p, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func (w *numberWalk) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("%s: %s", w.where(), fmt.Sprintf(format, args...))
	}
}

func (w *numberWalk) value(v reflect.Value, u unit) {
	if w.err != nil {
		return
	}
	if v.Type() == timeType {
		t := v.Interface().(Time)
		if !t.IsZero() && (t.Before(minReportTime) || !t.Before(maxReportTime)) {
			w.fail("time %s is outside 1970 to 2200", t.UTC().Format(time.RFC3339))
		}
		return
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch n := v.Int(); {
		case n < 0:
			w.fail("%d is negative", n)
		case n > MaxCount:
			w.fail("%d is more than any pinprobe run counts (at most 2^40)", n)
		}
	case reflect.Float32, reflect.Float64:
		limit := float64(MaxCount)
		switch u {
		case unitSeconds:
			limit = MaxSeconds
		case unitMillis:
			limit = MaxSeconds * 1000
		}
		switch f := v.Float(); {
		case f < 0:
			w.fail("%v is negative", f)
		case f > limit:
			w.fail("%v is larger than any pinprobe run measures", f)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			w.value(v.Elem(), u)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.path = append(w.path, "["+strconv.Itoa(i)+"]")
			w.value(v.Index(i), u)
			w.path = w.path[:len(w.path)-1]
			if w.err != nil {
				return
			}
		}
	case reflect.Map:
		if !isNumeric(v.Type().Elem()) && v.Type().Elem().Kind() != reflect.Pointer && v.Type().Elem().Kind() != reflect.Struct {
			return
		}
		it := v.MapRange()
		for it.Next() {
			w.path = append(w.path, strconv.Quote(it.Key().String()))
			w.value(it.Value(), u)
			w.path = w.path[:len(w.path)-1]
			if w.err != nil {
				return
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fu := u
			switch {
			case strings.HasSuffix(name, "_s"):
				fu = unitSeconds
			case strings.HasSuffix(name, "_ms"):
				fu = unitMillis
			}
			if !f.Anonymous {
				w.path = append(w.path, name)
			}
			w.value(v.Field(i), fu)
			if !f.Anonymous {
				w.path = w.path[:len(w.path)-1]
			}
			if w.err != nil {
				return
			}
		}
	}
}

func isNumeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
