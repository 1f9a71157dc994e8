package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver/dialects"
	"github.com/taskgate/taskgate/tasks"
)

// HTTPAuth is how HTTP callers authenticate (go-sdk's auth middleware): a request without a token
// Verify accepts, or without Scopes, is refused with 401 and a Bearer challenge.
type HTTPAuth struct {
	Verify auth.TokenVerifier
	// Scopes are required of every caller.
	Scopes []string
	// ResourceMetadataURL is named in the challenge, for clients to find the authorization server
	// (RFC 9728).
	ResourceMetadataURL string
	// ClockSkew tolerates clocks that disagree by this much on a token's expiry.
	ClockSkew time.Duration
}

// httpFront is the HTTP transport's entry, in front of go-sdk and the fast path.
type httpFront struct {
	log            *slog.Logger
	auth           *HTTPAuth
	origins, hosts []string
	// rates, inFlight, bodies and maxWait enforce Config.Limits.
	rates            *rateLimits
	inFlight, bodies *shares
	// unauthenticated bounds the bytes of small bodies read before their caller is authenticated.
	unauthenticated *shares
	maxWait         time.Duration
	now             func() time.Time
	// tool is the mapped tool of a name, for the step-up challenge.
	tool func(name string) (*mapping.Tool, bool)
}

// hostsListed reports whether the operator listed the Host headers served, which replaces
// go-sdk's check of loopback Hosts on a loopback listener.
func (f *httpFront) hostsListed() bool { return len(f.hosts) > 0 }

// serve is the HTTP entry. Before the SDK sees a request it refuses, each with its own
// status: a browser page of another origin or a Host the operator did not list (403), a small
// body that is not one JSON-RPC message every decoder reads alike, or a batch (400, before
// authentication), a caller without a valid bearer token when auth is on (401, by go-sdk's auth
// middleware), a principal with its share of the requests in flight (429) or of the body bytes in
// memory (429), more requests (503) or body bytes (503) than the server holds at once, more body
// than a message may have (413), a larger body that is not one message (400), a task method whose
// Mcp-Name header names another task (400, -32020), and a principal over its rate (429). It reads
// each body once (reading): every check judges that reading, and go-sdk gets the bytes it was
// made from. It rewrites the requests that carry params the SDK would drop, and carries the
// client's lifetime and the longest a request may wait to the handlers.
//
// A body of at most smallBody bytes is read and judged before authentication, so that no token
// is verified for a message that would be refused anyway. Larger bodies, and small ones while
// the unauthenticated callers' bytes fill their pool, are read after authentication, into the
// principal's share: one caller's trickled uploads, authenticated or not, never hold the memory
// that the others' polls need.
func (f *httpFront) serve(next http.Handler) http.Handler {
	inner := f.request(next)
	if a := f.auth; a != nil {
		inner = auth.RequireBearerToken(a.Verify, &auth.RequireBearerTokenOptions{
			Scopes: a.Scopes, ResourceMetadataURL: a.ResourceMetadataURL, ClockSkew: a.ClockSkew,
		})(principalFromToken(inner))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				f.log.Error("panic while serving an HTTP request", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				writeError(w, http.StatusInternalServerError, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the request could not be served"})
			}
		}()
		if !originAllowed(r, f.origins) || !hostAllowed(r, f.hosts) {
			http.Error(w, "Forbidden: this Origin or Host is not allowed; the operator lists the allowed ones", http.StatusForbidden)
			return
		}
		if f.auth != nil {
			var refused bool
			if r, refused = f.readBeforeAuth(w, r); refused {
				return
			}
		}
		inner.ServeHTTP(bearerChallenge{w}, r)
	})
}

// smallBody is the largest body read before its caller is authenticated.
const smallBody = 64 << 10

// readBeforeAuth reads a small body and refuses it (400) if it is not one message. A body it
// reads is handed on with its reading, which request takes as its own.
func (f *httpFront) readBeforeAuth(w http.ResponseWriter, r *http.Request) (_ *http.Request, refused bool) {
	if r.Method != http.MethodPost || r.Body == nil || r.ContentLength > smallBody {
		return r, false
	}
	n := r.ContentLength
	if n < 0 {
		n = smallBody
	}
	if ok, _ := f.unauthenticated.Take("", n); !ok {
		return r, false
	}
	defer f.unauthenticated.Give("", n)
	// A copy: net/http judges by the Body of the request it made whether the connection can
	// serve another request; a body replaced there would let it take the rest of one it did not
	// read for the next request.
	r = r.WithContext(r.Context())
	body, err := io.ReadAll(io.LimitReader(r.Body, smallBody+1))
	switch {
	case err != nil:
		return r, true // the client went away, or sent less than it announced
	case len(body) > smallBody:
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return r, false
	}
	rd, refusal := readMessage(body)
	if refusal != nil {
		writeError(w, http.StatusBadRequest, nil, refusal)
		return r, true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return r.WithContext(context.WithValue(r.Context(), requestKey{}, &request{reading: rd})), false
}

// principalFromToken puts the principal of the verified bearer token into the request.
func principalFromToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := auth.TokenInfoFromContext(r.Context()); info != nil && info.UserID != "" {
			r = r.WithContext(tasks.WithPrincipal(r.Context(), info.UserID, info.Scopes...))
		}
		next.ServeHTTP(w, r)
	})
}

// bearerChallenge adds the Bearer challenge to a 401 that has none (go-sdk's middleware writes
// one only when there is resource metadata or a scope to name).
type bearerChallenge struct{ http.ResponseWriter }

func (b bearerChallenge) WriteHeader(status int) {
	if status == http.StatusUnauthorized && b.Header().Get("WWW-Authenticate") == "" {
		b.Header().Set("WWW-Authenticate", `Bearer realm="taskgate"`)
	}
	b.ResponseWriter.WriteHeader(status)
}

func (b bearerChallenge) Flush() {
	if f, ok := b.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (b bearerChallenge) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// request serves one request of a caller that may be served.
func (f *httpFront) request(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := tasks.Principal(r.Context())
		if ok, own := f.inFlight.Take(principal, 1); !ok {
			refuseHeld(w, own, principal, fmt.Sprintf("requests in flight (%d at once)", f.inFlight.each), "too many requests in flight")
			return
		}
		defer f.inFlight.Give(principal, 1)
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > maxMessage {
			writeError(w, http.StatusRequestEntityTooLarge, nil, errTooLarge)
			return
		}
		rd := readingOf(r.Context())
		read := rd != nil
		var body []byte
		var held int64
		var err error
		if read {
			body, held, err = rd.body, int64(len(rd.body)), f.takeBody(principal, int64(len(rd.body)))
		} else {
			body, held, err = f.readBody(w, r, principal)
		}
		var giveOnce sync.Once
		give := func() { giveOnce.Do(func() { f.bodies.Give(principal, held) }) }
		defer give()
		var tooLarge *http.MaxBytesError
		switch {
		case errors.Is(err, errOwnBodies), errors.Is(err, errAllBodies):
			refuseHeld(w, errors.Is(err, errOwnBodies), principal, fmt.Sprintf("request body bytes in memory (%d at once)", f.bodies.each), "too many request bodies in memory")
			return
		case errors.As(err, &tooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, nil, errTooLarge)
			return
		case err != nil:
			return // the client went away, or sent less than it announced
		}
		if !read {
			var refusal *jsonrpc.Error
			if rd, refusal = readMessage(body); refusal != nil {
				writeError(w, http.StatusBadRequest, nil, refusal)
				return
			}
		}
		if rd.method != "" {
			if err := dialects.MismatchedName(r.Header.Get("Mcp-Name"), rd.method, rd.params); err != nil {
				writeError(w, http.StatusBadRequest, rd.id(), err)
				return
			}
			if denied := f.forbiddenTool(w, r, rd); denied {
				return
			}
			if retry, ok := f.rates.allow(tasks.Principal(r.Context()), rd.method, f.now()); !ok {
				w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(retry.Seconds()))))
				writeError(w, http.StatusTooManyRequests, rd.id(), errRateLimited(rd.method, retry))
				return
			}
			if needsHoist(rd) {
				if hoisted, err := hoist(rd.method, rd.members["params"], origin{}); err == nil {
					rd.setParams(hoisted)
				}
			}
		}
		r.Body = &readingBody{rd: rd}
		r.ContentLength = int64(len(rd.body))
		ctx, req := withRequest(r.Context())
		req.reading, req.clientGone, req.maxWait = rd, r.Context(), f.maxWait
		req.releaseBody = func() {
			give()
			rd.release()
		}
		req.refusal = &methodNotFound{}
		next.ServeHTTP(refusalWriter{w, req.refusal}, r.WithContext(ctx))
	})
}

// forbiddenTool answers 403 to a tools/call of a tool the caller sees but lacks scopes for, with
// the scopes in the challenge, so that an OAuth client can ask for them (step-up authorization).
// A tool hidden from the caller is left to the handlers, which answer as for an unknown one.
func (f *httpFront) forbiddenTool(w http.ResponseWriter, r *http.Request, rd *reading) bool {
	if rd.method != "tools/call" {
		return false
	}
	tool, found := f.tool(rd.param("name"))
	if !found {
		return false
	}
	visible, missing := tasks.Access(r.Context(), tool)
	if !visible || len(missing) == 0 {
		return false
	}
	challenge := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, strings.Join(missing, " "))
	if a := f.auth; a != nil && a.ResourceMetadataURL != "" {
		challenge += fmt.Sprintf(`, resource_metadata=%q`, a.ResourceMetadataURL)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeError(w, http.StatusForbidden, rd.id(), dialects.ErrNotPermitted(r.Context(), tool, missing))
	return true
}

var errTooLarge = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
	Message: fmt.Sprintf("Invalid Request: the body is longer than the limit of %d bytes", maxMessage)}

var (
	errOwnBodies = errors.New("the principal's share of the body budget is held")
	errAllBodies = errors.New("the body budget is held")
)

// bodyChunk is what a body of unknown length takes of the budget at a time, as it arrives.
const bodyChunk = 64 << 10

// readBody reads a body of at most maxMessage bytes, holding its bytes in principal's share of the
// body budget (and so in the whole) while they are in memory: its announced length before it is
// read, else chunk by chunk as it arrives. held is what it took, to give back once the request
// is served, whatever err says.
func (f *httpFront) readBody(w http.ResponseWriter, r *http.Request, principal string) (body []byte, held int64, err error) {
	defer r.Body.Close()
	take := func(n int64) error {
		if err := f.takeBody(principal, n); err != nil {
			return err
		}
		held += n
		return nil
	}
	in := http.MaxBytesReader(w, r.Body, maxMessage)
	if n := r.ContentLength; n >= 0 {
		if err := take(n); err != nil {
			return nil, held, err
		}
		// One byte more than announced, to see the end: net/http's body ends at the length.
		buf := make([]byte, n+1)
		switch read, err := io.ReadFull(in, buf); {
		case read == int(n) && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
			return buf[:n], held, nil
		case err == nil:
			return nil, held, io.ErrUnexpectedEOF // more than announced
		default:
			return nil, held, err
		}
	}
	var buf bytes.Buffer
	for {
		if err := take(bodyChunk); err != nil {
			return nil, held, err
		}
		n, err := io.CopyN(&buf, in, bodyChunk)
		switch {
		case errors.Is(err, io.EOF):
			return buf.Bytes(), held, nil
		case err != nil:
			return nil, held, err
		case n < bodyChunk:
			return buf.Bytes(), held, nil
		}
	}
}

// takeBody takes n bytes of the body budget for principal, or says whose share is held.
func (f *httpFront) takeBody(principal string, n int64) error {
	if ok, own := f.bodies.Take(principal, n); !ok {
		if own {
			return errOwnBodies
		}
		return errAllBodies
	}
	return nil
}

// refuseHeld answers a request that would exceed what its principal may hold at once (own: 429,
// the principal may retry once one of its requests is answered) or what the server holds (503).
func refuseHeld(w http.ResponseWriter, own bool, principal, share, whole string) {
	if !own {
		busy(w, whole)
		return
	}
	w.Header().Set("Retry-After", "1")
	data, _ := json.Marshal(map[string]any{"retryable": true, "retryAfterMs": 1000})
	writeError(w, http.StatusTooManyRequests, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: fmt.Sprintf("Too many requests of %s at once: it holds its share of the %s; retry once one of them is answered", principal, share)})
}

// busy answers 503: the request was not served, and may be sent again in a moment.
func busy(w http.ResponseWriter, why string) {
	w.Header().Set("Retry-After", "1")
	data, _ := json.Marshal(map[string]any{"retryable": true, "retryAfterMs": 1000})
	writeError(w, http.StatusServiceUnavailable, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: "Server busy: " + why + "; retry in a second"})
}

func writeError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(errorResponse(id, e))
}
