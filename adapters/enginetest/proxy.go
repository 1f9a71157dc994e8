package enginetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Switch forwards connections from a loopback address to the server at target. cut closes every
// connection and closes each new one at once, as a server that went down (a harness dials its
// Unreachable engine through it, so that a driver that checks its server when it connects can
// still get an engine whose server is gone); restore forwards again, at the same address, as the
// server back up.
func Switch(t testing.TB, target string) (addr string, cut, restore func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var conns []net.Conn
	down := false
	cut = func() {
		mu.Lock()
		defer mu.Unlock()
		down = true
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	restore = func() {
		mu.Lock()
		defer mu.Unlock()
		down = false
	}
	t.Cleanup(cut)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if down {
				mu.Unlock()
				in.Close()
				continue
			}
			mu.Unlock()
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			if down {
				in.Close()
				out.Close()
			}
			mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return ln.Addr().String(), cut, restore
}
