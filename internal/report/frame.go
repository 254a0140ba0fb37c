package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"regexp"
	"strconv"
)

// A report in a log, the one way out of a pod every cluster has:
// WriteFrames writes the JSON report, gzipped in base64, as lines
// "pinprobe-report/v1 ID PART/PARTS CRC DATA", each under the 16 KiB at
// which container runtimes split a line; ID is the first 12 hex digits of
// the text's SHA-256, CRC the CRC-32C of DATA. ReadFrames picks them out of
// any stream (other lines, kubectl's --prefix, pods interleaved), joins
// each report's parts and reads it as Parse does; a line cut short,
// garbled or missing is refused, naming it.
const (
	FrameTag = "pinprobe-report/v1"
	// FrameChunk is the base64 characters of one line.
	FrameChunk = 12000
	// MaxFrameBytes is the base64 text of one report, at most: well
	// under the 10 MiB at which the kubelet rotates a container's log,
	// which `kubectl logs` would no longer read whole.
	MaxFrameBytes = 4 << 20
	// MaxFrames is the reports ReadFrames reads from one stream.
	MaxFrames = 1000
	// maxPending is the base64 text of reports begun and not finished,
	// held at once.
	maxPending = 64 << 20
	// maxLine is the longest line ReadFrames looks at: a frame's line
	// and room for a prefix. Longer lines are skipped, unless they hold a
	// frame.
	maxLine = FrameChunk + 4096
)

// frameHead is a frame line from its tag: the tag's version, then ID,
// PART/PARTS and CRC.
var frameHead = regexp.MustCompile(`^pinprobe-report/v([0-9]+) ([0-9a-f]{12}) ([0-9]{1,6})/([0-9]{1,6}) ([0-9a-f]{8}) `)

// framePrefix is the prefix `kubectl logs --prefix` gives a line:
// [pod/NAME/CONTAINER], both names as Kubernetes allows them.
var framePrefix = regexp.MustCompile(`^\[pod/([a-z0-9][a-z0-9.-]{0,252})/([a-z0-9-]{0,63})\] `)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// WriteFrames writes r as the lines of its frame (see FrameTag), each in
// one write. A report whose frame would be larger than MaxFrameBytes is
// refused, before anything is written.
func WriteFrames(w io.Writer, r *Report) error {
	var zipped bytes.Buffer
	b64 := base64.NewEncoder(base64.StdEncoding, &zipped)
	zw := gzip.NewWriter(b64)
	err := JSON(zw, r)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = b64.Close()
	}
	if err != nil {
		return fmt.Errorf("write framed report: %w", err)
	}
	data := zipped.Bytes()
	if len(data) > MaxFrameBytes {
		return fmt.Errorf("write framed report: %s framed, more than the %s a report in a log may be (keep it with -o FILE)",
			sizeWords(int64(len(data))), sizeWords(MaxFrameBytes))
	}
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:6])
	parts := (len(data) + FrameChunk - 1) / FrameChunk
	line := make([]byte, 0, FrameChunk+64)
	for i := range parts {
		chunk := data[i*FrameChunk : min(len(data), (i+1)*FrameChunk)]
		line = fmt.Appendf(line[:0], "%s %s %d/%d %08x %s\n", FrameTag, id, i+1, parts, crc32.Checksum(chunk, crcTable), chunk)
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("write framed report: %w", err)
		}
	}
	return nil
}

// Frame is one report read from a stream by ReadFrames.
type Frame struct {
	Report *Report
	// Name is where it came from: "pod/NAME" where its lines had a
	// `kubectl logs --prefix` prefix, else the stream's name and the line
	// its first part was on ("pods.log line 12").
	Name string
}

// pending is a report whose parts are being read.
type pending struct {
	name  string // as Frame.Name
	id    string
	where string // the first part's line, for errors
	first int    // its number
	parts [][]byte
	have  int
	size  int
}

// ReadFrames reads every report framed in the lines of r (see FrameTag),
// in the order their last parts arrive; name (the file's, or "standard
// input") starts every error, with the line and the pod. Lines that hold
// no frame are skipped. It refuses, with a one-line error: a frame's line
// cut short, garbled (its CRC), of an unknown frame version, or part of a
// frame given twice; a report whose parts do not all arrive, or whose whole
// does not match its ID; more than MaxFrames reports; and whatever Parse
// refuses in a report's JSON. A stream with no frame at all is no error
// here: the caller says what it expected.
func ReadFrames(r io.Reader, name string) ([]Frame, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	open := map[string]*pending{}
	var (
		frames  []Frame
		held    int
		lineNo  int
		overlen bool
		line    []byte
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxLine - len(line); len(chunk) <= room {
			line = append(line, chunk...)
		} else { // keep the line's start, to tell whether it is a frame's
			line = append(line, chunk[:room]...)
			overlen = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read report %s: %w", name, err)
		}
		if len(line) > 0 || overlen {
			lineNo++
			if overlen {
				if bytes.Contains(line, []byte("pinprobe-report/v")) {
					return nil, fmt.Errorf("read report %s line %d: a %s line longer than the %s a frame's line is", name, lineNo, FrameTag, sizeWords(maxLine))
				}
			} else if f, err := frameLine(line, name, lineNo, open, &held); err != nil {
				return nil, err
			} else if f != nil {
				if len(frames) == MaxFrames {
					return nil, fmt.Errorf("read report %s line %d: more than %d framed reports; pinprobe report reads at most %d from one stream", name, lineNo, MaxFrames, MaxFrames)
				}
				frames = append(frames, *f)
			}
		}
		line, overlen = line[:0], false
		if err != nil { // io.EOF
			break
		}
	}
	var first *pending
	for _, p := range open {
		if first == nil || p.first < first.first {
			first = p
		}
	}
	if first != nil {
		return nil, fmt.Errorf("read report %s: report %s begun on line %d: %d of its %d parts never came (a log cut short, or read from its end with --tail?)",
			first.where, first.id, first.first, len(first.parts)-first.have, len(first.parts))
	}
	return frames, nil
}

// frameLine reads one line of a stream: nothing when it holds no frame,
// a Frame when it is the last part of a report.
func frameLine(line []byte, name string, lineNo int, open map[string]*pending, held *int) (*Frame, error) {
	at := bytes.Index(line, []byte("pinprobe-report/v"))
	if at < 0 {
		return nil, nil
	}
	where := fmt.Sprintf("%s line %d", name, lineNo)
	line = bytes.TrimRight(line, "\r\n")
	source := ""
	if m := framePrefix.FindSubmatch(line); m != nil && len(m[0]) <= at {
		source = "pod/" + string(m[1])
		where += " (" + source + ")"
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("read report %s: %s", where, fmt.Sprintf(format, a...))
	}
	m := frameHead.FindSubmatch(line[at:])
	if m == nil {
		return nil, fail("a %s line garbled before its data", FrameTag)
	}
	if v := string(m[1]); v != "1" {
		return nil, fail("a pinprobe-report/v%s line, from a newer pinprobe; this one reads %s", Shown(v), FrameTag)
	}
	id := string(m[2])
	part, _ := strconv.Atoi(string(m[3]))
	parts, _ := strconv.Atoi(string(m[4]))
	crc, _ := strconv.ParseUint(string(m[5]), 16, 32)
	data := line[at+len(m[0]):]
	maxParts := (MaxFrameBytes + FrameChunk - 1) / FrameChunk
	switch {
	case parts < 1 || parts > maxParts || part < 1 || part > parts:
		return nil, fail("part %d of %d: want 1 to %d parts", part, parts, maxParts)
	case len(data) > FrameChunk || part < parts && len(data) < FrameChunk:
		return nil, fail("part %d of %d of report %s is %d characters long; want %d: cut short or joined to another line",
			part, parts, id, len(data), FrameChunk)
	case uint64(crc32.Checksum(data, crcTable)) != crc:
		return nil, fail("part %d of %d of report %s is garbled: its checksum does not match", part, parts, id)
	}
	key := source + " " + id
	p := open[key]
	if p == nil {
		frameName := source
		if frameName == "" {
			frameName = where
		}
		p = &pending{name: frameName, id: id, where: name, first: lineNo, parts: make([][]byte, parts)}
		if source != "" {
			p.where += " (" + source + ")"
		}
		open[key] = p
	}
	switch {
	case len(p.parts) != parts:
		return nil, fail("part %d of %d of report %s, which line %d said has %d parts", part, parts, id, p.first, len(p.parts))
	case p.parts[part-1] != nil:
		return nil, fail("part %d of %d of report %s again (the same log read twice?)", part, parts, id)
	case *held+len(data) > maxPending:
		return nil, fail("more than %s of reports begun and not finished", sizeWords(maxPending))
	}
	p.parts[part-1] = bytes.Clone(data)
	p.have++
	p.size += len(data)
	*held += len(data)
	if p.have < parts {
		return nil, nil
	}
	delete(open, key)
	*held -= p.size
	rep, err := decodeFrame(bytes.Join(p.parts, nil), id, p.name, where)
	if err != nil {
		return nil, err
	}
	return &Frame{Report: rep, Name: p.name}, nil
}

// decodeFrame reads a report from its whole base64 text: name is the
// report's, where its last line's.
func decodeFrame(data []byte, id, name, where string) (*Report, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("read report %s: report %s %s", where, id, fmt.Sprintf(format, a...))
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:6]) != id {
		return nil, fail("does not match its ID: a part garbled, or from another report")
	}
	zr, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
	if err != nil {
		return nil, fail("is not gzip: %v", err)
	}
	js, err := io.ReadAll(io.LimitReader(zr, ReadLimit+1))
	if err != nil {
		return nil, fail("cannot be unpacked: %v", err)
	}
	if int64(len(js)) > ReadLimit {
		return nil, fail("is larger than %s unpacked, more than any pinprobe report", sizeWords(ReadLimit))
	}
	return Parse(js, name)
}
