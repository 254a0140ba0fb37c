package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestMinElement keeps minElement in step with the types: each kind's
// least size is what its fields weigh (minJSON), and each type's
// UnmarshalJSON refuses an element too short to be one, by that name.
func TestMinElement(t *testing.T) {
	var moment struct {
		repeatFields
		Strata int64 `json:"strata"`
	}
	kinds := map[string]struct {
		fields reflect.Type // what minElement measures
		into   any          // a value whose UnmarshalJSON is the kind's
	}{
		"endpoint": {reflect.TypeFor[Endpoint](), &Endpoint{}}, "sample": {reflect.TypeFor[Sample](), &Sample{}},
		"group": {reflect.TypeFor[Group](), &Group{}}, "fingerprint": {reflect.TypeFor[Fingerprint](), &Fingerprint{}},
		"dns entry": {reflect.TypeFor[DNS](), &DNS{}}, "dns change": {reflect.TypeFor[DNSChange](), &DNSChange{}},
		"dns event": {reflect.TypeFor[DNSEvent](), &DNSEvent{}}, "timeline series": {reflect.TypeFor[Series](), &Series{}},
		"family latency series": {reflect.TypeFor[FamilySeries](), &FamilySeries{}}, "group series": {reflect.TypeFor[GroupSeries](), &GroupSeries{}},
		"connection record": {reflect.TypeFor[ConnRecord](), &ConnRecord{}}, "failure window": {reflect.TypeFor[Window](), &Window{}},
		"group time stratum": {reflect.TypeFor[TimeCounts](), &TimeCounts{}}, "repeat stratum": {reflect.TypeFor[RepeatCounts](), &RepeatCounts{}},
		"moment stratum": {reflect.TypeOf(moment), &MomentCounts{}}, "moment size": {reflect.TypeFor[MomentSize](), &MomentSize{}},
		"input": {reflect.TypeFor[Input](), &Input{}}, "threshold": {reflect.TypeFor[Threshold](), &Threshold{}},
		"preflight check": {reflect.TypeFor[PreflightCheck](), &PreflightCheck{}}, "suspect": {reflect.TypeFor[Suspect](), &Suspect{}},
		"test": {reflect.TypeFor[Test](), &Test{}}, "slow finding": {reflect.TypeFor[SlowFinding](), &SlowFinding{}},
	}
	if len(kinds) != len(minElement) {
		t.Errorf("minElement has %d kinds; the test knows %d", len(minElement), len(kinds))
	}
	for what, k := range kinds {
		if got, want := minElement[what], minJSON(k.fields); got != want {
			t.Errorf("minElement[%q] = %d; its fields weigh %d", what, got, want)
		}
		err := json.Unmarshal([]byte(`{"x":1}`), k.into)
		if err == nil || !strings.Contains(err.Error(), what+" ") || !strings.Contains(err.Error(), "too short") {
			t.Errorf("%s: a 7-byte element: %v; want it refused as too short, by that name", what, err)
		}
	}
}

// minJSON is the least a compact JSON object of type t weighs when it
// holds the fields pinprobe always writes (those without omitempty), each
// with a one-character value.
func minJSON(t reflect.Type) int {
	return 2 + fieldsJSON(t) - 1 // the braces, less one comma
}

// fieldsJSON is minJSON of t's fields, each with its comma.
func fieldsJSON(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-", strings.Contains(opts, "omitempty"):
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			n += fieldsJSON(f.Type)
		case f.IsExported() || f.Anonymous:
			n += len(name) + 3 + 1 + 1 // "name":v,
		}
	}
	return n
}
