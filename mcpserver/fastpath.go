package mcpserver

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mcpserver/dialects"
)

// The HTTP fast path of the requests a client sends most, which the dialects answer with one
// result and nothing before it: a plain tasks/get, and a plain start of a task.
//
// go-sdk serves each stateless HTTP request through a session of its own: it decodes the body
// about a dozen times (each decode with a buffer of 32 KiB: 450 KB a start), hands the request to
// a connection goroutine and writes the answer through its stream machinery, which costs a poll
// about as much CPU as the engine call itself (test/bench/RESULTS.md). The fast path answers one
// request that the dialects read as one they answer so (fastReader) without that transport, and
// with nothing else of its own: it runs after httpFront (so the in-flight cap, Origin and Host
// checks, authentication, body limits, Mcp-Name check and rate limits have all applied), through
// the same middleware (recovery, capabilities, the caller's context, metrics, logs and traces)
// and the same dialects as go-sdk's path, and writes the answer as go-sdk does. Any request the
// dialects do not read unambiguously as one of those, and any request go-sdk might refuse, goes
// to go-sdk unchanged. A test sends each request through both paths and compares the answers.

// fastMaxBody bounds the bodies the fast path reads: a body this short cannot nest deeper than
// go-sdk accepts (1,000 levels), and a poll is a few hundred bytes.
const fastMaxBody = 2000

// modernVersion and legacyVersion are the protocol versions the fast path serves: with
// per-request capabilities, and the one before.
const modernVersion, legacyVersion = dialects.ModernVersion, "2025-11-25"

// fastReader is what the dialects (dialects.Router) let the fast path serve.
type fastReader interface {
	// ReadFast reads the params of a request of method on protocol version as one the dialects
	// answer with one result and nothing before it, extra its transport's part; false for any
	// other.
	ReadFast(version, method string, params map[string]json.RawMessage, extra *mcp.RequestExtra) (mcp.Request, bool)
	// TaskMethod serves a task method of a request ReadFast read, below the middleware.
	TaskMethod(ctx context.Context, method string, req mcp.Request) (mcp.Result, error)
}

// fastPath serves the requests it can read as ones the dialects answer at once, and listens
// (listen.go), and passes every other request to sdk.
func (s *Server) fastPath(sdk http.Handler) http.Handler {
	var fast fastReader = s.dialects
	serve := s.middleware(fast.TaskMethod)
	checkHost := !s.front.hostsListed()
	serverInfo, err := encodeJSON(mcp.Meta{mcp.MetaKeyServerInfo: s.impl})
	if err != nil {
		panic(err) // an Implementation is strings only
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd := readingOf(r.Context())
		var f *fastRequest
		if rd != nil && rd.method != "" {
			f = readFast(fast, r, rd, checkHost)
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

// readFast reads r, as httpFront read it (rd), as a request that the dialects answer at once
// (ReadFast) and that go-sdk would serve, or as a listen, or gives nil: a POST of one JSON-RPC
// request object with exactly the members jsonrpc ("2.0"), id (a string, or an integer that a
// float64 holds exactly), method and params; for 2026-07-28 (the Mcp-Protocol-Version header),
// the same version in _meta, client capabilities that go-sdk reads, and the method in the
// Mcp-Method header; for 2025-11-25, no version in _meta; the Content-Type and Accept headers
// go-sdk asks for and no Last-Event-ID; the tool's name in the Mcp-Name header of a tools/call;
// and, when go-sdk checks Host headers on a loopback listener, a loopback Host.
func readFast(fast fastReader, r *http.Request, rd *reading, checkHost bool) *fastRequest {
	if len(rd.body) > fastMaxBody && rd.method != listenMethod || rd.params == nil {
		return nil
	}
	h := r.Header
	version := h.Get("Mcp-Protocol-Version")
	modern := version == modernVersion
	if !modern && version != legacyVersion {
		return nil
	}
	extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: h}
	var req mcp.Request
	if rd.method == listenMethod {
		p, ok := listenParamsOf(rd.params)
		if !ok || !modern {
			return nil
		}
		req = &mcp.ServerRequest[*listenParams]{Params: p, Extra: extra}
	} else if read, ok := fast.ReadFast(version, rd.method, rd.params, extra); ok {
		req = read
	} else {
		return nil
	}
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && h.Get("Mcp-Name") != p.Name {
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
	msg := rd.members // jsonrpc, id, params and the method rd read, no more
	if len(msg) != 4 || string(msg["jsonrpc"]) != `"2.0"` || len(msg["id"]) == 0 {
		return nil
	}
	if modern && h.Get("Mcp-Method") != rd.method {
		return nil
	}
	id, ok := plainID(msg["id"])
	if !ok {
		return nil
	}
	meta := req.GetParams().GetMeta()
	metaVersion, versioned := meta[mcp.MetaKeyProtocolVersion]
	if modern {
		described := req.(describedRequest) // as every *mcp.ServerRequest is
		info, hasInfo := meta[mcp.MetaKeyClientInfo]
		if metaVersion != modernVersion || !dialects.PlainCapabilities(meta[mcp.MetaKeyClientCapabilities]) && described.ClientCapabilities() == nil ||
			hasInfo && !plainClientInfo(info) && described.ClientInfo() == nil {
			return nil
		}
	} else if versioned {
		return nil
	}
	return &fastRequest{id: id, modern: modern, req: req}
}

// describedRequest is a request whose client go-sdk reads from its _meta.
type describedRequest interface {
	ClientCapabilities() *mcp.ClientCapabilities
	ClientInfo() *mcp.Implementation
}

// go-sdk refuses a 2026-07-28 request whose client capabilities or client info it cannot read
// as its own types; asking it costs a poll two decodes of their JSON, each with a buffer of 32 KiB.
// dialects.PlainCapabilities and plainClientInfo answer for the usual shapes, which any version
// of those types reads, and the fast path asks go-sdk about any other.

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
	if status := errorStatus(f.modern, err); status != 0 {
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
		return s.listen(ctx, f.id, req, stream, s.closing)
	})
	res, err := serve(r.Context(), listenMethod, f.req)
	f.respond(w, s.impl, serverInfo, res, err)
}
