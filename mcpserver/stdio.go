package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver/dialects"
)

// ServeStdio serves one client on standard input and output until it disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.ServeIO(ctx, os.Stdin, os.Stdout)
}

// ServeIO serves one client on a byte stream of one JSON-RPC message per line, as stdio carries
// it, until the stream ends or ctx does.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lockedWriter{w: w}
	return s.Serve(ctx, &mcp.IOTransport{
		Reader: io.NopCloser(&lineFilter{in: bufio.NewReaderSize(r, 64<<10), refusals: out}),
		Writer: out,
	})
}

// Serve serves one client on a connection-oriented transport (stdio, in-memory) until it
// disconnects or ctx ends.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, stdioTransport{Transport: t, s: s})
}

// lockedWriter makes each Write whole: go-sdk writes one message per Write, and the line filter
// writes its refusals between them.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// lineFilter passes on only the lines of a stdio stream that are one JSON-RPC message, and
// answers the others itself: go-sdk ends the whole connection at the first line it cannot decode,
// and serves the batches that MCP removed in 2025-06-18.
type lineFilter struct {
	in       *bufio.Reader
	refusals io.Writer
	pending  []byte
	err      error
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := readLine(f.in, maxMessage)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errLineTooLong) {
			return 0, err
		}
		f.err = err
		if len(bytes.TrimSpace(line)) == 0 && !errors.Is(err, errLineTooLong) {
			continue
		}
		if refusal := refuse(line, err); refusal != nil {
			f.refusals.Write(refusal)
			if errors.Is(err, errLineTooLong) {
				f.err = nil
			}
			continue
		}
		// go-sdk ends the connection at anything but a line break after a message: white space too.
		f.pending = append(bytes.TrimSpace(line), '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

var errLineTooLong = errors.New("message too long")

// readLine reads one line without its end, up to max bytes; a longer line is skipped to its end
// and reported as errLineTooLong.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err == nil || err == io.EOF {
				return nil, errLineTooLong
			}
			return nil, err
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimRight(line, "\r\n"), err
		}
	}
}

// refuse is the error response for a line that is not one JSON-RPC message that every decoder
// reads alike (strictMessage), or nil for a line the SDK may read.
func refuse(line []byte, readErr error) []byte {
	if errors.Is(readErr, errLineTooLong) {
		return append(errorResponse(json.RawMessage("null"), errLineLong), '\n')
	}
	trimmed := bytes.TrimSpace(line)
	rd, e := readMessage(trimmed)
	if e != nil {
		return append(errorResponse(json.RawMessage("null"), e), '\n')
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err == nil {
		return nil
	}
	return append(errorResponse(rd.id(), errNotMessage), '\n')
}

var errLineLong = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the message is longer than the limit of 4 MiB"}

// stdioTransport wraps a transport with the rewrite and remembers, per connection, what the client
// declared and what to do when one of its requests is cancelled.
type stdioTransport struct {
	mcp.Transport
	s *Server
}

func (t stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn := &stdioConn{Connection: c, s: t.s, cancels: newCancels(), id: uuid.NewString()}
	t.s.conns.m.Store(conn.id, conn)
	return conn, nil
}

// conns are the open stdio connections by id: notifications and answers go back on them.
type conns struct{ m sync.Map }

func (cs *conns) get(id string) (*stdioConn, bool) {
	conn, ok := cs.m.Load(id)
	if !ok {
		return nil, false
	}
	return conn.(*stdioConn), true
}

type stdioConn struct {
	mcp.Connection
	s    *Server
	id   string
	mu   sync.Mutex
	decl json.RawMessage
	// cancels are what a dialect asked to be done when a request is cancelled, by request id.
	cancels *cancels
	// refusals are the -32601 errors of requests not yet answered, by request id (keepRefusal).
	refusals sync.Map
	// listens are the listens served on the connection, by request id; listening counts them
	// until they have answered, and closed refuses more once the connection closes.
	listens   sync.Map
	listening sync.WaitGroup
	closed    bool
}

// Close ends the connection's listens with their results, then the connection.
func (c *stdioConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.listens.Range(func(_, l any) bool {
		l.(*stdioListen).stop()
		return true
	})
	c.listening.Wait()
	c.s.conns.m.Delete(c.id)
	return c.Connection.Close()
}

// stdioRequest is one request of a stdio connection, which the dialects may notify the client on
// and ask to be told when the client cancels it (dialects.Conn).
type stdioRequest struct {
	conn *stdioConn
	id   jsonrpc.ID
}

func (r stdioRequest) Notify(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return r.conn.Connection.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
}

// OnCancel does nothing for a request without an id: nothing can cancel it.
func (r stdioRequest) OnCancel(cancel func()) {
	if r.id.IsValid() {
		r.conn.cancels.on(r.id, cancel)
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			return msg, err
		}
		if retry, ok := c.s.rates.allow(mapping.LocalPrincipal, req.Method, c.s.now()); !ok && req.IsCall() {
			if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: errRateLimited(req.Method, retry)}); err != nil {
				return nil, err
			}
			continue
		}
		if req = c.prepare(req); req.Method == listenMethod && req.IsCall() {
			c.serveListen(req)
			continue
		}
		return req, nil
	}
}

// stdioListen is a listen served on a stdio connection: stop ends it with its result.
type stdioListen struct {
	end  chan struct{}
	once sync.Once
}

func (l *stdioListen) stop() { l.once.Do(func() { close(l.end) }) }

// serveListen serves a subscriptions/listen request apart from go-sdk (listen.go): its
// notifications and its answer go on the connection's output. It ends when its tasks have, when
// the client cancels it (notifications/cancelled), or when the connection closes, which the
// server's shutdown does: each time with its result.
func (c *stdioConn) serveListen(req *jsonrpc.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	l := &stdioListen{end: make(chan struct{})}
	c.listens.Store(req.ID, l)
	c.listening.Add(1)
	go func() {
		defer c.listening.Done()
		defer c.listens.Delete(req.ID)
		res, err := c.listen(req, l.end)
		c.answer(req.ID, res, err)
	}()
}

// listen reads the request's params and serves it through the middleware, as go-sdk would; the
// dialects refuse params that are not an object (nil members), or whose _meta is not one.
func (c *stdioConn) listen(req *jsonrpc.Request, end <-chan struct{}) (mcp.Result, error) {
	var members map[string]json.RawMessage
	json.Unmarshal(req.Params, &members)
	p, _ := listenParamsOf(members)
	serve := c.s.middleware(func(ctx context.Context, _ string, listen mcp.Request) (mcp.Result, error) {
		return c.s.listen(ctx, req.ID, listen, c, end)
	})
	return serve(context.Background(), listenMethod, &mcp.ServerRequest[*listenParams]{Params: p})
}

// answer writes the answer to request id, its result named by the server as go-sdk names it.
func (c *stdioConn) answer(id jsonrpc.ID, res mcp.Result, err error) {
	resp := &jsonrpc.Response{ID: id}
	if err == nil {
		meta := res.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		meta[mcp.MetaKeyServerInfo] = c.s.impl
		res.SetMeta(meta)
		resp.Result, err = encodeJSON(res)
	}
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the listen could not be served"}
		}
		resp.Result, resp.Error = nil, rpcErr
	}
	c.Connection.Write(context.Background(), resp)
}

// Send and KeepAlive make the connection a listen's stream (dialects.Stream); stdio needs no
// keep-alive.
func (c *stdioConn) Send(ctx context.Context, method string, params any) error {
	return c.Connection.Write(ctx, notification(method, params))
}

func (c *stdioConn) KeepAlive() error { return nil }

// prepare applies the rewrite to one request and remembers what the connection needs of it.
func (c *stdioConn) prepare(req *jsonrpc.Request) *jsonrpc.Request {
	c.mu.Lock()
	if req.Method == "initialize" {
		c.decl = dialects.Declared(req.Params)
	}
	d := c.decl
	c.mu.Unlock()
	if req.Method == "notifications/cancelled" {
		c.cancelled(req.Params)
	}
	if params, err := hoist(req.Method, req.Params, origin{decl: d, conn: c.id, request: req.ID}); err == nil {
		req.Params = params
	}
	return req
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		if refused, ok := c.refusals.LoadAndDelete(resp.ID); ok {
			msg = &jsonrpc.Response{ID: resp.ID, Error: refused.(*jsonrpc.Error)}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// cancelled does what a dialect asked to be done when the request that notifications/cancelled
// names is cancelled, if anything.
func (c *stdioConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	if cancel, ok := c.cancels.take(id); ok {
		cancel()
	}
	if l, ok := c.listens.Load(id); ok {
		l.(*stdioListen).stop()
	}
}

// of is the request o names on its connection, for the dialects; nil for a request of no
// connection (HTTP, where the client closes the request instead of cancelling it).
func (cs *conns) of(o origin) dialects.Conn {
	if conn, ok := cs.get(o.conn); ok {
		return stdioRequest{conn, o.request}
	}
	return nil
}

// cancels are what to do when a connection's requests are cancelled, by request id, bounded so a
// long connection cannot grow them: the oldest are forgotten (their cancellation then only
// reaches go-sdk, and the client can still stop what they started otherwise).
type cancels struct {
	mu    sync.Mutex
	funcs map[jsonrpc.ID]func()
	order []jsonrpc.ID
}

const maxRemembered = 1024

func newCancels() *cancels { return &cancels{funcs: map[jsonrpc.ID]func(){}} }

func (c *cancels) on(id jsonrpc.ID, cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.funcs[id] = cancel
	c.order = append(c.order, id)
	if len(c.order) > maxRemembered {
		delete(c.funcs, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *cancels) take(id jsonrpc.ID) (func(), bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cancel, ok := c.funcs[id]
	delete(c.funcs, id)
	return cancel, ok
}
