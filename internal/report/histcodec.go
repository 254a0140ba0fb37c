package report

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A saved report's histograms are read here, not by hdr.Decode: a histogram
// is a header naming its own geometry and a zlib stream, so 60 bytes can
// declare a layout of 1 to 2⁶³ at 5 digits (49 MB of counts) or inflate to
// far more than they weigh. pinprobe writes two layouts only, so a header
// naming another is refused before anything is allocated, and the counts
// are streamed from the payload, never held as a fresh histogram per scope.

// histGeometry is one of the two histogram layouts pinprobe writes.
type histGeometry struct {
	name      string
	digits    int32
	highest   int64
	countsLen int   // how many buckets
	halfMag   uint  // log2 of half a sub-bucket range
	halfCount int32 // half a sub-bucket range
}

var (
	latencyGeometry = newHistGeometry("latency", histDigits)
	phaseGeometry   = newHistGeometry("phase", phaseDigits)
)

func newHistGeometry(name string, digits int32) *histGeometry {
	g := &histGeometry{name: name, digits: digits, highest: histMax}
	g.countsLen = len(hdr.New(histMin, histMax, int(digits)).Export().Counts)
	// As hdr computes it: the sub-bucket range holds 2×10^digits values at
	// unit resolution, rounded up to a power of two.
	g.halfMag = uint(math.Ceil(math.Log2(2*math.Pow10(int(digits))))) - 1
	g.halfCount = 1 << g.halfMag
	return g
}

// newHist is an empty histogram of g's layout.
func (g *histGeometry) newHist() *hdr.Histogram { return hdr.New(histMin, histMax, int(g.digits)) }

// value is the lowest value of bucket idx (hdr's valueFromFlatIndex for a
// lowest trackable value of 1).
func (g *histGeometry) value(idx int) int64 {
	bucket := int32(idx>>g.halfMag) - 1
	sub := int32(idx)&(g.halfCount-1) + g.halfCount
	if bucket < 0 {
		sub -= g.halfCount
		bucket = 0
	}
	return int64(sub) << uint(bucket)
}

// The cookies of the V2 encoding (the low nibble's 0x10 is the word size).
const (
	v2Compressed = 0x1c849304
	v2Plain      = 0x1c849303
	v2HeaderLen  = 40
)

var (
	zreaders sync.Pool // *zlibReader
)

// zwriters are the BestCompression writers not in use, at most one per
// processor that may encode at once. Each is 1.2 MB to allocate and clear;
// a sync.Pool let every other collection drop them, and the race
// detector's a quarter of its Puts, so that most encodings of a merge or
// a comparison paid for a new writer.
var zwriters struct {
	sync.Mutex
	free []*zlib.Writer
}

func getZWriter() *zlib.Writer {
	zwriters.Lock()
	defer zwriters.Unlock()
	if n := len(zwriters.free); n > 0 {
		w := zwriters.free[n-1]
		zwriters.free = zwriters.free[:n-1]
		return w
	}
	w, _ := zlib.NewWriterLevel(nil, zlib.BestCompression)
	return w
}

func putZWriter(w *zlib.Writer) {
	zwriters.Lock()
	defer zwriters.Unlock()
	if len(zwriters.free) < runtime.GOMAXPROCS(0) {
		zwriters.free = append(zwriters.free, w)
	}
}

type zlibReader struct {
	src     bytes.Reader
	z       io.ReadCloser
	buf     []byte // the base64-decoded histogram
	payload []byte // its inflated counts
	hd      [v2HeaderLen]byte
}

// openHDR decodes enc's outer layers and reads its header, checking that it
// is pinprobe's layout g, and returns the reader positioned at the payload
// with the payload's length. The caller puts r back with closeHDR.
func openHDR(enc string, g *histGeometry) (r *zlibReader, payload int, err error) {
	r, _ = zreaders.Get().(*zlibReader)
	if r == nil {
		r = &zlibReader{}
	}
	defer func() {
		if err != nil {
			closeHDR(r)
			r = nil
		}
	}()
	if n := base64.StdEncoding.DecodedLen(len(enc)); cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(r.buf[:cap(r.buf)], []byte(enc))
	if err != nil {
		return r, 0, errors.New("not base64")
	}
	raw := r.buf[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw))&^0xf0 != v2Compressed {
		return r, 0, errors.New("not an HdrHistogram V2 compressed histogram")
	}
	clen := int64(int32(binary.BigEndian.Uint32(raw[4:])))
	if clen < 0 || clen > int64(len(raw)-8) {
		return r, 0, errors.New("truncated")
	}
	r.src.Reset(raw[8 : 8+clen])
	if r.z == nil {
		r.z, err = zlib.NewReader(&r.src)
	} else {
		err = r.z.(zlib.Resetter).Reset(&r.src, nil)
	}
	if err != nil {
		return r, 0, fmt.Errorf("zlib: %w", err)
	}
	if _, err := io.ReadFull(r.z, r.hd[:]); err != nil {
		return r, 0, errors.New("truncated header")
	}
	h := r.hd[:]
	cookie := int32(binary.BigEndian.Uint32(h)) &^ 0xf0
	plen := int32(binary.BigEndian.Uint32(h[4:]))
	digits := int32(binary.BigEndian.Uint32(h[12:]))
	lowest, highest := int64(binary.BigEndian.Uint64(h[16:])), int64(binary.BigEndian.Uint64(h[24:]))
	switch {
	case cookie != v2Plain:
		return r, 0, errors.New("not an HdrHistogram V2 histogram")
	case digits != g.digits || lowest > histMin || highest != g.highest:
		return r, 0, fmt.Errorf("a histogram of %d to %d at %d digits: pinprobe writes %s histograms of %d to %d µs at %d",
			max(lowest, 1), highest, digits, g.name, histMin, g.highest, g.digits)
	case plen < 0 || int(plen) > g.countsLen*9:
		return r, 0, fmt.Errorf("payload of %d bytes for %d buckets", plen, g.countsLen)
	}
	return r, int(plen), nil
}

func closeHDR(r *zlibReader) { zreaders.Put(r) }

// scanHDR reads the counts of enc, a histogram of layout g, calling each
// with every bucket that holds some (idx ascending); it returns their sum.
// Nothing is allocated per histogram but its payload.
func scanHDR(enc string, g *histGeometry, each func(idx int, count int64)) (int64, error) {
	r, plen, err := openHDR(enc, g)
	if err != nil {
		return 0, err
	}
	defer closeHDR(r)
	if cap(r.payload) < plen+1 {
		r.payload = make([]byte, plen+1)
	}
	payload := r.payload[:plen+1]
	n, err := io.ReadFull(r.z, payload)
	switch {
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		return 0, fmt.Errorf("zlib: %w", err)
	case n != plen:
		return 0, fmt.Errorf("payload of %d bytes, not the %d its header says", n, plen)
	case err == nil:
		return 0, errors.New("data after the payload")
	}
	payload = payload[:plen]
	var total int64
	idx := 0
	for len(payload) > 0 {
		v, k := binary.Uvarint(payload) // LEB128; hdr's 9th byte carries 8 bits
		if k <= 0 || k > 9 {
			v, k = leb9(payload)
			if k == 0 {
				return 0, errors.New("truncated payload")
			}
		}
		payload = payload[k:]
		count := int64(v>>1) ^ -int64(v&1) // zig-zag
		switch {
		case count < 0:
			if count == math.MinInt64 || -count > int64(g.countsLen-idx) {
				return 0, errors.New("a run of zeros past the last bucket")
			}
			idx += int(-count)
		case idx >= g.countsLen:
			return 0, errors.New("a count past the last bucket")
		case count > math.MaxInt64-total:
			return 0, errors.New("counts past 2^63")
		default:
			if count > 0 && each != nil {
				each(idx, count)
			}
			total += count
			idx++
		}
	}
	return total, nil
}

// leb9 reads hdr's 9-byte LEB128 form, whose last byte carries 8 bits;
// 0 bytes read when truncated.
func leb9(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v | uint64(b[8])<<56, 9
		}
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}

// payloadLen is the length enc's header gives its payload: what reading it
// will inflate.
func payloadLen(enc string, g *histGeometry) (int, error) {
	r, plen, err := openHDR(enc, g)
	if err != nil {
		return 0, err
	}
	closeHDR(r)
	return plen, nil
}

// addHDR adds the counts of enc, a histogram of layout g, to h (of the same
// layout); h is left as it was when enc does not decode.
func addHDR(h *hdr.Histogram, enc string, g *histGeometry) error {
	if _, err := scanHDR(enc, g, nil); err != nil {
		return err
	}
	_, err := scanHDR(enc, g, func(idx int, count int64) { h.RecordValues(g.value(idx), count) })
	return err
}

// encodeHDR writes h, of layout g, as hdr's Encode does (the V2 compressed
// encoding, base64), byte for byte, without allocating a compressor for
// each histogram.
func encodeHDR(h *hdr.Histogram, g *histGeometry) string { return encodeCounts(h.Export().Counts, g) }

// encodeCounts is encodeHDR of a histogram's counts, bucket by bucket.
func encodeCounts(counts []int64, g *histGeometry) string {
	limit := 0 // hdr encodes up to the bucket of Max, at least one
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i] != 0 {
			limit = i
			break
		}
	}
	limit++
	var payload []byte
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		payload = appendZigZag(payload, c)
	}
	return encodePayload(payload, g)
}

// appendZigZag appends c as hdr's payload holds a count: zig-zag, LEB128.
func appendZigZag(b []byte, c int64) []byte { return binary.AppendUvarint(b, uint64(c<<1^c>>63)) }

// encoded remembers the encodings of small payloads: the endpoints of a
// run at a low rate per endpoint hold a few values each, so many of their
// histograms are the same, and a compressor pass (most of it clearing
// BestCompression's tables) is most of what the end of a run of 10,000
// endpoints costs. The encoding is a function of the payload and layout,
// so a remembered one is the one it would write.
var encoded struct {
	sync.Mutex
	m map[string]string // layout name, NUL, payload -> encoding
}

// Bounds of encoded: payloads up to encodedPayload bytes, encodedMax of
// them (then it starts again).
const (
	encodedPayload = 32
	encodedMax     = 4096
)

// encodePayload writes the counts payload of a histogram of layout g with
// its header, compressed and in base64, as hdr's Encode does.
func encodePayload(payload []byte, g *histGeometry) string {
	if len(payload) > encodedPayload {
		return compressPayload(payload, g)
	}
	key := g.name + "\x00" + string(payload)
	encoded.Lock()
	enc, ok := encoded.m[key]
	encoded.Unlock()
	if ok {
		return enc
	}
	enc = compressPayload(payload, g)
	encoded.Lock()
	if encoded.m == nil || len(encoded.m) >= encodedMax {
		encoded.m = make(map[string]string)
	}
	encoded.m[key] = enc
	encoded.Unlock()
	return enc
}

// compressPayload is encodePayload, compressing every time.
func compressPayload(payload []byte, g *histGeometry) string {
	var plain bytes.Buffer
	var hd [v2HeaderLen]byte
	binary.BigEndian.PutUint32(hd[0:], v2Plain|0x10)
	binary.BigEndian.PutUint32(hd[4:], uint32(len(payload)))
	binary.BigEndian.PutUint32(hd[12:], uint32(g.digits))
	binary.BigEndian.PutUint64(hd[16:], histMin)
	binary.BigEndian.PutUint64(hd[24:], uint64(g.highest))
	binary.BigEndian.PutUint64(hd[32:], math.Float64bits(1))
	plain.Write(hd[:])
	plain.Write(payload)
	var z bytes.Buffer
	w := getZWriter()
	w.Reset(&z)
	w.Write(plain.Bytes()) // a bytes.Buffer does not fail
	w.Close()
	putZWriter(w)
	out := make([]byte, 8, 8+z.Len())
	binary.BigEndian.PutUint32(out, v2Compressed|0x10)
	binary.BigEndian.PutUint32(out[4:], uint32(z.Len()))
	out = append(out, z.Bytes()...)
	var b strings.Builder
	b.Grow(base64.StdEncoding.EncodedLen(len(out)))
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(out)
	enc.Close()
	return b.String()
}

// Scratch is a histogram of one of pinprobe's layouts with its counts
// beside it, lent scope after scope: Merge and the verdict read thousands
// of saved histograms through a few of these instead of decoding each into
// a histogram of its own.
type Scratch struct {
	g      *histGeometry
	H      *hdr.Histogram // the histogram, for its percentiles
	Counts []int64        // its counts, bucket by bucket
}

// NewScratch is an empty latency Scratch (the layout of NewHist).
func NewScratch() *Scratch { return newScratch(latencyGeometry) }

func newScratch(g *histGeometry) *Scratch {
	return &Scratch{g: g, H: g.newHist(), Counts: make([]int64, g.countsLen)}
}

// Reset empties s.
func (s *Scratch) Reset() {
	s.H.Reset()
	clear(s.Counts)
}

// Add adds the counts of enc, a histogram of s's layout; s is left as it
// was when enc does not decode.
func (s *Scratch) Add(enc string) error {
	if _, err := scanHDR(enc, s.g, nil); err != nil {
		return err
	}
	_, err := scanHDR(enc, s.g, func(idx int, count int64) {
		s.H.RecordValues(s.g.value(idx), count)
		s.Counts[idx] += count
	})
	return err
}

// Tally adds the counts of enc, a histogram of s's layout, to s.Counts
// alone (H is left as it is), in one pass, and returns how many values it
// held and the first and last bucket it added to (lo > hi when none): for
// a reader that needs the counts, not H, whose recording costs more than
// the decoding, and that reads (and empties) only the buckets in use. When
// enc does not decode, s.Counts holds part of it: Reset s.
func (s *Scratch) Tally(enc string) (n int64, lo, hi int, err error) {
	lo, hi = len(s.Counts), -1
	n, err = scanHDR(enc, s.g, func(idx int, count int64) {
		s.Counts[idx] += count
		lo, hi = min(lo, idx), max(hi, idx)
	})
	return n, lo, hi, err
}

// Bucket is the least and the greatest value of bucket idx of s's layout:
// hdr's lowest and highest equivalent values, the latter what a
// percentile in the bucket reads.
func (s *Scratch) Bucket(idx int) (lo, hi int64) { return s.g.value(idx), s.g.value(idx+1) - 1 }

// AddCounts adds counts of s's layout, bucket by bucket.
func (s *Scratch) AddCounts(counts []int64) {
	for i, c := range counts {
		if c > 0 {
			s.Counts[i] += c
			s.H.RecordValues(s.g.value(i), c)
		}
	}
}

// Encode writes s as encodeHDR does.
func (s *Scratch) Encode() string { return encodeCounts(s.Counts, s.g) }
