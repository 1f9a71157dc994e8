package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/jsonappend"
	"github.com/taskgate/taskgate/internal/strictjson"
	"github.com/taskgate/taskgate/mapping"
)

// The HTTP fast path of tasks/get, the request a polling client sends most, and of the plain start
// of a task.
//
// go-sdk serves each stateless HTTP request through a session of its own: it decodes the body
// about a dozen times (each decode with a buffer of 32 KiB: 450 KB a start), hands the request to
// a connection goroutine and writes the answer through its stream machinery, which costs a poll
// about as much CPU as the engine call itself (test/bench/RESULTS.md). The fast path answers one
// plain tasks/get, and one plain tools/call that starts a task for a 2026-07-28 client of the
// tasks extension, without that transport, and with nothing else of its own: it runs after httpFront (so the in-flight cap, Origin and Host checks,
// authentication, body limits, Mcp-Name check and rate limits have all applied), through the same
// middleware (recovery, capabilities, the caller's context, metrics, logs and traces) and the
// same serveMethod as go-sdk's path, and writes the answer as go-sdk does. Any request it does not
// read unambiguously as one of those, any request go-sdk might refuse, and any call that could
// answer with more than its result (questions before the start, a call that waits, progress),
// goes to go-sdk unchanged. A test sends each request through both paths and compares the
// answers.

// fastMaxBody bounds the bodies the fast path reads: a body this short cannot nest deeper than
// go-sdk accepts (1,000 levels), and a poll is a few hundred bytes.
const fastMaxBody = 2000

// fastMethod is the poll the fast path serves, and fastStart the start.
const fastMethod, fastStart = "tasks/get", "tools/call"

// legacyVersion is the protocol version before per-request capabilities.
const legacyVersion = "2025-11-25"

// fastPath serves the requests it can read as a plain tasks/get, and passes every other request
// to sdk.
func (s *Server) fastPath(sdk http.Handler) http.Handler {
	serve := s.middleware(func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		p, _ := req.GetParams().(*taskParams)
		return s.serveMethod(ctx, s.methods[fastMethod], p)
	})
	checkHost := !s.front.hostsListed()
	serverInfo, err := encodeJSON(mcp.Meta{mcp.MetaKeyServerInfo: s.impl})
	if err != nil {
		panic(err) // an Implementation is strings only
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd := readingOf(r.Context())
		var f *fastRequest
		if rd != nil && (rd.method == fastMethod || rd.method == fastStart || rd.method == listenMethod) {
			f = s.readFast(r, rd, checkHost)
		}
		switch {
		case f == nil:
			sdk.ServeHTTP(w, r)
			return
		case rd.method == listenMethod:
			s.serveListen(w, r, f, serverInfo)
			return
		}
		req := requestOf(r.Context())
		req.answerFirst = true
		res, err := serve(r.Context(), rd.method, f.req)
		f.respond(w, s.impl, serverInfo, res, err)
		if req.answered != nil {
			req.answered()
		}
	})
}

// fastRequest is a request the fast path serves.
type fastRequest struct {
	id     jsonrpc.ID
	modern bool
	req    mcp.Request
}

// readFast reads r, as httpFront read it (rd), as a plain tasks/get or start that go-sdk would
// serve, or gives nil: a POST of one JSON-RPC request object with
// exactly the members jsonrpc ("2.0"), id (a string, or an integer that a float64 holds exactly),
// method and params; for 2026-07-28 (the Mcp-Protocol-Version header), the same version in _meta,
// client capabilities that go-sdk reads, and the method in the Mcp-Method header; for
// 2025-11-25, no version in _meta; the Content-Type and Accept headers go-sdk asks for and no
// Last-Event-ID; and, when go-sdk checks Host headers on a loopback listener, a loopback Host. A
// poll's params have exactly taskId (a string) and, optionally, _meta (an object); a start's are
// those of startParams.
func (s *Server) readFast(r *http.Request, rd *reading, checkHost bool) *fastRequest {
	if len(rd.body) > fastMaxBody && rd.method != listenMethod {
		return nil
	}
	h := r.Header
	version := h.Get("Mcp-Protocol-Version")
	modern := version == modernVersion
	if !modern && version != legacyVersion {
		return nil
	}
	if len(h.Values("Last-Event-ID")) > 0 || !acceptsJSONAndEvents(h.Values("Accept")) {
		return nil
	}
	if ct, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || ct != "application/json" {
		return nil
	}
	if checkHost && !hostServed(r) {
		return nil
	}
	msg := rd.members
	if !onlyMembers(msg, "jsonrpc", "id", "method", "params") || len(msg) != 4 || string(msg["jsonrpc"]) != `"2.0"` {
		return nil
	}
	if modern && h.Get("Mcp-Method") != rd.method {
		return nil
	}
	id, ok := plainID(msg["id"])
	if !ok || rd.params == nil {
		return nil
	}
	var meta mcp.Meta
	var req describedRequest
	extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: h}
	switch rd.method {
	case fastMethod:
		p, ok := pollParams(rd.params)
		if !ok {
			return nil
		}
		meta, req = p.Meta, &mcp.ServerRequest[*taskParams]{Params: p, Extra: extra}
	case fastStart:
		p, ok := s.startParams(rd.params, h)
		if !ok || !modern {
			return nil
		}
		meta, req = p.Meta, &mcp.ServerRequest[*mcp.CallToolParamsRaw]{Params: p, Extra: extra}
	case listenMethod:
		p, ok := listenParamsOf(rd.params)
		if !ok || !modern {
			return nil
		}
		meta, req = p.Meta, &mcp.ServerRequest[*listenParams]{Params: p, Extra: extra}
	}
	metaVersion, versioned := meta[mcp.MetaKeyProtocolVersion]
	if modern {
		info, hasInfo := meta[mcp.MetaKeyClientInfo]
		if metaVersion != modernVersion || !plainCapabilities(meta[mcp.MetaKeyClientCapabilities]) && req.ClientCapabilities() == nil ||
			hasInfo && !plainClientInfo(info) && req.ClientInfo() == nil {
			return nil
		}
	} else if versioned {
		return nil
	}
	return &fastRequest{id: id, modern: modern, req: req}
}

// describedRequest is a request whose client go-sdk reads from its _meta.
type describedRequest interface {
	mcp.Request
	ClientCapabilities() *mcp.ClientCapabilities
	ClientInfo() *mcp.Implementation
}

// pollParams reads a poll's params: exactly taskId (a string) and, optionally, _meta (an object).
func pollParams(params map[string]json.RawMessage) (*taskParams, bool) {
	if !onlyMembers(params, "taskId", "_meta") {
		return nil, false
	}
	p := &taskParams{}
	var ok bool
	if p.TaskID, ok = strictjson.String(params["taskId"]); !ok {
		return nil, false
	}
	if raw, ok := params["_meta"]; ok {
		if p.Meta, ok = metaObject(raw); !ok {
			return nil, false
		}
	}
	return p, true
}

// startParams reads a plain start's params: exactly name (a string that Mcp-Name repeats: a tool
// that may run as a task and asks nothing before it starts), arguments (an object) and _meta (an
// object whose client capabilities declare the tasks extension, and with no progress token), so
// that the call answers at once with its task and nothing else.
func (s *Server) startParams(params map[string]json.RawMessage, h http.Header) (*mcp.CallToolParamsRaw, bool) {
	if !onlyMembers(params, "name", "arguments", "_meta") || len(params) != 3 {
		return nil, false
	}
	name, ok := strictjson.String(params["name"])
	tool, mapped := s.tasks.Mapping().Tool(name)
	if !ok || !mapped || h.Get("Mcp-Name") != name || tool.TaskSupport == mapping.TaskForbidden || len(tool.Ask) > 0 {
		return nil, false
	}
	args := params["arguments"]
	if a := bytes.TrimLeft(args, " \t\r\n"); len(a) == 0 || a[0] != '{' {
		return nil, false // not an object (the body is strict JSON: one that opens with { is one)
	}
	meta, ok := metaObject(params["_meta"])
	if _, progress := meta["progressToken"]; !ok || progress || !declaresTasks(meta[mcp.MetaKeyClientCapabilities]) {
		return nil, false
	}
	return &mcp.CallToolParamsRaw{Meta: meta, Name: name, Arguments: args}, true
}

// declaresTasks reports whether capabilities (as plainCapabilities reads them) declare the tasks
// extension.
func declaresTasks(v any) bool {
	caps, _ := v.(map[string]any)
	extensions, _ := caps["extensions"].(map[string]any)
	_, ok := extensions[extensionTasks]
	return ok
}

// metaObject reads _meta as json.Unmarshal into the params' Meta does (and any JSON object).
func metaObject(raw json.RawMessage) (map[string]any, bool) {
	v, ok := strictjson.Value(raw)
	m, isObject := v.(map[string]any)
	return m, ok && isObject
}

// go-sdk refuses a 2026-07-28 request whose client capabilities or client info it cannot read
// as its own types; asking it costs a poll two decodes of their JSON, each with a buffer of 32 KiB.
// plainCapabilities and plainClientInfo answer for the usual shapes, which any version of those
// types reads, and the fast path asks go-sdk about any other.

// plainCapabilities: an object of extensions and experimental capabilities, each an object.
func plainCapabilities(v any) bool {
	caps, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for name, c := range caps {
		if _, isObject := c.(map[string]any); !isObject || name != "extensions" && name != "experimental" {
			return false
		}
	}
	return true
}

// plainClientInfo: an object of strings among name, title, description, version and websiteUrl.
func plainClientInfo(v any) bool {
	info, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for name, x := range info {
		if _, isString := x.(string); !isString {
			return false
		}
		switch name {
		case "name", "title", "description", "version", "websiteUrl":
		default:
			return false
		}
	}
	return true
}

// onlyMembers reports whether every member of an object is one of names.
func onlyMembers(members map[string]json.RawMessage, names ...string) bool {
	for name := range members {
		if !slices.Contains(names, name) {
			return false
		}
	}
	return true
}

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

// respond writes the answer as go-sdk's stateless handler does: on 2026-07-28 the result names the
// server (impl, encoded as the _meta serverInfo) in _meta, and an error that the protocol maps to
// an HTTP status is a plain JSON body with that status; every other answer is one server-sent event.
func (f *fastRequest) respond(w http.ResponseWriter, impl *mcp.Implementation, serverInfo []byte, res mcp.Result, err error) {
	h := w.Header()
	h["Cache-Control"], h["Connection"] = noCache, keepAlive
	if err == nil {
		e := encoders.Get().(*eventEncoder)
		defer e.release()
		if !f.modern {
			impl, serverInfo = nil, nil
		}
		if event, ok := e.result(f.id, res, impl, serverInfo); ok {
			// The whole answer, sent now: the client need not wait for what the handler does
			// after it (fastPath).
			h["Content-Type"], h["Content-Length"] = eventStream, []string{strconv.Itoa(len(event))}
			w.Write(event)
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
			return
		}
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the result could not be encoded"}
	}
	data, encErr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: f.id, Error: err})
	if encErr != nil {
		http.Error(w, "Internal error: the answer could not be encoded", http.StatusInternalServerError)
		return
	}
	if status := f.errorStatus(err); status != 0 {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(data)
		return
	}
	h["Content-Type"] = eventStream
	w.Write(slices.Concat([]byte(eventPrefix), data, []byte(eventSuffix)))
}

// serveListen serves subscriptions/listen on the request's own event stream (listen.go), through
// the middleware as every request; its result, or its refusal, is answered as respond answers.
func (s *Server) serveListen(w http.ResponseWriter, r *http.Request, f *fastRequest, serverInfo []byte) {
	stream := &listenEvents{w: w, rc: http.NewResponseController(w)}
	serve := s.middleware(func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		releaseBody(ctx) // what the listen keeps of its body is its task ids
		return s.listen(ctx, f.id, req.GetParams().(*listenParams), stream, s.closing)
	})
	res, err := serve(r.Context(), listenMethod, f.req)
	f.respond(w, s.impl, serverInfo, res, err)
}

// listenEvents is a listen's HTTP response, written as server-sent events with the framing of
// github.com/modelcontextprotocol/go-sdk/mcp.(*stream).deliverLocked and mcp.writeEvent, and the
// headers of mcp.(*streamableServerConn).servePOST, v1.8.0 (TestListenEventsAsGoSDK).
type listenEvents struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (e *listenEvents) send(_ context.Context, msg *jsonrpc.Request) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return e.write(slices.Concat([]byte(eventPrefix), data, []byte(eventSuffix)))
}

// keepAlive writes a comment, which clients skip.
func (e *listenEvents) keepAlive() error { return e.write([]byte(": keep-alive\n\n")) }

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
		if out, ok := a.appendJSON(e.buf.AvailableBuffer(), serverInfo); ok {
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

// errorStatus is the HTTP status of a 2026-07-28 error answer that has one (SEP-2575), else 0.
// It mirrors github.com/modelcontextprotocol/go-sdk/mcp.extractErrorStatus, v1.8.0
// (TestErrorStatusAsGoSDK).
func (f *fastRequest) errorStatus(err error) int {
	var rpcErr *jsonrpc.Error
	if !f.modern || err == nil || !errors.As(err, &rpcErr) {
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
