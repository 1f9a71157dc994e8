package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/strictjson"
	"github.com/taskgate/taskgate/mcpserver/dialects"
)

// go-sdk drops what the dialects read of some requests (dialects.CarriedParams), and the handlers
// of a stdio request must know which connection and request it is. Both transports therefore
// rewrite a request that needs it before the SDK reads it, carrying all that in _meta.
const (
	// metaConn names the stdio connection a request came on, so that handlers can notify it;
	// metaRequest is the request's JSON-RPC id there, for an answer the connection puts on the wire
	// itself (keepRefusal).
	metaConn    = "taskgate/conn"
	metaRequest = "taskgate/request"
)

// reservedPrefix begins every _meta key of taskgate's own.
const reservedPrefix = "taskgate/"

// needsHoist reports whether a request read over HTTP must be rewritten: a tools/call that
// carries a param the dialects read and go-sdk drops, or params whose _meta uses taskgate's
// reserved keys (which a client may not set), however their names are escaped. Any other request
// goes on as its client sent it, unparsed again.
func needsHoist(rd *reading) bool {
	if rd.method == "tools/call" {
		for param := range dialects.CarriedParams {
			if _, ok := rd.params[param]; ok {
				return true
			}
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
	// decl is what the client declared in initialize (dialects.Declared); conn, the connection's
	// id; request, the request's id.
	decl    json.RawMessage
	conn    string
	request jsonrpc.ID
}

// originOf is what the connection of req recorded of it; nothing for a request of HTTP.
func originOf(req mcp.Request) origin {
	var o origin
	if p := dialects.ParamsOf(req); p != nil {
		meta := p.GetMeta()
		o.conn, _ = meta[metaConn].(string)
		if id, ok := meta[metaRequest]; ok {
			o.request, _ = jsonrpc.MakeID(id)
		}
	}
	return o
}

// hoist rewrites one request's params: for tools/call, the carried params move into _meta;
// what o holds is recorded in _meta (params-less requests get params to carry it). Whatever a
// client itself put under these keys is dropped. Params that are not an object are left for the
// SDK to refuse.
func hoist(method string, params json.RawMessage, o origin) (json.RawMessage, error) {
	p := map[string]json.RawMessage{}
	switch trimmed := bytes.TrimSpace(params); {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		if o.decl == nil && o.conn == "" && !o.request.IsValid() {
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
	for _, key := range dialects.CarriedParams {
		delete(meta, key)
	}
	delete(meta, dialects.MetaClient)
	delete(meta, metaConn)
	delete(meta, metaRequest)
	if method == "tools/call" {
		for field, key := range dialects.CarriedParams {
			if v, ok := p[field]; ok {
				meta[key] = v
				delete(p, field)
			}
		}
	}
	if o.decl != nil {
		meta[dialects.MetaClient] = o.decl
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
