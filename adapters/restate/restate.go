// Package restate serves Restate handlers as taskgate executions: a driver.Conn on a Restate
// server's ingress (to start and answer invocations) and admin API (to read and cancel them).
//
// A task is one invocation of a service's handler, a workflow's run handler or a virtual object's
// exclusive handler, started with a send: workflows and virtual objects get a key of their own per
// task. Every read asks the admin API's SQL (the sys_invocation table, and the state table for
// what a handler asks and reports, package taskgatehandler); outputs come from the ingress.
// Nothing is kept but what never changes: each service's type, read once.
package restate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// Config is how to reach one Restate server.
type Config struct {
	// Ingress is the ingress URL, like http://127.0.0.1:8080.
	Ingress string
	// Admin is the admin API URL, like http://127.0.0.1:9070.
	Admin string
	// Token, when set, is sent to both as a bearer token (Restate Cloud's API tokens).
	Token string
	// HTTPClient sends the requests; nil is a client of the engine's own.
	HTTPClient *http.Client
}

// conn is a connection to one Restate server. It is safe for concurrent use.
type conn struct {
	ingress, admin string
	token          string
	hc             *http.Client
	// services are the services' metadata by name, read once each: a service's type cannot change
	// without a breaking re-registration.
	services sync.Map
}

var (
	_ driver.Conn             = (*conn)(nil)
	_ driver.VisibilityLagger = (*conn)(nil)
	_ driver.Aser             = (*conn)(nil)
)

// visibilityLag is how long after a send its invocation may not be found. The ingress answers a
// send once the partition processor has taken the invocation (it tells whether it was
// PreviouslyAccepted), and a single node's admin query reads that processor's store, so a start
// is found at once there (the conformance suite checks it). In a cluster the query may be
// answered from a replica of the partition that applies the log a moment later: a second covers
// that, and costs only that a read of an id that names nothing, in its task's first second, reads
// as starting.
const visibilityLag = time.Second

// VisibilityLag declares visibilityLag.
func (e *conn) VisibilityLag() time.Duration { return visibilityLag }

// New configures a Conn; it makes no call.
func New(cfg Config) (driver.Conn, error) {
	for _, u := range []struct{ what, url string }{{"ingress", cfg.Ingress}, {"admin API", cfg.Admin}} {
		if !validURL(u.url) {
			return nil, fmt.Errorf("restate: the %s URL %q is not an http:// or https:// URL", u.what, u.url)
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 64, ForceAttemptHTTP2: true}}
	}
	return &conn{ingress: trimSlash(cfg.Ingress), admin: trimSlash(cfg.Admin), token: cfg.Token, hc: hc}, nil
}

// Endpoints is how a Conn of this package reaches its Restate server, which its As answers
// (*Endpoints): for what taskgate does not do itself, such as registering a deployment (Register).
type Endpoints struct {
	// Ingress and Admin are the URLs of the ingress and of the admin API, without a trailing /.
	Ingress, Admin string
	// Token is the bearer token sent to both; empty for none.
	Token string
	// HTTP sends the requests; nil is http.DefaultClient.
	HTTP *http.Client
}

// As answers the server's Endpoints (*Endpoints).
func (e *conn) As(target any) bool {
	ep, ok := target.(*Endpoints)
	if ok {
		*ep = Endpoints{Ingress: e.ingress, Admin: e.admin, Token: e.token, HTTP: e.hc}
	}
	return ok
}

// Close releases idle connections.
func (e *conn) Close() error {
	e.hc.CloseIdleConnections()
	return nil
}

// inputHeader carries the SHA-256 of a start's input, which Restate keeps in the invocation's
// journal: a repeated key's start compares it (Restate does not compare inputs itself).
const inputHeader = "x-taskgate-input-sha256"

// sendResponse is the ingress's answer to a send.
type sendResponse struct {
	InvocationID string `json:"invocationId"`
	Status       string `json:"status"`
}

// Start sends one invocation through the ingress. With a Key, the task key comes from the key and
// the caller, and a second Start with the same ones is the first invocation (running or ended,
// within the service's retention) if the input matches, else an error wrapping
// driver.ErrKeyConflict.
func (e *conn) Start(ctx context.Context, t driver.Target, req driver.StartRequest) (driver.Ref, error) {
	h, err := handlerOf(t)
	if err != nil {
		return driver.Ref{}, err
	}
	input, sum, err := canonicalInput(req.Input)
	if err != nil {
		return driver.Ref{}, err
	}
	what := "start " + t.Name
	svc, err := e.service(ctx, what, h.service)
	if err != nil {
		return driver.Ref{}, err
	}
	if err := svc.serves(h.handler); err != nil {
		return driver.Ref{}, fmt.Errorf("restate: %s: %w: %w", what, driver.ErrInvalid, err)
	}
	key := taskKey(req.Key, req.Caller)
	path := "/" + url.PathEscape(h.service) + "/" + url.PathEscape(h.handler) + "/send"
	header := http.Header{inputHeader: {sum}}
	if svc.keyed() {
		path = "/" + url.PathEscape(h.service) + "/" + url.PathEscape(key) + "/" + url.PathEscape(h.handler) + "/send"
	}
	if svc.Type != workflowType {
		// Workflows refuse idempotency keys: their key already is one.
		header.Set("idempotency-key", key)
	}
	for k, v := range req.Trace {
		header.Set(k, v)
	}
	status, body, err := e.call(ctx, what, http.MethodPost, e.ingress+path, header, input)
	if err != nil {
		return driver.Ref{}, err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return driver.Ref{}, refused(what, status, body)
	}
	var sent sendResponse
	if err := json.Unmarshal(body, &sent); err != nil || !validInvocation(sent.InvocationID) {
		return driver.Ref{}, fmt.Errorf("restate: %s: the ingress answered a send without an invocation id: %.200s", what, body)
	}
	if sent.Status == "PreviouslyAccepted" && req.Key != "" {
		if err := e.sameInput(ctx, what, sent.InvocationID, sum); err != nil {
			return driver.Ref{}, err
		}
	}
	return ref(h, key, sent.InvocationID), nil
}

// canonicalInput validates and compacts the input (empty means JSON null) and returns it with its
// hex SHA-256. The ingress passes any bytes on; the handler would fail on what is not JSON.
func canonicalInput(in json.RawMessage) ([]byte, string, error) {
	if len(in) == 0 {
		in = json.RawMessage("null")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, in); err != nil {
		return nil, "", driver.Refuse("the input is not valid JSON", fmt.Errorf("restate: %w: the input is not valid JSON: %w", driver.ErrInvalid, err))
	}
	sum := sha256.Sum256(b.Bytes())
	return b.Bytes(), hex.EncodeToString(sum[:]), nil
}

// journalInput is the input command of an invocation's journal, as the admin API shows it.
type journalInput struct {
	Command struct {
		Input struct {
			Headers []struct{ Name, Value string } `json:"headers"`
		} `json:"Input"`
	} `json:"Command"`
}

// sameInput checks that the invocation a repeated key names was started with the input of hash
// sum, from the input header its journal kept.
func (e *conn) sameInput(ctx context.Context, what, invocation, sum string) error {
	var rows []struct {
		EntryJSON string `json:"entry_json"`
	}
	sql := "SELECT entry_json FROM sys_journal WHERE id = " + literal(invocation) + " AND index = 0"
	if err := e.query(ctx, what, sql, &rows); err != nil {
		return err
	}
	var in journalInput
	if len(rows) == 1 && json.Unmarshal([]byte(rows[0].EntryJSON), &in) == nil {
		for _, h := range in.Command.Input.Headers {
			if h.Name == inputHeader {
				if h.Value == sum {
					return nil
				}
				return fmt.Errorf("restate: %s: %w: invocation %s was started under this key with other arguments; repeat those arguments, or use a new key", what, driver.ErrKeyConflict, invocation)
			}
		}
	}
	return fmt.Errorf("restate: %s: %w: invocation %s was started under this key, and Restate no longer keeps its input (its journal is kept for less than the invocation): use a new key", what, driver.ErrKeyConflict, invocation)
}
