package mcpserver

import (
	"bytes"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// go-sdk rewrites the message of every -32601 error a handler returns to `method not found: "M"`
// and drops its data, so a client would never learn why taskgate refused (a tool that runs only
// as a task, a task method of the other dialect). The middleware hands such an error to the
// request's transport (keepRefusal), which puts it back on the wire in place of go-sdk's words:
// the HTTP front through refusalWriter, a stdio connection in its Write.

// methodNotFound is the -32601 error a request's handler gave, for its transport to send as it is.
type methodNotFound struct {
	mu  sync.Mutex
	err *jsonrpc.Error
}

func (r *methodNotFound) set(err *jsonrpc.Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

func (r *methodNotFound) get() *jsonrpc.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// refusalWriter writes go-sdk's answer to one HTTP request, with the refusal's error in place of
// the -32601 error go-sdk reworded. go-sdk writes each message in one Write: a JSON body, or one
// server-sent event.
type refusalWriter struct {
	http.ResponseWriter
	refusal *methodNotFound
}

func (w refusalWriter) Write(b []byte) (int, error) {
	if err := w.refusal.get(); err != nil {
		if fixed, ok := withError(b, err); ok {
			if _, werr := w.ResponseWriter.Write(fixed); werr != nil {
				return 0, werr
			}
			return len(b), nil
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w refusalWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var dataField = []byte("data: ")

// withError is b, a JSON-RPC response with a -32601 error either bare or as the data of a
// server-sent event, with err in place of that error; ok is false for anything else.
func withError(b []byte, err *jsonrpc.Error) (fixed []byte, ok bool) {
	head, payload, tail := []byte(nil), b, []byte(nil)
	if i := bytes.Index(b, dataField); i >= 0 && (i == 0 || b[i-1] == '\n') {
		rest := b[i+len(dataField):]
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			return nil, false
		}
		head, payload, tail = b[:i+len(dataField)], rest[:end], rest[end:]
	}
	msg, decodeErr := jsonrpc.DecodeMessage(payload)
	resp, isResponse := msg.(*jsonrpc.Response)
	var given *jsonrpc.Error
	if decodeErr != nil || !isResponse || !errors.As(resp.Error, &given) || given.Code != jsonrpc.CodeMethodNotFound {
		return nil, false
	}
	data, encodeErr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Error: err})
	if encodeErr != nil {
		return nil, false
	}
	return append(append(append([]byte{}, head...), data...), tail...), true
}
