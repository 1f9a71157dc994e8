package dialects

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/strictjson"
)

// What the HTTP fast path (mcpserver/fastpath.go) may serve without go-sdk's transport: a request
// that a dialect answers with one result and nothing before it (no question, no wait, no
// progress), read from its params alone. A poll (tasks/get) is one in every dialect that has it;
// a start is one when the dialect that takes it says so (extension.startsAtOnce).

// ReadFast reads the params of a request of method on protocol version, as the HTTP front read
// them, as a request the fast path may serve, extra its transport's part; false for any other.
// What go-sdk would refuse of it is for the fast path to judge.
func (r *Router) ReadFast(version, method string, params map[string]json.RawMessage, extra *mcp.RequestExtra) (mcp.Request, bool) {
	switch method {
	case "tasks/get":
		if p, ok := pollParams(params); ok {
			return &mcp.ServerRequest[*taskParams]{Params: p, Extra: extra}, true
		}
	case "tools/call":
		if p, ok := r.startParams(params); ok && version >= ModernVersion {
			return &mcp.ServerRequest[*mcp.CallToolParamsRaw]{Params: p, Extra: extra}, true
		}
	}
	return nil, false
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
		if p.Meta, ok = strictjson.Object(raw); !ok {
			return nil, false
		}
	}
	return p, true
}

// startParams reads a plain start's params: exactly name (a mapped tool's), arguments (an object)
// and _meta (an object with no progress token), of a call the extension answers at once.
func (r *Router) startParams(params map[string]json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	if !onlyMembers(params, "name", "arguments", "_meta") || len(params) != 3 {
		return nil, false
	}
	name, ok := strictjson.String(params["name"])
	tool, mapped := r.tasks.Mapping().Tool(name)
	if !ok || !mapped {
		return nil, false
	}
	args := params["arguments"]
	if a := bytes.TrimLeft(args, " \t\r\n"); len(a) == 0 || a[0] != '{' {
		return nil, false // not an object (the body is strict JSON: one that opens with { is one)
	}
	meta, ok := strictjson.Object(params["_meta"])
	if _, progress := meta["progressToken"]; !ok || progress || !(extension{r}).startsAtOnce(tool, meta) {
		return nil, false
	}
	return &mcp.CallToolParamsRaw{Meta: meta, Name: name, Arguments: args}, true
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
