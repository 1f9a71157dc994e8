package mcpserver

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// net/http's server waits for each later request of a kept-alive connection as long as its
// IdleTimeout, and gives the request its ReadHeaderTimeout from its first bytes; but for the first
// request of a new connection it waits only ReadHeaderTimeout from the accept (10 s in taskgate
// serve, against 60 s of --idle-timeout). A client may well hold a connection it never used that
// long: net/http's Transport dials for a request that finds no idle connection, and when another
// connection frees up first the request goes there, and the new one waits in the idle pool, unused,
// for as long as the client keeps idle connections (30 to 90 s); it even counts as reused. The
// server closes it after 10 s without a word, and a request the client sends on it just then fails
// with EOF: a POST, which the Transport does not send again. So a client that keeps its idle
// connections for less than --idle-timeout, as it should, still lost polls (the bench's fleet,
// two in a run). AwaitFirstRequest closes that gap.

// AwaitFirstRequest makes hs, serving on ln, wait for the first request of a connection as it
// waits for every later one: its first bytes as long as the idle timeout (hs.IdleTimeout, else
// hs.ReadTimeout, as net/http takes it), and its head within the header timeout
// (hs.ReadHeaderTimeout, else hs.ReadTimeout) from those bytes. It returns the listener to serve on
// (ln itself when the idle timeout is not longer than the header timeout). Wrap ln in it before
// GuardFraming, whose connections must be the ones the server sees.
func AwaitFirstRequest(hs *http.Server, ln net.Listener) net.Listener {
	idle, header := hs.IdleTimeout, hs.ReadHeaderTimeout
	if idle == 0 {
		idle = hs.ReadTimeout
	}
	if header == 0 {
		header = hs.ReadTimeout
	}
	if header <= 0 || idle <= header {
		return ln
	}
	return firstRequestListener{Listener: ln, idle: idle}
}

type firstRequestListener struct {
	net.Listener
	idle time.Duration
}

func (l firstRequestListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &firstRequestConn{Conn: c, idleUntil: time.Now().Add(l.idle)}, nil
}

// firstRequestConn holds off the read deadlines the server sets until its first bytes arrive: till
// then it waits until idleUntil at least; then it gives the last deadline asked for, counted from
// those bytes instead of from when it was asked for.
type firstRequestConn struct {
	net.Conn
	idleUntil time.Time
	begun     atomic.Bool // the first bytes arrived
	mu        sync.Mutex
	// asked is the read deadline the server set before the first bytes (zero: none), at askedAt.
	asked, askedAt time.Time
}

func (c *firstRequestConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.begun.Load() {
		c.begin()
	}
	return n, err
}

// begin gives the deadline the server asked for, from now on.
func (c *firstRequestConn) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.begun.Swap(true) || c.asked.IsZero() {
		return
	}
	c.Conn.SetReadDeadline(c.asked.Add(time.Since(c.askedAt)))
}

func (c *firstRequestConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.begun.Load() {
		return c.Conn.SetReadDeadline(t)
	}
	c.asked, c.askedAt = t, time.Now()
	if !t.IsZero() && t.Before(c.idleUntil) {
		t = c.idleUntil
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *firstRequestConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

// CloseWrite passes on net/http's half-close, which it sends before it closes a connection whose
// request it will not read to the end, so that its last answer is not lost to a reset.
func (c *firstRequestConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
