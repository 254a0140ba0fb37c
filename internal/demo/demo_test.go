package demo

import (
	"net"
	"strconv"
	"testing"
)

// TestListenPrefersPort: the demo's gateway takes Port when it is free, so
// two demo runs have the same URL and compare matches them; when Port is
// taken it takes another port, the same on every loopback address.
func TestListenPrefersPort(t *testing.T) {
	hold, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(Port))
	if err != nil {
		t.Skipf("port %d is in use here (another demo?): %v", Port, err)
	}
	lns, err := listenSamePort()
	if err != nil {
		t.Fatal(err)
	}
	if p := ln0Port(lns); p == Port {
		t.Errorf("took port %d while it was held", p)
	}
	for _, ln := range lns {
		if p := ln.Addr().(*net.TCPAddr).Port; p != ln0Port(lns) {
			t.Errorf("%s: port %d; want %d on every address", ln.Addr(), p, ln0Port(lns))
		}
		ln.Close()
	}
	hold.Close()
	lns, err = listenSamePort()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	if p := ln0Port(lns); p != Port {
		t.Errorf("port %d once free: took %d", Port, p)
	}
}
