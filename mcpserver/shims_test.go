package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The shims of shims.go mirror unexported behaviour of go-sdk. Each test here sends the same
// inputs through go-sdk's own StreamableHTTPHandler and through the shim, and requires that they
// agree, so that a go-sdk release that changes the behaviour fails a test.

var sdkImpl = &mcp.Implementation{Name: "sdk", Version: "1"}

// sdkAnswers is go-sdk's stateless handler over a server whose tools/list answers answer(ctx, req).
func sdkAnswers(answer func(context.Context, mcp.Request) (mcp.Result, error)) http.Handler {
	s := mcp.NewServer(sdkImpl, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				return answer(ctx, req)
			}
			return next(ctx, method, req)
		}
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

const sdkModernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// listTo sends a tools/list with the raw id to h, modern or of 2025-11-25, from a client that accepts
// accept, with the Host header host, over a listener at local (none if nil).
func listTo(h http.Handler, rawID string, modern bool, accept []string, host string, local net.Addr) *httptest.ResponseRecorder {
	body, version := `{"jsonrpc":"2.0","id":`+rawID+`,"method":"tools/list"}`, legacyVersion
	if modern {
		body, version = `{"jsonrpc":"2.0","id":`+rawID+`,"method":"tools/list","params":{"_meta":`+sdkModernMeta+`}}`, modernVersion
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": accept, "Mcp-Protocol-Version": {version}, "Mcp-Method": {"tools/list"}}
	r.Host = host
	if local != nil {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var bothMediaTypes = []string{"application/json, text/event-stream"}

func pong(context.Context, mcp.Request) (mcp.Result, error) { return &mcp.ListRootsResult{}, nil }

// TestErrorStatusAsGoSDK: errorStatus mirrors go-sdk's mcp.extractErrorStatus (v1.8.0): the
// status go-sdk answers an error with is the one errorStatus gives, 200 (an event) where it gives 0.
func TestErrorStatusAsGoSDK(t *testing.T) {
	codes := []int64{jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams,
		jsonrpc.CodeInternalError, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities,
		-32020, mcp.CodeResourceNotFound, -32000, -1, 0, 1, 404}
	for _, code := range codes {
		for _, wrapped := range []bool{false, true} {
			var err error = &jsonrpc.Error{Code: code, Message: "refused"}
			if wrapped {
				err = fmt.Errorf("while serving: %w", err)
			}
			h := sdkAnswers(func(context.Context, mcp.Request) (mcp.Result, error) { return nil, err })
			for _, modern := range []bool{false, true} {
				w := listTo(h, "1", modern, bothMediaTypes, "", nil)
				want := w.Code
				if want == http.StatusOK {
					want = 0
				}
				if got := errorStatus(modern, err); got != want {
					t.Errorf("code %d (wrapped: %v, modern: %v): errorStatus %d, go-sdk answered %d %s", code, wrapped, modern, got, w.Code, w.Body)
				}
			}
		}
	}
}

// TestHostServedAsGoSDK: hostServed mirrors the DNS-rebinding check of go-sdk's
// mcp.(*StreamableHTTPHandler).ServeHTTP (v1.8.0): go-sdk refuses (403) the Hosts that hostServed
// does not serve, on each kind of listener.
func TestHostServedAsGoSDK(t *testing.T) {
	h := sdkAnswers(pong)
	hosts := []string{"127.0.0.1:8080", "127.0.0.1", "127.1.2.3:80", "localhost", "localhost:8080", "LOCALHOST:8080", "Localhost",
		"[::1]:8080", "[::1]", "::1", "[::ffff:127.0.0.1]:80", "0:0:0:0:0:0:0:1", "127.0.0.1.nip.io", "taskgate.example",
		"taskgate.example:8080", "10.0.0.1", "", "[::1%lo]:80", "localhost.", "[localhost]:80", "127.0.0.01"}
	listeners := []net.Addr{nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, &net.TCPAddr{IP: net.IPv6loopback, Port: 8080},
		&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}, &net.UnixAddr{Name: "/tmp/mcp.sock", Net: "unix"}}
	for _, local := range listeners {
		for _, host := range hosts {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Host = host
			if local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
			}
			w := listTo(h, "1", false, bothMediaTypes, host, local)
			if refused := w.Code == http.StatusForbidden; hostServed(r) == refused {
				t.Errorf("Host %q on %v: hostServed %v, go-sdk answered %d %s", host, local, hostServed(r), w.Code, w.Body)
			}
		}
	}
}

// TestAcceptsJSONAndEventsAsGoSDK: acceptsJSONAndEvents mirrors go-sdk's mcp.streamableAccepts
// (v1.8.0) but for wildcards, which it leaves to go-sdk: go-sdk serves every Accept that it
// accepts, and accepts as go-sdk does every Accept without a wildcard.
func TestAcceptsJSONAndEventsAsGoSDK(t *testing.T) {
	h := sdkAnswers(pong)
	accepts := [][]string{nil, {""}, {"application/json, text/event-stream"}, {"text/event-stream,application/json"},
		{"application/json", "text/event-stream"}, {"APPLICATION/JSON, Text/Event-Stream"}, {"application/json;q=0.9, text/event-stream;charset=utf-8"},
		{" application/json ; q=1 ,  text/event-stream "}, {"application/json"}, {"text/event-stream"}, {"application/json-seq, text/event-streams"},
		{"application/json text/event-stream"}, {"application/json;text/event-stream"}, {"*/*"}, {"application/*, text/*"},
		{"application/json, text/*"}, {"*/*;q=0"}, {"application/json, text/event-stream;q=0"}, {`application/json, text/event-stream;x="a,b"`}}
	for _, accept := range accepts {
		w := listTo(h, "1", false, accept, "", nil)
		served := w.Code == http.StatusOK
		got := acceptsJSONAndEvents(accept)
		wildcard := strings.Contains(strings.Join(accept, ","), "*")
		if got && !served || !wildcard && got != served {
			t.Errorf("Accept %q: acceptsJSONAndEvents %v, go-sdk answered %d %s", accept, got, w.Code, w.Body)
		}
	}
}

// TestIDsAndEventsAsGoSDK: plainID mirrors go-sdk's reading of an id (jsonrpc.MakeID of what its decoder
// reads, v1.8.0) for the ids it keeps: go-sdk answers each with the id plainID reads. And the
// result's event, as eventEncoder writes it (the framing of go-sdk's stream: its
// mcp.(*stream).deliverLocked and mcp.writeEvent, v1.8.0), is go-sdk's to the byte, with and without
// the server named in _meta.
func TestIDsAndEventsAsGoSDK(t *testing.T) {
	result := func() mcp.Result {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<b>&</b> é \u2028"}}, StructuredContent: map[string]any{"z": 1, "a": "\u00e9"}}
	}
	h := sdkAnswers(func(context.Context, mcp.Request) (mcp.Result, error) { return result(), nil })
	ids := []string{"0", "1", "-1", "42", "9007199254740992", "-9007199254740992", "9007199254740993", `""`, `"a-b"`,
		`"<a\u0026b>\u00e9\""`, `"\ud83d\ude00"`, `"\u2028"`, "1.5", "1e2", "-0", "1.0", "null", "true", "{}", "[]",
		"18446744073709551616", "1e300"}
	kept := 0
	for _, raw := range ids {
		id, ok := plainID(json.RawMessage(raw))
		if !ok {
			continue
		}
		kept++
		for _, modern := range []bool{false, true} {
			w := listTo(h, raw, modern, bothMediaTypes, "", nil)
			var answered struct{ ID json.RawMessage }
			if err := json.Unmarshal(firstEventData(w.Body.String()), &answered); err != nil {
				t.Fatalf("id %s: go-sdk answered %d %s", raw, w.Code, w.Body)
			}
			if want, _ := encodeJSON(id.Raw()); string(want) != string(answered.ID) {
				t.Errorf("id %s: plainID reads %v, go-sdk answered with %s", raw, id.Raw(), answered.ID)
			}
			impl, serverInfo := (*mcp.Implementation)(nil), []byte(nil)
			if modern {
				impl = sdkImpl
				serverInfo, _ = encodeJSON(mcp.Meta{mcp.MetaKeyServerInfo: sdkImpl})
			}
			e := encoders.Get().(*eventEncoder)
			event, ok := e.result(id, result(), impl, serverInfo)
			if got := string(event); !ok || got != w.Body.String() {
				t.Errorf("id %s (modern: %v): the fast path's event\n%q\ngo-sdk's\n%q", raw, modern, got, w.Body)
			}
			e.release()
			if got := w.Header().Get("Content-Type"); got != eventStream[0] {
				t.Errorf("go-sdk's Content-Type %q, the fast path's %q", got, eventStream[0])
			}
		}
	}
	if kept < 10 {
		t.Fatalf("plainID kept %d of the ids", kept)
	}
}

// TestListenEventsAsGoSDK: a notification on a listen's stream (listenEvents) is framed, and its
// stream's headers set, as go-sdk's stream writes a notification (mcp.(*stream).deliverLocked and
// mcp.(*streamableServerConn).servePOST, v1.8.0).
func TestListenEventsAsGoSDK(t *testing.T) {
	params := &mcp.ProgressNotificationParams{ProgressToken: "p", Message: "<b>&</b> é \u2028", Progress: 1, Total: 2}
	h := sdkAnswers(func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
		if err := req.GetSession().(*mcp.ServerSession).NotifyProgress(ctx, params); err != nil {
			return nil, err
		}
		return &mcp.ListRootsResult{}, nil
	})
	want := listTo(h, "1", false, bothMediaTypes, "", nil)
	rec := httptest.NewRecorder()
	stream := &listenEvents{w: rec, rc: http.NewResponseController(rec)}
	if err := stream.Send(context.Background(), "notifications/progress", params); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(want.Body.String(), "\n\n"); rec.Body.String() != first+"\n\n" {
		t.Errorf("the listen's event\n%q\ngo-sdk's\n%q", rec.Body, first+"\n\n")
	}
	for _, name := range []string{"Content-Type", "Cache-Control", "Connection"} {
		if got, sdk := rec.Header().Values(name), want.Header().Values(name); strings.Join(got, ",") != strings.Join(sdk, ",") {
			t.Errorf("%s: the listen's %q, go-sdk's %q", name, got, sdk)
		}
	}
}

func firstEventData(body string) []byte {
	_, data, found := strings.Cut(body, "data: ")
	if !found {
		return nil
	}
	data, _, _ = strings.Cut(data, "\n")
	return []byte(data)
}
