package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/jsonappend"
	"github.com/taskgate/taskgate/internal/strictjson"
)

// The shims of go-sdk v1.8.0's unexported behaviour that the transports repeat to answer as its
// stateless handler would (the fast path, and listens over HTTP): each says the function it
// mirrors, and shims_test.go sends the same inputs through go-sdk to prove it still does.

// plainID reads a request id that go-sdk keeps as it is: a string, or an integer a float64 holds
// exactly (go-sdk reads numbers as float64 and answers with their integer part). It mirrors
// github.com/modelcontextprotocol/go-sdk/jsonrpc.MakeID of the decoded id, v1.8.0
// (TestIDsAndEventsAsGoSDK).
func plainID(raw json.RawMessage) (jsonrpc.ID, bool) {
	var v any
	if raw[0] == '"' {
		s, ok := strictjson.String(raw)
		if !ok {
			return jsonrpc.ID{}, false
		}
		v = s
	} else {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) || (n == 0 && string(raw) != "0") {
			return jsonrpc.ID{}, false
		}
		v = float64(n)
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// acceptsJSONAndEvents reports whether Accept names both media types of a Streamable HTTP answer
// outright (wildcards are left to go-sdk). It mirrors
// github.com/modelcontextprotocol/go-sdk/mcp.streamableAccepts, v1.8.0
// (TestAcceptsJSONAndEventsAsGoSDK).
func acceptsJSONAndEvents(values []string) bool {
	var json, events bool
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(item, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				json = true
			case "text/event-stream":
				events = true
			}
		}
	}
	return json && events
}

// hostServed reports whether go-sdk's DNS-rebinding check lets the request through: on a loopback
// listener, only loopback Hosts are served. It mirrors the check that opens
// github.com/modelcontextprotocol/go-sdk/mcp.(*StreamableHTTPHandler).ServeHTTP, v1.8.0
// (TestHostServedAsGoSDK), which is stricter than the Origin check's isLoopbackHost: "LOCALHOST"
// is not loopback to it.
func hostServed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || local == nil || !sdkLoopback(local.String()) || sdkLoopback(r.Host)
}

// sdkLoopback reports whether addr, a host with or without a port, is loopback as
// github.com/modelcontextprotocol/go-sdk/internal/util.IsLoopback reads it in v1.8.0: "localhost"
// in lower case, or a loopback IP as net/netip parses it.
func sdkLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	ip, err := netip.ParseAddr(host)
	return host == "localhost" || err == nil && ip.IsLoopback()
}

// listenEvents is a listen's HTTP response, written as server-sent events with the framing of
// github.com/modelcontextprotocol/go-sdk/mcp.(*stream).deliverLocked and mcp.writeEvent, and the
// headers of mcp.(*streamableServerConn).servePOST, v1.8.0 (TestListenEventsAsGoSDK).
type listenEvents struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (e *listenEvents) Send(_ context.Context, method string, params any) error {
	data, err := jsonrpc.EncodeMessage(notification(method, params))
	if err != nil {
		return err
	}
	return e.write(slices.Concat([]byte(eventPrefix), data, []byte(eventSuffix)))
}

// KeepAlive writes a comment, which clients skip.
func (e *listenEvents) KeepAlive() error { return e.write([]byte(": keep-alive\n\n")) }

func (e *listenEvents) write(b []byte) error {
	if !e.started {
		h := e.w.Header()
		h["Cache-Control"], h["Connection"], h["Content-Type"] = noCache, keepAlive, eventStream
		e.started = true
	}
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return e.rc.Flush()
}

// The headers of every answer, shared: net/http only reads them.
var (
	noCache     = []string{"no-cache, no-transform"}
	keepAlive   = []string{"keep-alive"}
	eventStream = []string{"text/event-stream"}
)

const eventPrefix, eventSuffix = "event: message\ndata: ", "\n\n"

// eventEncoder writes a result's answer as one server-sent event, in the bytes go-sdk writes:
// JSON without HTML escaping, the members jsonrpc, id and result in that order. It mirrors
// github.com/modelcontextprotocol/go-sdk/mcp.(*stream).deliverLocked and mcp.writeEvent of
// jsonrpc.EncodeMessage's bytes, v1.8.0 (TestIDsAndEventsAsGoSDK).
type eventEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &eventEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// result is the event; it is e's until e's next use. A result is named by impl in its _meta
// (serverInfo, the same encoded as that _meta) unless impl is nil.
func (e *eventEncoder) result(id jsonrpc.ID, res mcp.Result, impl *mcp.Implementation, serverInfo []byte) ([]byte, bool) {
	e.buf.Reset()
	e.buf.WriteString(eventPrefix + `{"jsonrpc":"2.0","id":`)
	switch v := id.Raw().(type) {
	case string:
		e.buf.Write(jsonappend.String(e.buf.AvailableBuffer(), v))
	case int64:
		e.buf.Write(strconv.AppendInt(e.buf.AvailableBuffer(), v, 10))
	default:
		if e.encode(v) != nil {
			return nil, false
		}
	}
	e.buf.WriteString(`,"result":`)
	meta := res.GetMeta()
	if a, ok := res.(jsonAppender); ok && len(meta) == 0 {
		if out, ok := a.AppendJSON(e.buf.AvailableBuffer(), serverInfo); ok {
			e.buf.Write(out)
			e.buf.WriteString("}" + eventSuffix)
			return e.buf.Bytes(), true
		}
	}
	if impl != nil {
		if _, named := meta[mcp.MetaKeyServerInfo]; !named {
			if meta == nil {
				meta = map[string]any{}
			}
			meta[mcp.MetaKeyServerInfo] = impl
			res.SetMeta(meta)
		}
	}
	if e.encode(res) != nil {
		return nil, false
	}
	e.buf.WriteString("}" + eventSuffix)
	return e.buf.Bytes(), true
}

// jsonAppender is a result that writes itself without reflection (the dialects' tasks/get), with
// meta (an encoded object, or nil) as its _meta in place of its own; false for a shape it does not
// write.
type jsonAppender interface {
	AppendJSON(b, meta []byte) ([]byte, bool)
}

// release keeps e for the next answer, unless a large result grew its buffer.
func (e *eventEncoder) release() {
	if e.buf.Cap() <= 64<<10 {
		encoders.Put(e)
	}
}

// encode appends v to the buffer as the answers write it: without HTML escaping or a newline.
func (e *eventEncoder) encode(v any) error {
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	e.buf.Truncate(e.buf.Len() - 1)
	return nil
}

// encodeJSON is v in the bytes of the answers.
func encodeJSON(v any) ([]byte, error) {
	e := encoders.Get().(*eventEncoder)
	defer e.release()
	e.buf.Reset()
	if err := e.encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(e.buf.Bytes()), nil
}

// notification is a notification of method with params, encoded as the answers are.
func notification(method string, params any) *jsonrpc.Request {
	raw, err := encodeJSON(params)
	if err != nil {
		raw = []byte("{}") // the params are taskgate's own types, which always encode
	}
	return &jsonrpc.Request{Method: method, Params: raw}
}

// errorStatus is the HTTP status of an error answer (on 2026-07-28, modern) that has one (SEP-2575), else 0.
// It mirrors github.com/modelcontextprotocol/go-sdk/mcp.extractErrorStatus, v1.8.0
// (TestErrorStatusAsGoSDK).
func errorStatus(modern bool, err error) int {
	var rpcErr *jsonrpc.Error
	if !modern || err == nil || !errors.As(err, &rpcErr) {
		return 0
	}
	switch rpcErr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}
