package accesslog

import (
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// readErr opens log and reads it to its end: the first error, Open's or
// Next's (io.EOF at a clean end).
func readErr(log string) (*Reader, error) {
	r, err := Open(strings.NewReader(log), Options{})
	if err != nil {
		return nil, err
	}
	for {
		var rec Record
		if err := r.Next(&rec); err != nil {
			return r, err
		}
	}
}

// TestBinaryIsNoJSON: random bytes that happen to begin with { or [ are
// no Azure JSON export: no known format, like text junk, said once.
func TestBinaryIsNoJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 5))
	junk := make([]byte, 1<<20)
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	for _, lead := range []string{"{", "[", " {", "{\x00", "[\x01"} {
		_, err := readErr(lead + string(junk))
		if !errors.Is(err, ErrFormat) || strings.Count(err.Error(), "line 1:") > 1 {
			t.Errorf("%q + 1 MiB of random bytes: %v; want ErrFormat, no doubled line prefix", lead, err)
		}
	}
	// A JSON export cut by garbage after its first record: the record
	// read, the rest said once.
	good := `[{"TimeGenerated":"2026-12-01T16:40:21.75Z","ClientIp":"203.0.113.5","HttpStatus":502,"ServerRouted":"10.0.0.4:443","InstanceId":"appgw_0","TimeTaken":0.25,"RequestUri":"/sign"},` + "\n" + `7]`
	r, err := readErr(good)
	if !errors.Is(err, io.EOF) || r.Stats().Records != 1 || r.Stats().Err == nil || strings.Count(r.Stats().Err.Error(), "line ") != 1 {
		t.Errorf("a JSON export with a value after its record: %v, stats %+v; want 1 record and the rest said once", err, r.Stats())
	}
}

// TestPinprobeDocument: a pinprobe report given as a log is named so.
func TestPinprobeDocument(t *testing.T) {
	_, err := Open(strings.NewReader("{\n  \"schema\": \"pinprobe.report/v1\",\n  \"version\": \"0.1.0\"\n}\n"), Options{})
	var doc *PinprobeDocError
	if !errors.As(err, &doc) || doc.Schema != "pinprobe.report/v1" {
		t.Errorf("a pinprobe report as a log: %v; want a PinprobeDocError naming pinprobe.report/v1", err)
	}
}

// TestAzureTSV: `az monitor log-analytics query -o tsv` writes no header
// row: refused on one line that says what to export instead.
func TestAzureTSV(t *testing.T) {
	tsv := "11111111-2222-3333-4444-555555555555\t2026-12-01T16:40:21.7500000Z\tApplicationGatewayAccess\tappgw_0\t203.0.113.5\t50123\tGET\t/sign\t502\t10.0.0.4:443\t502\n"
	for _, o := range []Options{{}, {Kind: Azure}} {
		_, err := Open(strings.NewReader(tsv+tsv), o)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "line 1 is tab-separated values without a header row") ||
			!strings.Contains(err.Error(), "-o json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--log-type %q: %v; want one line refusing the headerless TSV and saying to export JSON or CSV", o.Kind, err)
		}
	}
}
