package dialects

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	extensionTasks      = "io.modelcontextprotocol/tasks"
	experimentalSEP1391 = "sep1391"
)

// caps is what the caller of one request speaks, read from the request alone (and, on stdio, from
// what the client declared when it initialized the connection), and what its transport said of it.
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
	// task and operation are the carried 2025-11-25 `task` and SEP-1391 `operation` params.
	task, operation json.RawMessage
	// progress is the request's progress token, if any.
	progress any
	// session can carry notifications back within the request.
	session *mcp.ServerSession
	Via
}

// noTasks reports whether the client is known to support no kind of task.
func (c caps) noTasks() bool { return c.known && !c.tasks && !c.sep1391 }

type capsKey struct{}

// capsOf is what the caller of the request ctx serves speaks, as Read read it.
func capsOf(ctx context.Context) caps {
	if c, ok := ctx.Value(capsKey{}).(*caps); ok {
		return *c
	}
	return caps{}
}

// dialectName is how the caller of method speaks of tasks.
func (c caps) dialectName(method string) string {
	switch {
	case c.operation != nil || strings.HasPrefix(method, "tools/async/"):
		return "sep1391"
	case c.modern && c.tasks:
		return "extension"
	case !c.modern && (c.tasks || c.task != nil || strings.HasPrefix(method, "tasks/")):
		return "2025-11-25"
	case c.sep1391:
		return "sep1391"
	}
	return "none"
}

// clientRequest is what every *mcp.ServerRequest[P] offers, whatever its params.
type clientRequest interface {
	ProtocolVersion() string
	ClientCapabilities() *mcp.ClientCapabilities
}

func capsFromRequest(req mcp.Request) caps {
	var c caps
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		c.session = ss
	}
	var meta map[string]any
	var version string
	var cc *mcp.ClientCapabilities
	if params := ParamsOf(req); params != nil {
		meta = params.GetMeta()
		if rp, ok := params.(mcp.RequestParams); ok {
			c.progress = rp.GetProgressToken()
		}
		if r, ok := req.(clientRequest); ok {
			version = r.ProtocolVersion()
			if version >= ModernVersion {
				cc = declaredCapabilities(meta, r)
			}
		}
	} else if c.session != nil {
		// go-sdk's own accessors panic on a custom method's absent params: read the session's.
		if ip := c.session.InitializeParams(); ip != nil {
			version, cc = ip.ProtocolVersion, ip.Capabilities
		}
	}
	c.task = rawMeta(meta, metaTask)
	c.operation = rawMeta(meta, metaOperation)
	if version >= ModernVersion {
		c.modern, c.known = true, true
		if cc != nil {
			_, c.tasks = cc.Extensions[extensionTasks]
			_, c.sep1391 = cc.Experimental[experimentalSEP1391]
			c.elicitation = cc.Elicitation != nil
		}
		return c
	}
	if d := rawMeta(meta, MetaClient); d != nil {
		var decl declared
		if json.Unmarshal(d, &decl) == nil {
			c.known, c.tasks, c.sep1391 = true, decl.Tasks, decl.SEP1391
		}
	}
	return c
}

// declaredCapabilities are a 2026-07-28 request's client capabilities. go-sdk's accessor encodes
// and decodes the declaration again, a tenth of a poll's CPU: the usual shape (objects under
// extensions and experimental only, PlainCapabilities) is read as it was decoded.
func declaredCapabilities(meta map[string]any, r clientRequest) *mcp.ClientCapabilities {
	decl := meta[mcp.MetaKeyClientCapabilities]
	if !PlainCapabilities(decl) {
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

// declared is what a client declared in its initialize request, on a connection that has one.
type declared struct {
	Tasks   bool `json:"tasks"`
	SEP1391 bool `json:"sep1391"`
}

// Declared is what an initialize request's params declare, as the transports carry it.
func Declared(initialize json.RawMessage) json.RawMessage {
	var p struct {
		Capabilities struct {
			Tasks        json.RawMessage            `json:"tasks"`
			Experimental map[string]json.RawMessage `json:"experimental"`
		} `json:"capabilities"`
	}
	json.Unmarshal(initialize, &p)
	_, sep := p.Capabilities.Experimental[experimentalSEP1391]
	b, _ := json.Marshal(declared{Tasks: len(p.Capabilities.Tasks) > 0 && string(p.Capabilities.Tasks) != "null", SEP1391: sep})
	return b
}
