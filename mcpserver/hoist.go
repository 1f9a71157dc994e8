package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/internal/strictjson"
)

// go-sdk decodes tools/call params into a struct that drops unknown top-level fields, so the
// 2025-11-25 `task` and the SEP-1391 `operation` would never reach the middleware; and it decodes
// legacy client capabilities into a struct with no `tasks`. Both transports therefore rewrite a
// request that needs it before the SDK reads it, carrying what it would lose under these _meta keys.
const (
	metaTask      = "taskgate/task"
	metaOperation = "taskgate/operation"
	metaClient    = "taskgate/client"
	// metaConn names the stdio connection a request came on, so that handlers can notify it;
	// metaRequest is the request's JSON-RPC id there, for an answer the connection puts on the wire
	// itself (keepRefusal).
	metaConn    = "taskgate/conn"
	metaRequest = "taskgate/request"
)

// reservedPrefix begins every _meta key of taskgate's own.
const reservedPrefix = "taskgate/"

// declared is what a client declared in its initialize request, on a connection that has one.
type declared struct {
	Tasks   bool `json:"tasks"`
	SEP1391 bool `json:"sep1391"`
}

// needsHoist reports whether a request read over HTTP must be rewritten: a tools/call that
// carries `task` or `operation`, or params whose _meta uses taskgate's reserved keys (which a client
// may not set), however their names are escaped. Any other request goes on as its client sent it,
// unparsed again.
func needsHoist(rd *reading) bool {
	if rd.method == "tools/call" {
		_, task := rd.params["task"]
		_, operation := rd.params["operation"]
		if task || operation {
			return true
		}
	}
	raw := rd.params["_meta"]
	if !bytes.Contains(raw, []byte(reservedPrefix)) && bytes.IndexByte(raw, '\\') < 0 {
		return false // no name in it spells taskgate/, literally or with an escape
	}
	meta, _ := strictjson.Members(raw)
	for name := range meta {
		if strings.HasPrefix(name, reservedPrefix) {
			return true
		}
	}
	return false
}

// origin is what a stdio connection records in its requests' _meta for the handlers.
type origin struct {
	// decl is what the client declared in initialize; conn, the connection's id; request, the
	// request's id.
	decl    *declared
	conn    string
	request jsonrpc.ID
}

// hoist rewrites one request's params: for tools/call, `task` and `operation` move into _meta;
// what o holds is recorded in _meta (params-less requests get params to carry it). Whatever a
// client itself put under these keys is dropped. Params that are not an object are left for the
// SDK to refuse.
func hoist(method string, params json.RawMessage, o origin) (json.RawMessage, error) {
	p := map[string]json.RawMessage{}
	switch trimmed := bytes.TrimSpace(params); {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		if o == (origin{}) {
			return params, nil
		}
	case trimmed[0] != '{':
		return params, nil
	default:
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := p["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("_meta must be an object")
		}
	}
	delete(meta, metaTask)
	delete(meta, metaOperation)
	delete(meta, metaClient)
	delete(meta, metaConn)
	delete(meta, metaRequest)
	if method == "tools/call" {
		for field, key := range map[string]string{"task": metaTask, "operation": metaOperation} {
			if v, ok := p[field]; ok {
				meta[key] = v
				delete(p, field)
			}
		}
	}
	if o.decl != nil {
		meta[metaClient], _ = json.Marshal(o.decl)
	}
	if o.conn != "" {
		meta[metaConn], _ = json.Marshal(o.conn)
	}
	if o.request.IsValid() {
		meta[metaRequest], _ = json.Marshal(o.request.Raw())
	}
	if len(meta) > 0 {
		p["_meta"], _ = json.Marshal(meta)
	} else {
		delete(p, "_meta")
	}
	return json.Marshal(p)
}
