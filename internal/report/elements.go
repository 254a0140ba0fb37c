package report

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A saved report's arrays are decoded element by element through the
// UnmarshalJSON methods below, each refusing an element too short to hold
// the fields every such element has. Without them, "endpoints": [{}, {},
// …] made the decoder hold a 456-byte Endpoint for every 3 bytes read;
// with them, what a report's elements take in memory is bounded by a small
// multiple of what was read (see README, Limitations).

// minElement is the least a compact JSON element of each kind weighs when
// it holds the fields pinprobe always writes (those without omitempty),
// each with a one-character value. TestMinElement keeps it in step with
// the types.
var minElement = map[string]int{
	"endpoint": 218, "sample": 99, "group": 191, "fingerprint": 46, "dns entry": 56, "dns change": 30,
	"dns event": 18, "timeline series": 48, "family latency series": 24, "group series": 58,
	"connection record": 76, "failure window": 59, "group time stratum": 70, "repeat stratum": 77,
	"moment stratum": 88, "moment size": 36, "input": 125, "threshold": 67, "preflight check": 77,
	"suspect": 108, "test": 126, "slow finding": 227,
}

// decodeElement decodes b, one JSON element of a report's arrays, into v
// (a type of the element's fields, without this method), refusing null and
// an element shorter than half of its minElement: what could not have
// been written whole. Unknown fields are refused, as in the whole report.
func decodeElement(b []byte, v any, what string) error {
	b = bytes.TrimSpace(b)
	if min := minElement[what] / 2; len(b) < min || string(b) == "null" {
		return fmt.Errorf("%s %s: too short to hold one (pinprobe writes at least %d bytes of it)", what, truncateJSON(b), min*2)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// truncateJSON shows the start of an element in an error.
func truncateJSON(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%.40q…", b)
	}
	return fmt.Sprintf("%q", b)
}

// UnmarshalJSON decodes one saved endpoint (see decodeElement).
func (e *Endpoint) UnmarshalJSON(b []byte) error {
	type fields Endpoint
	return decodeElement(b, (*fields)(e), "endpoint")
}

// UnmarshalJSON decodes one saved sample (see decodeElement).
func (s *Sample) UnmarshalJSON(b []byte) error {
	type fields Sample
	return decodeElement(b, (*fields)(s), "sample")
}

// UnmarshalJSON decodes one saved group (see decodeElement).
func (g *Group) UnmarshalJSON(b []byte) error {
	type fields Group
	return decodeElement(b, (*fields)(g), "group")
}

// UnmarshalJSON decodes one saved fingerprint (see decodeElement).
func (f *Fingerprint) UnmarshalJSON(b []byte) error {
	type fields Fingerprint
	return decodeElement(b, (*fields)(f), "fingerprint")
}

// UnmarshalJSON decodes one saved DNS entry (see decodeElement).
func (d *DNS) UnmarshalJSON(b []byte) error {
	type fields DNS
	return decodeElement(b, (*fields)(d), "dns entry")
}

// UnmarshalJSON decodes one saved DNS change (see decodeElement).
func (c *DNSChange) UnmarshalJSON(b []byte) error {
	type fields DNSChange
	return decodeElement(b, (*fields)(c), "dns change")
}

// UnmarshalJSON decodes one saved DNS event (see decodeElement).
func (e *DNSEvent) UnmarshalJSON(b []byte) error {
	type fields DNSEvent
	return decodeElement(b, (*fields)(e), "dns event")
}

// UnmarshalJSON decodes one saved timeline series (see decodeElement).
func (s *Series) UnmarshalJSON(b []byte) error {
	type fields Series
	return decodeElement(b, (*fields)(s), "timeline series")
}

// UnmarshalJSON decodes one saved family's latency series (see
// decodeElement).
func (f *FamilySeries) UnmarshalJSON(b []byte) error {
	type fields FamilySeries
	return decodeElement(b, (*fields)(f), "family latency series")
}

// UnmarshalJSON decodes one saved group series (see decodeElement).
func (g *GroupSeries) UnmarshalJSON(b []byte) error {
	type fields GroupSeries
	return decodeElement(b, (*fields)(g), "group series")
}

// UnmarshalJSON decodes one saved connection record (see decodeElement).
func (c *ConnRecord) UnmarshalJSON(b []byte) error {
	type fields ConnRecord
	return decodeElement(b, (*fields)(c), "connection record")
}

// UnmarshalJSON decodes one saved failure window (see decodeElement).
func (w *Window) UnmarshalJSON(b []byte) error {
	type fields Window
	return decodeElement(b, (*fields)(w), "failure window")
}

// UnmarshalJSON decodes one saved time stratum of a group (see
// decodeElement).
func (c *TimeCounts) UnmarshalJSON(b []byte) error {
	type fields TimeCounts
	return decodeElement(b, (*fields)(c), "group time stratum")
}

// UnmarshalJSON decodes one saved repeat stratum (see decodeElement).
func (c *RepeatCounts) UnmarshalJSON(b []byte) error {
	type fields RepeatCounts
	return decodeElement(b, (*fields)(c), "repeat stratum")
}

// repeatFields are RepeatCounts' fields without its UnmarshalJSON, to
// embed in MomentCounts' (an embedded one would decode the whole object).
type repeatFields RepeatCounts

// UnmarshalJSON decodes one saved moment stratum (see decodeElement).
func (m *MomentCounts) UnmarshalJSON(b []byte) error {
	var f struct {
		repeatFields
		Strata int64 `json:"strata"`
	}
	if err := decodeElement(b, &f, "moment stratum"); err != nil {
		return err
	}
	m.RepeatCounts, m.Strata = RepeatCounts(f.repeatFields), f.Strata
	return nil
}

// UnmarshalJSON decodes one saved moment size (see decodeElement).
func (m *MomentSize) UnmarshalJSON(b []byte) error {
	type fields MomentSize
	return decodeElement(b, (*fields)(m), "moment size")
}

// UnmarshalJSON decodes one saved input (see decodeElement).
func (in *Input) UnmarshalJSON(b []byte) error {
	type fields Input
	return decodeElement(b, (*fields)(in), "input")
}

// UnmarshalJSON decodes one saved release-gate check (see decodeElement).
func (t *Threshold) UnmarshalJSON(b []byte) error {
	type fields Threshold
	return decodeElement(b, (*fields)(t), "threshold")
}

// UnmarshalJSON decodes one saved preflight check (see decodeElement).
func (c *PreflightCheck) UnmarshalJSON(b []byte) error {
	type fields PreflightCheck
	return decodeElement(b, (*fields)(c), "preflight check")
}

// UnmarshalJSON decodes one saved suspect (see decodeElement).
func (s *Suspect) UnmarshalJSON(b []byte) error {
	type fields Suspect
	return decodeElement(b, (*fields)(s), "suspect")
}

// UnmarshalJSON decodes one saved test (see decodeElement).
func (t *Test) UnmarshalJSON(b []byte) error {
	type fields Test
	return decodeElement(b, (*fields)(t), "test")
}

// UnmarshalJSON decodes one saved slow finding (see decodeElement).
func (f *SlowFinding) UnmarshalJSON(b []byte) error {
	type fields SlowFinding
	return decodeElement(b, (*fields)(f), "slow finding")
}

// UnmarshalJSON decodes a saved report's families, refusing a key that is
// not a family as soon as it is read: "families": {"f1": {}, "f2": {}, …}
// made the decoder hold a 152-byte Stats per 8 bytes read.
func (f *FamilyStats) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if string(bytes.TrimSpace(b)) == "null" {
			*f = nil
			return nil
		}
		return fmt.Errorf("families: not an object")
	}
	out := FamilyStats{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		if name != "ipv4" && name != "ipv6" {
			return fmt.Errorf("families: %q is not an address family (ipv4, ipv6)", Shown(name))
		}
		var s *Stats
		if err := dec.Decode(&s); err != nil {
			return err
		}
		out[name] = s
	}
	*f = out
	return nil
}
