package dialects

import (
	"context"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the transports (package mcpserver) hand the dialects besides the requests themselves, and
// what both read of a request alike.

// ModernVersion is the protocol version with per-request capabilities.
const ModernVersion = "2026-07-28"

// Via is what the transport of a request tells the dialects of it.
type Via struct {
	// Conn is the connection the request came on when it carries messages of the server's own
	// (stdio); nil over HTTP.
	Conn Conn
	// MaxWait is the longest the request may wait for a workflow; 0: no bound.
	MaxWait time.Duration
}

// Conn is a connection that carries messages of the server's own back to the client of one
// request.
type Conn interface {
	// Notify sends the client a notification.
	Notify(ctx context.Context, method string, params any) error
	// OnCancel has cancel run when the client cancels the request.
	OnCancel(cancel func())
}

// Stream is where one listen's messages go: its HTTP response's event stream, or the stdio
// connection it came on.
type Stream interface {
	Send(ctx context.Context, method string, params any) error
	// KeepAlive tells proxies on the way that the stream is alive.
	KeepAlive() error
}

// Shares bound what requests hold at once of a capacity: each principal within its share, and all
// of them within the whole.
type Shares interface {
	// Take takes n for principal, unless that would exceed its share (own) or the whole.
	Take(principal string, n int64) (ok, own bool)
	// Give gives back what Take took.
	Give(principal string, n int64)
}

// go-sdk decodes tools/call params into a struct that drops unknown top-level fields, so the
// 2025-11-25 `task` and the SEP-1391 `operation` would never reach the dialects; and it decodes
// legacy client capabilities into a struct with no `tasks`. The transports carry both past it in
// _meta (mcpserver/hoist.go): each of CarriedParams under its key, and what a client declared in
// initialize (Declared) under MetaClient.
const (
	metaTask      = "taskgate/task"
	metaOperation = "taskgate/operation"
	MetaClient    = "taskgate/client"
)

// CarriedParams are the params of tools/call the transports carry in _meta, by the key of each.
var CarriedParams = map[string]string{"task": metaTask, "operation": metaOperation}

// ParamsOf is the request's params, or nil when there are none: a request without params holds a
// typed nil pointer, on which the params' own methods panic.
func ParamsOf(req mcp.Request) mcp.Params {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p
}

// PlainCapabilities reports whether client capabilities, as decoded into an any, have the usual
// shape, which any version of go-sdk's type reads: an object of extensions and experimental
// capabilities, each an object.
func PlainCapabilities(v any) bool {
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
