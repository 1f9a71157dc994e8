package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	extensionTasks      = "io.modelcontextprotocol/tasks"
	experimentalSEP1391 = "sep1391"
	modernVersion       = "2026-07-28"
)

// caps is what the caller of one request speaks, read from the request alone (and, on stdio, from
// what the client declared when it initialized the connection).
type caps struct {
	// modern: protocol 2026-07-28 or later, with per-request capabilities.
	modern bool
	// tasks: modern, the tasks extension; legacy, capabilities.tasks in initialize.
	tasks bool
	// sep1391: the experimental capability "sep1391".
	sep1391 bool
	// elicitation: a 2026-07-28 client that declared elicitation, which it answers in rounds
	// (inputRequests in a result, inputResponses in the request that retries it).
	elicitation bool
	// known: the client's declarations are known. False for legacy requests over stateless HTTP,
	// where the SDK keeps nothing of initialize.
	known bool
	// task and operation are the hoisted 2025-11-25 `task` and SEP-1391 `operation` params.
	task, operation json.RawMessage
	// progress is the request's progress token, if any.
	progress any
	// session can carry notifications back within the request.
	session *mcp.ServerSession
	// conn is the id of the stdio connection the request came on, if any, and request the
	// request's id there.
	conn    string
	request jsonrpc.ID
}

// noTasks reports whether the client is known to support no kind of task.
func (c caps) noTasks() bool { return c.known && !c.tasks && !c.sep1391 }

// capsOf is what the caller of the request ctx serves speaks, as the middleware read it.
func capsOf(ctx context.Context) caps {
	if r := requestOf(ctx); r != nil {
		return r.caps
	}
	return caps{}
}

// clientRequest is what every *mcp.ServerRequest[P] offers, whatever its params.
type clientRequest interface {
	ProtocolVersion() string
	ClientCapabilities() *mcp.ClientCapabilities
}

// paramsOf is the request's params, or nil when there are none: a request without params holds a
// typed nil pointer, on which the params' own methods panic.
func paramsOf(req mcp.Request) mcp.Params {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p
}

func capsFromRequest(req mcp.Request) caps {
	var c caps
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		c.session = ss
	}
	var meta map[string]any
	var version string
	var cc *mcp.ClientCapabilities
	if params := paramsOf(req); params != nil {
		meta = params.GetMeta()
		if rp, ok := params.(mcp.RequestParams); ok {
			c.progress = rp.GetProgressToken()
		}
		if r, ok := req.(clientRequest); ok {
			version = r.ProtocolVersion()
			if version >= modernVersion {
				cc = declaredCapabilities(meta, r)
			}
		}
	} else if c.session != nil {
		// go-sdk's own accessors panic on a custom method's absent params: read the session's.
		if ip := c.session.InitializeParams(); ip != nil {
			version, cc = ip.ProtocolVersion, ip.Capabilities
		}
	}
	c.conn, _ = meta[metaConn].(string)
	if id, ok := meta[metaRequest]; ok {
		c.request, _ = jsonrpc.MakeID(id)
	}
	c.task = rawMeta(meta, metaTask)
	c.operation = rawMeta(meta, metaOperation)
	if version >= modernVersion {
		c.modern, c.known = true, true
		if cc != nil {
			_, c.tasks = cc.Extensions[extensionTasks]
			_, c.sep1391 = cc.Experimental[experimentalSEP1391]
			c.elicitation = cc.Elicitation != nil
		}
		return c
	}
	if d := rawMeta(meta, metaClient); d != nil {
		var decl declared
		if json.Unmarshal(d, &decl) == nil {
			c.known, c.tasks, c.sep1391 = true, decl.Tasks, decl.SEP1391
		}
	}
	return c
}

// declaredCapabilities are a 2026-07-28 request's client capabilities. go-sdk's accessor encodes
// and decodes the declaration again, a tenth of a poll's CPU: the usual shape (objects under
// extensions and experimental only, plainCapabilities) is read as it was decoded.
func declaredCapabilities(meta map[string]any, r clientRequest) *mcp.ClientCapabilities {
	decl := meta[mcp.MetaKeyClientCapabilities]
	if !plainCapabilities(decl) {
		return r.ClientCapabilities()
	}
	m := decl.(map[string]any)
	ext, _ := m["extensions"].(map[string]any)
	exp, _ := m["experimental"].(map[string]any)
	return &mcp.ClientCapabilities{Extensions: ext, Experimental: exp}
}

// rawMeta returns a _meta value as JSON, nil when absent.
func rawMeta(meta map[string]any, key string) json.RawMessage {
	v, ok := meta[key]
	if !ok || v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
