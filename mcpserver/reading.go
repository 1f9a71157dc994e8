package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/strictjson"
)

// reading is the HTTP front's one reading of a request body. Every check of the front (the
// Mcp-Name header, the tool's visibility, the rate limit, the hoist) and the fast path judge it,
// and go-sdk gets body: the very bytes it was read from, which strictjson has shown every decoder
// reads alike (or, once hoisted, their re-encoding).
type reading struct {
	body []byte
	// members are the message's members by exact name; params, those of its params when they
	// are an object.
	members, params map[string]json.RawMessage
	// method is empty when the message names none (a response, or no message go-sdk serves).
	method string
}

// release drops what the reading holds of the body, for a request that lives on once it has read
// what it needs of it (a listen); the method stays.
func (r *reading) release() { r.body, r.members, r.params = nil, nil, nil }

// readingBody is a request's body as its reading holds it, until the reading is released.
type readingBody struct {
	rd *reading
	at int
}

func (b *readingBody) Read(p []byte) (int, error) {
	if b.at >= len(b.rd.body) {
		return 0, io.EOF
	}
	n := copy(p, b.rd.body[b.at:])
	b.at += n
	return n, nil
}

func (*readingBody) Close() error { return nil }

// readMessage reads one JSON-RPC message, or says why it is refused. Members are slices of body:
// a large body is not copied.
func readMessage(body []byte) (*reading, *jsonrpc.Error) {
	members, err := strictjson.Members(body)
	if e := strictError(err); e != nil {
		return nil, e
	}
	if members == nil {
		if trimmed := bytes.TrimSpace(body); trimmed[0] == '[' {
			return nil, errBatch
		}
		return nil, errNotMessage
	}
	r := &reading{body: body, members: members}
	if raw, ok := members["method"]; ok && string(raw) != "null" { // null reads as no method
		if r.method, ok = strictjson.String(raw); !ok {
			return nil, errNotMessage
		}
	}
	r.params, _ = strictjson.Members(members["params"]) // nil unless an object
	return r, nil
}

// id is the message's id for an error answer: null unless it is a string or a number.
func (r *reading) id() json.RawMessage { return responseID(r.members["id"]) }

// param is the string params member name, "" when absent or not a string.
func (r *reading) param(name string) string {
	s, _ := strictjson.String(r.params[name])
	return s
}

// setParams replaces the params: the body handed on is the message re-encoded.
func (r *reading) setParams(params json.RawMessage) {
	members := maps.Clone(r.members)
	members["params"] = params
	body, err := json.Marshal(members)
	if err != nil {
		return // params that do not encode stay as they were: go-sdk refuses them
	}
	if again, err := readMessage(body); err == nil {
		*r = *again
	}
}

// maxMessage bounds one request on every transport: go-sdk's own limit for HTTP bodies.
const maxMessage = mcp.DefaultMaxRequestBodyBytes

var errBatch = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
	Message: "Invalid Request: JSON-RPC batches are not served (MCP removed them in 2025-06-18); send one message at a time"}

// errorResponse is the JSON-RPC response with error e to the request of id.
func errorResponse(id json.RawMessage, e *jsonrpc.Error) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	return b
}

var errNotMessage = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: not a JSON-RPC 2.0 request, notification or response"}

// strictError is the JSON-RPC error for a body that is not JSON every decoder reads alike.
func strictError(err error) *jsonrpc.Error {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return nil
	}
	if se.Syntax {
		return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: not one JSON value: " + se.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + se.Error()}
}

// responseID is the id an error answer carries: the request's when it is a string or a number,
// else null.
func responseID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 {
		switch raw[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return raw
		}
	}
	return json.RawMessage("null")
}
