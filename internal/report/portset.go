package report

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

// portBitmapLen is the size of a port set's bitmap: one bit per TCP port.
const portBitmapLen = 65536 / 8

// EncodePortSet writes a set of TCP ports as Client.PortSet: a bitmap of
// 65,536 bits (bit p, counting from the low bit of byte 0, is set when port p
// was used), zlib-compressed, in standard base64. Ports outside 0-65535 are
// ignored. A run's ephemeral ports compress to a few kilobytes at most.
func EncodePortSet(ports []int) string {
	bits := make([]byte, portBitmapLen)
	for _, p := range ports {
		if p >= 0 && p < 65536 {
			bits[p/8] |= 1 << (p % 8)
		}
	}
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(bits) // a bytes.Buffer does not fail
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// DecodePortSet reads a Client.PortSet written by EncodePortSet and returns
// its ports in ascending order.
func DecodePortSet(s string) ([]int, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("port set: %w", err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("port set: %w", err)
	}
	// One byte more than a bitmap tells a longer stream from a whole one.
	bits, err := io.ReadAll(io.LimitReader(zr, portBitmapLen+1))
	if err != nil {
		return nil, fmt.Errorf("port set: %w", err)
	}
	if len(bits) != portBitmapLen {
		return nil, errors.New("port set: not a bitmap of 65536 ports")
	}
	var ports []int
	for i, b := range bits {
		for j := range 8 {
			if b&(1<<j) != 0 {
				ports = append(ports, i*8+j)
			}
		}
	}
	return ports, nil
}
