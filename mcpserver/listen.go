package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/strictjson"
)

// subscriptions/listen streams notifications on the listen request's own stream
// (dialects.Router.Listen). go-sdk has a handler of its own for the method, which acknowledges
// only list changes and gives no handler a way to send other notifications on the request's
// stream (its stateless HTTP transport least of all). So the transports answer the method
// themselves, as they answer polls on the fast path: the HTTP front on the request's event stream
// (fastpath.go), a stdio connection on its output (stdio.go); both through the same middleware as
// every request (middleware.go, Server.listen), and this file is what they share.

const listenMethod = "subscriptions/listen"

// listenParams are subscriptions/listen's params as read, their members for the dialects to judge.
type listenParams struct {
	mcp.ParamsBase
	members map[string]json.RawMessage
}

// listenParamsOf reads params, with their _meta; false when the _meta is not an object.
func listenParamsOf(members map[string]json.RawMessage) (*listenParams, bool) {
	p := &listenParams{members: members}
	if raw, ok := members["_meta"]; ok {
		meta, ok := strictjson.Object(raw)
		if !ok {
			return p, false
		}
		p.Meta = meta
	}
	return p, true
}
