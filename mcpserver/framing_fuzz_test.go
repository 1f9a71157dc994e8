package mcpserver

import (
	"slices"
	"testing"
)

// FuzzFraming: however the bytes of a connection arrive, one read or many, framing reads the same
// heads from them, and it never panics.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\n\r\n"), uint8(3))
	f.Add([]byte("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n"), uint8(1))
	f.Add([]byte("POST /a HTTP/1.1\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n"), uint8(7))
	f.Fuzz(func(t *testing.T, raw []byte, step uint8) {
		var whole, pieces framing
		whole.feed(raw)
		n := max(int(step), 1)
		for b := raw; len(b) > 0; b = b[min(n, len(b)):] {
			pieces.feed(b[:min(n, len(b))])
		}
		if !slices.Equal(whole.heads, pieces.heads) || whole.lost != pieces.lost {
			t.Fatalf("%q read whole: heads %v, lost %v; in pieces of %d: heads %v, lost %v", raw, whole.heads, whole.lost, n, pieces.heads, pieces.lost)
		}
	})
}
