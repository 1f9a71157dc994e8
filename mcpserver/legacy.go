package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// Tasks on protocol 2025-11-25 (PROTOCOL.md section 2).

const metaRelatedTask = "io.modelcontextprotocol/related-task"

// legacyCreate starts a task for a `task`-augmented tools/call; the client's ttl can only shorten
// the tool's.
func (s *Server) legacyCreate(ctx context.Context, c caps, tool *mapping.Tool, args json.RawMessage) (*object, error) {
	var meta struct {
		TTL *float64 `json:"ttl"`
	}
	if err := json.Unmarshal(c.task, &meta); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task must be an object like {\"ttl\": 60000}"}
	}
	opts := startOptions{}
	if meta.TTL != nil {
		if *meta.TTL <= 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task.ttl must be a positive number of milliseconds"}
		}
		opts.ttl = time.Duration(*meta.TTL) * time.Millisecond
	}
	t, toolErr, err := s.start(ctx, tool, args, opts)
	if err != nil {
		return nil, err
	}
	if toolErr != nil {
		// The call itself fails: 2025-11-25 has no way to hand back a tool error instead of a task.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: textOf(toolErr)}
	}
	return reply(c, "", map[string]any{"task": legacyTask(t)}), nil
}

// legacyTask renders a task as 2025-11-25's Task. A tool error result makes the task failed there.
func legacyTask(t *task) map[string]any {
	m := map[string]any{
		"taskId":        t.id,
		"statusMessage": t.message(),
		"createdAt":     timestamp(t.createdAt()),
		"lastUpdatedAt": timestamp(t.updatedAt()),
		"ttl":           t.ttlMs(),
		"pollInterval":  t.tool.PollInterval.Milliseconds(),
	}
	switch t.status.State {
	case adapters.Succeeded, adapters.Failed:
		m["status"] = "completed"
		if t.failure != nil || t.result.IsError {
			m["status"] = "failed"
		}
	case adapters.Cancelled:
		m["status"] = "cancelled"
	default:
		m["status"] = "working"
	}
	return m
}

// legacyCancel cancels a running task and answers with it, already cancelled; a task that ended is
// an error here.
func (s *Server) legacyCancel(ctx context.Context, c caps, id string) (*object, error) {
	t, err := s.read(ctx, id, "")
	if err != nil {
		return nil, err
	}
	if t.status.State.Terminal() {
		return nil, errAlreadyEnded(legacyTask(t)["status"])
	}
	if err := s.cancel(ctx, t, "an MCP client"); err != nil {
		if isEnded(err) {
			return nil, errAlreadyEnded("ended")
		}
		return nil, err
	}
	t.status = adapters.Status{State: adapters.Cancelled, Native: "CANCEL_REQUESTED", Started: t.status.Started, Updated: s.now()}
	t.status.Message = "Cancellation requested; the workflow is stopping."
	return reply(c, "", legacyTask(t)), nil
}

func errAlreadyEnded(status any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Cannot cancel task: it is already %v", status)}
}

// legacyResult blocks until the task has ended (or the client goes away) and returns what the
// call would have returned, tagged with the task.
func (s *Server) legacyResult(ctx context.Context, c caps, id string) (*object, error) {
	for waited := false; ; waited = true {
		t, err := s.read(ctx, id, "")
		if err != nil {
			return nil, err
		}
		if t.status.State.Terminal() {
			if waited {
				s.notifyStatus(ctx, c, t)
			}
			related := map[string]any{metaRelatedTask: map[string]any{"taskId": id}}
			if t.failure != nil {
				t.failure.Data, _ = json.Marshal(map[string]any{"_meta": related})
				return nil, t.failure
			}
			res := t.result
			if t.status.State == adapters.Cancelled {
				res = toolError("%s", t.message())
			}
			fields := callToolFields(res)
			fields["_meta"] = related
			return reply(c, "", fields), nil
		}
		// Wait blocks cheaply in the engine until the execution ends; then read again, which also
		// re-checks the id's expiry.
		if _, err := s.engines[t.tool.Engine].Wait(ctx, t.tool.Target, t.claims.Ref); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errEngine("Failed to wait for the task", err)
		}
	}
}

// notifyStatus tells a 2025-11-25 client on a connection that can carry notifications (stdio) that
// a task it waits on changed status. The notification is optional: failures are only logged.
func (s *Server) notifyStatus(ctx context.Context, c caps, t *task) {
	conn, ok := s.conns.Load(c.conn)
	if !ok || !c.tasks {
		return
	}
	if err := conn.(*stdioConn).notify(ctx, "notifications/tasks/status", legacyTask(t)); err != nil {
		s.log.Warn("notifications/tasks/status not sent", "error", err)
	}
}
