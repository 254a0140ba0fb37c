package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// targetSpec is one target as a targets file or the command line gives it;
// the flags (-X, -H, --body) fill what a block leaves out.
type targetSpec struct {
	url      string
	method   string
	header   [][2]string
	body     []byte
	hasBody  bool
	bodyFrom string // the @FILE a block named, for errors
	line     int    // where the block starts, 0 for a URL argument
}

// parseTargets reads a targets file (see examples/targets.txt): a block per
// "[METHOD] URL" line, with its header lines and an optional @FILE body; #
// comments; ${NAME} from the environment (unset: an error). An error names
// the file and line and quotes it as written, a secret value REDACTED.
func parseTargets(ctx context.Context, name string, data []byte, stdin io.Reader) ([]targetSpec, error) {
	var out []targetSpec
	var cur *targetSpec
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxTargets)
	n := 0
	// An error quotes the line as written: the values of its ${NAME}s
	// (a token, usually) are put back as their references.
	var unexpand *strings.Replacer
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if unexpand != nil {
			msg = unexpand.Replace(msg)
		}
		return usagef("--targets %s:%d: %s", name, n, msg)
	}
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		raw := line
		unexpand = nil
		if !strings.HasPrefix(line, "#") && strings.Contains(line, "${") {
			expanded, back, missing := expandRefs(line)
			if missing != "" {
				return nil, fail("%s is not set in the environment", missing)
			}
			line, unexpand = expanded, back
		}
		switch {
		case strings.HasPrefix(line, "#"):
			continue
		case line == "":
			cur = nil
			continue
		case cur == nil && isHeaderLine(line):
			where := "before the first target"
			if len(out) > 0 {
				where = "after a blank line, which ends a target's block"
			}
			return nil, fail("header line %q %s: put it right under its target's URL, with no blank line between",
				probe.RedactHeaderArg(raw), where)
		case cur == nil || startsTarget(line):
			spec, msg := targetStart(line, raw, n)
			if msg != "" {
				return nil, fail("%s", msg)
			}
			out = append(out, spec)
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "@"):
			if msg, err := cur.readBody(ctx, name, line, stdin); err != nil {
				return nil, err
			} else if msg != "" {
				return nil, fail("%s", msg)
			}
		default:
			name, value, err := parseHeaderLine(line)
			if err != nil {
				return nil, fail("%s", err)
			}
			cur.header = append(cur.header, [2]string{name, value})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("--targets %s:%d: %s", name, n+1, err)
	}
	if len(out) == 0 {
		return nil, usagef("--targets %s: no target in the file", name)
	}
	return out, nil
}

// expandRefs puts into line the values of its ${NAME}s, and returns what
// puts the references back into a message quoting it; missing is the
// first reference to a variable not set, "" when all are.
func expandRefs(line string) (expanded string, unexpand *strings.Replacer, missing string) {
	var back []string
	expanded = envRef.ReplaceAllStringFunc(line, func(ref string) string {
		val, ok := os.LookupEnv(ref[2 : len(ref)-1])
		if !ok && missing == "" {
			missing = ref
		}
		if len(val) >= 4 { // shorter ones would be put back where they were not
			back = append(back, val, ref)
		}
		return val
	})
	return expanded, longestFirst(back), missing
}

// targetStart is the target a "[METHOD] URL" line n starts, or what is
// wrong with the line (raw, as written).
func targetStart(line, raw string, n int) (targetSpec, string) {
	fields := strings.Fields(line)
	spec := targetSpec{line: n}
	switch len(fields) {
	case 1:
		spec.url = fields[0]
	case 2:
		spec.method, spec.url = strings.ToUpper(fields[0]), fields[1]
		if !httpguts.ValidHeaderFieldName(spec.method) {
			return spec, fmt.Sprintf("%q is not an HTTP method", fields[0])
		}
	default:
		return spec, fmt.Sprintf("want \"[METHOD] URL\" to start a target, got %q", probe.RedactHeaderArg(probe.RedactRawURL(raw)))
	}
	if _, err := probe.ParseTarget(spec.url); err != nil {
		return spec, err.Error()
	}
	return spec, ""
}

// readBody reads the body an "@FILE" line names, relative to the targets
// file name: msg says what is wrong, err is an interrupt.
func (spec *targetSpec) readBody(ctx context.Context, name, line string, stdin io.Reader) (msg string, err error) {
	if spec.hasBody {
		return fmt.Sprintf("a second body for the target of line %d", spec.line), nil
	}
	path := strings.TrimSpace(line[1:])
	if path == "" {
		return "want @FILE, the file holding the body", nil
	}
	if !filepath.IsAbs(path) && path != "-" {
		path = filepath.Join(filepath.Dir(name), path)
	}
	b, err := readInput(ctx, "body", path, maxBody, stdin)
	if err != nil {
		if errors.Is(err, errInterrupted) {
			return "", err
		}
		return strings.TrimPrefix(err.Error(), "body "), nil
	}
	spec.body, spec.hasBody, spec.bodyFrom = b, true, path
	return "", nil
}

// startsTarget reports whether a line inside a block is "[METHOD] URL",
// the start of the next target, rather than a header: a header's name ends
// in a colon, and a URL has a scheme. Read as a header, "https://a/b" would
// be a header named https.
func startsTarget(line string) bool {
	fields := strings.Fields(line)
	switch len(fields) {
	case 1:
		return strings.Contains(fields[0], "://") && !strings.Contains(fields[0][:strings.Index(fields[0], "://")], ":")
	case 2:
		return !strings.Contains(fields[0], ":") && strings.Contains(fields[1], "://")
	}
	return false
}

// isHeaderLine reports whether a line outside a block is a "Name: value"
// header (a misplaced one) rather than the URL of a target: its name is a
// token and its value does not start a URL's "//".
func isHeaderLine(line string) bool {
	name, value, err := probe.ParseHeader(line)
	return err == nil && httpguts.ValidHeaderFieldName(name) && !startsTarget(line) &&
		!strings.HasPrefix(strings.TrimSpace(value), "//")
}

// longestFirst is a Replacer of the old, new pairs, longer olds first (so
// that a value inside another is not put back in its middle); nil for none.
func longestFirst(pairs []string) *strings.Replacer {
	if len(pairs) == 0 {
		return nil
	}
	chunks := slices.Collect(slices.Chunk(pairs, 2))
	slices.SortStableFunc(chunks, func(a, b []string) int { return len(b[0]) - len(a[0]) })
	return strings.NewReplacer(slices.Concat(chunks...)...)
}

// envRef is a reference to an environment variable in a targets file.
var envRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// parseHeaderLine parses and checks a "Name: value" header, as -H takes it.
func parseHeaderLine(s string) (name, value string, err error) {
	name, value, err = probe.ParseHeader(s)
	if err != nil {
		return "", "", err
	}
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return "", "", fmt.Errorf("%q is not a valid header name", name)
	case !httpguts.ValidHeaderFieldValue(value):
		return "", "", fmt.Errorf("the value of %s has a control character", name)
	}
	switch http.CanonicalHeaderKey(name) {
	case "Content-Length":
		return "", "", fmt.Errorf("%s is set from the body (--body): pinprobe sends the length of what it sends", name)
	case "Transfer-Encoding":
		return "", "", fmt.Errorf("%s is not sent by pinprobe: a body goes with its Content-Length", name)
	case "Connection":
		return "", "", fmt.Errorf("%s is pinprobe's to set: use --new-conn or --conn-requests to choose how connections are used", name)
	}
	return name, value, nil
}
