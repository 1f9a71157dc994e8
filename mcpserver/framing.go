package mcpserver

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// A request with both Transfer-Encoding and Content-Length frames its body two ways: Go's server
// reads it by Transfer-Encoding and, on a kept-alive connection, reads whatever follows as the next
// request, while a proxy in front that went by Content-Length saw one request. RFC 9112 §6.3 says
// the server must close the connection after such a request. Go's server removes Content-Length
// from such a request before any handler sees it, so the only place to tell is the bytes on the
// connection: GuardFraming scans the head of each request there, and refuses the ones framed both
// ways before they reach any handler.

// GuardFraming makes hs, serving on ln, answer a request that has both Transfer-Encoding and
// Content-Length with 400 and close its connection; it returns the listener to serve on.
func GuardFraming(hs *http.Server, ln net.Listener) net.Listener {
	next, nextContext := hs.Handler, hs.ConnContext
	// Every request a connection reads must reach the handler below, in order: Go's server
	// answers OPTIONS * itself unless told not to.
	hs.DisableGeneralOptionsHandler = true
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if nextContext != nil {
			ctx = nextContext(ctx, c)
		}
		if fc, ok := c.(*framedConn); ok {
			ctx = context.WithValue(ctx, framedConnKey{}, fc)
		}
		return ctx
	}
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fc, ok := r.Context().Value(framedConnKey{}).(*framedConn); ok && r.ProtoMajor == 1 && !fc.nextFramedOnce() {
			w.Header().Set("Connection", "close")
			http.Error(w, "Bad Request: the request has both Transfer-Encoding and Content-Length (RFC 9112 §6.3)", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
	return framedListener{ln}
}

type framedConnKey struct{}

type framedListener struct{ net.Listener }

func (l framedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framedConn{Conn: c}, nil
}

// framedConn scans the bytes the server reads for the heads of its requests.
type framedConn struct {
	net.Conn
	mu   sync.Mutex
	scan framing
}

func (c *framedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.scan.feed(p[:n])
	c.mu.Unlock()
	return n, err
}

// nextFramedOnce reports whether the connection's next request, in the order the server reads
// them, was framed one way only. Once the scan lost its place, none is.
func (c *framedConn) nextFramedOnce() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.scan.heads) == 0 {
		return !c.scan.lost
	}
	ok := !c.scan.heads[0]
	c.scan.heads = c.scan.heads[1:]
	return ok
}

// Bounds of what framing reads: Go's server refuses longer heads (http.DefaultMaxHeaderBytes, and
// 4 KiB within it) and chunk lines (4 KiB) itself.
const (
	maxHead      = http.DefaultMaxHeaderBytes + 4096
	maxChunkLine = 4096
)

type framingState int

const (
	inHead framingState = iota
	inBody
	inChunkSize
	inChunk
	inChunkEnd
	inTrailer
)

// framing follows the HTTP/1.1 requests of a byte stream as Go's server reads them: each head, and
// each body by its Transfer-Encoding (chunked) or else its Content-Length. heads records, for each
// head read, whether it had both. On bytes it cannot follow (which the server refuses, closing
// the connection) it is lost.
type framing struct {
	state framingState
	line  []byte // the part of a line read so far
	// Of the current head: its bytes so far, whether its request line was read and says HTTP/1.0,
	// and its Transfer-Encoding and Content-Length values.
	headLen     int
	requestLine bool
	http10      bool
	te, cl      []string
	// remaining is what is left of the current body (inBody) or chunk (inChunk).
	remaining int64
	heads     []bool
	lost      bool
}

func (f *framing) feed(b []byte) {
	for len(b) > 0 && !f.lost {
		if f.state == inBody || f.state == inChunk {
			n := int(min(int64(len(b)), f.remaining))
			b, f.remaining = b[n:], f.remaining-int64(n)
			switch {
			case f.remaining > 0:
			case f.state == inBody:
				f.state = inHead
			default:
				f.state = inChunkEnd
			}
			continue
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.line = append(f.line, b...)
			f.lost = len(f.line) > maxHead
			return
		}
		f.line = append(f.line, b[:i]...)
		b = b[i+1:]
		line := string(bytes.TrimSuffix(f.line, []byte("\r")))
		f.line = f.line[:0]
		f.take(line)
	}
}

// take reads one line in the current state.
func (f *framing) take(line string) {
	switch f.state {
	case inHead:
		f.headLine(line)
	case inChunkSize:
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		switch {
		case err != nil || n < 0 || len(line) > maxChunkLine:
			f.lost = true
		case n == 0:
			f.state = inTrailer
		default:
			f.state, f.remaining = inChunk, n
		}
	case inChunkEnd:
		f.state, f.lost = inChunkSize, line != ""
	case inTrailer:
		if line == "" {
			f.state = inHead
		}
	}
}

// headLine reads one line of a request's head; the empty line ends it.
func (f *framing) headLine(line string) {
	f.headLen += len(line) + 2
	switch {
	case f.headLen > maxHead:
		f.lost = true
	case !f.requestLine && line == "":
		// Go's server skips empty lines before a request line.
	case !f.requestLine:
		f.requestLine, f.http10 = true, strings.HasSuffix(line, " HTTP/1.0")
	case line != "":
		name, value, _ := strings.Cut(line, ":")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "transfer-encoding":
			f.te = append(f.te, strings.TrimSpace(value))
		case "content-length":
			f.cl = append(f.cl, strings.TrimSpace(value))
		}
	default:
		f.endHead()
	}
}

// endHead records the head just read and frames its body as Go's server does: by
// Transfer-Encoding when it is chunked on HTTP/1.1 (Go refuses any other), else by Content-Length.
func (f *framing) endHead() {
	f.heads = append(f.heads, len(f.te) > 0 && len(f.cl) > 0)
	te, cl, http10 := f.te, f.cl, f.http10
	f.headLen, f.requestLine, f.http10, f.te, f.cl = 0, false, false, nil, nil
	f.state = inHead
	switch {
	case len(te) > 0 && !http10:
		f.state, f.lost = inChunkSize, len(te) != 1 || !strings.EqualFold(te[0], "chunked")
	case len(cl) > 0:
		n, err := strconv.ParseInt(cl[0], 10, 64)
		f.lost = err != nil || n < 0
		if n > 0 {
			f.state, f.remaining = inBody, n
		}
	}
}
