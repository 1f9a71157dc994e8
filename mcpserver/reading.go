package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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

// readMessage reads one JSON-RPC message, or says why it is refused.
func readMessage(body []byte) (*reading, *jsonrpc.Error) {
	if e := strictMessage(body); e != nil {
		return nil, e
	}
	r := &reading{body: body}
	if json.Unmarshal(body, &r.members) != nil || r.members == nil {
		return nil, errNotMessage
	}
	if raw, ok := r.members["method"]; ok && json.Unmarshal(raw, &r.method) != nil {
		return nil, errNotMessage
	}
	r.readParams()
	return r, nil
}

func (r *reading) readParams() {
	r.params = nil
	if raw := bytes.TrimSpace(r.members["params"]); len(raw) > 0 && raw[0] == '{' {
		json.Unmarshal(raw, &r.params) // strict JSON: the object reads
	}
}

// id is the message's id for an error answer: null unless it is a string or a number.
func (r *reading) id() json.RawMessage { return responseID(r.members["id"]) }

// param is the string params member name, "" when absent or not a string.
func (r *reading) param(name string) string {
	var s string
	json.Unmarshal(r.params[name], &s)
	return s
}

// setParams replaces the params: the body handed on is the message re-encoded.
func (r *reading) setParams(params json.RawMessage) {
	members := make(map[string]json.RawMessage, len(r.members))
	for k, v := range r.members {
		members[k] = v
	}
	members["params"] = params
	body, err := json.Marshal(members)
	if err != nil {
		return // params that do not encode stay as they were: go-sdk refuses them
	}
	r.body, r.members = body, members
	r.readParams()
}

var errNotMessage = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: not a JSON-RPC 2.0 request, notification or response"}

// strictMessage is the error for a body that is not one message that every decoder reads alike
// (strictjson), or a batch; nil for one that is.
func strictMessage(body []byte) *jsonrpc.Error {
	var se *strictjson.Error
	if err := strictjson.Check(body); errors.As(err, &se) {
		if se.Syntax {
			return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: not one JSON value: " + se.Error()}
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + se.Error()}
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		return errBatch
	}
	return nil
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
