package accesslog

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeText takes the byte-order mark off the start of a log, whatever
// its kind: a UTF-8 one (PowerShell's Out-File -Encoding utf8, Excel's
// CSV) is dropped, and a UTF-16 one (PowerShell 5's > and Out-File) turns
// the rest into UTF-8 as it is read. It returns what to read and the
// encoding it decodes ("" for UTF-8).
func decodeText(br *bufio.Reader) (*bufio.Reader, string) {
	head, _ := br.Peek(3)
	switch {
	case len(head) >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf:
		br.Discard(3)
	case len(head) >= 2 && head[0] == 0xff && head[1] == 0xfe:
		br.Discard(2)
		return bufio.NewReaderSize(&utf16Reader{src: br, le: true}, 64<<10), "UTF-16LE"
	case len(head) >= 2 && head[0] == 0xfe && head[1] == 0xff:
		br.Discard(2)
		return bufio.NewReaderSize(&utf16Reader{src: br}, 64<<10), "UTF-16BE"
	}
	return br, ""
}

// utf16Reader reads UTF-16 text (its mark read) as UTF-8. A lone
// surrogate or an odd last byte reads as U+FFFD; memory is a few bytes.
type utf16Reader struct {
	src  *bufio.Reader
	le   bool
	out  []byte // encoded, not yet returned
	buf  []byte // out's storage, reused once out is read
	high rune   // a high surrogate waiting for its low half; 0 when none
	err  error
}

func (u *utf16Reader) unit() (uint16, error) {
	var b [2]byte
	n, err := io.ReadFull(u.src, b[:])
	if n == 1 {
		return 0, io.ErrUnexpectedEOF
	}
	if err != nil {
		return 0, err
	}
	if u.le {
		return uint16(b[0]) | uint16(b[1])<<8, nil
	}
	return uint16(b[1]) | uint16(b[0])<<8, nil
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	if len(u.out) == 0 {
		u.out = u.buf[:0]
	}
	for len(u.out) < len(p) && u.err == nil {
		c, err := u.unit()
		if err != nil {
			if u.high != 0 {
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				u.high = 0
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				// An odd last byte: a character cut in half.
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				err = io.EOF
			}
			u.err = err
			break
		}
		r := rune(c)
		switch {
		case u.high != 0 && utf16.IsSurrogate(r) && r >= 0xdc00:
			u.out = utf8.AppendRune(u.out, utf16.DecodeRune(u.high, r))
			u.high = 0
			continue
		case u.high != 0:
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
			u.high = 0
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			u.high = r
		case utf16.IsSurrogate(r):
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
		default:
			u.out = utf8.AppendRune(u.out, r)
		}
	}
	u.buf = u.out[:0]
	n := copy(p, u.out)
	u.out = u.out[n:]
	if n == 0 && u.err != nil {
		return 0, u.err
	}
	return n, nil
}
