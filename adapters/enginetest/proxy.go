package enginetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards connections from a loopback address to the server at target, until cut closes
// the listener and every connection. A harness dials its Unreachable engine through it, so that
// a driver that checks its server when it connects can still get an engine whose server is gone.
func Proxy(t testing.TB, target string) (addr string, cut func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	cut = sync.OnceFunc(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
	})
	t.Cleanup(cut)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			if closed {
				in.Close()
				out.Close()
			}
			mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return ln.Addr().String(), cut
}
