package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
)

// The task methods, shared by the tasks extension (2026-07-28) and tasks on 2025-11-25: each
// answers in the caller's dialect (docs/protocol.md, its first two dialects).

const metaRelatedTask = "io.modelcontextprotocol/related-task"

type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
	// InputResponses are read only for the keys that are open: the others are ignored, whatever
	// they hold.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// taskDialect is the dialect of a task method's caller, or the error a caller without tasks gets.
func taskDialect(c caps) (dialect, error) {
	if c.modern {
		if !c.tasks {
			return nil, errMissingTasksCapability("")
		}
		return extension{}, nil
	}
	return legacy{}, nil
}

// taskMethod serves one task method for a caller of a known dialect.
type taskMethod func(context.Context, caps, dialect, *taskParams) (mcp.Result, error)

func (s *Server) addTaskMethods() error {
	for method, h := range map[string]taskMethod{
		"tasks/get":    s.tasksGet,
		"tasks/cancel": s.tasksCancel,
		"tasks/update": s.tasksUpdate,
		"tasks/result": s.tasksResult,
	} {
		err := mcp.AddReceivingCustomMethod(s.mcp, method, func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (mcp.Result, error) {
			return s.serveTask(ctx, h, p)
		})
		if err != nil {
			return err
		}
	}
	if err := s.addListMethod(); err != nil {
		return err
	}
	return s.addOperationMethods()
}

// serveTask answers a task method in its caller's dialect, below the middleware: go-sdk calls it
// for every task method, and the HTTP fast path (fastpath.go) for tasks/get.
func (s *Server) serveTask(ctx context.Context, h taskMethod, p *taskParams) (mcp.Result, error) {
	c := capsOf(ctx)
	d, err := taskDialect(c)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &taskParams{}
	}
	res, err := h(ctx, c, d, p)
	if err != nil {
		return nil, s.rpcError(d, err)
	}
	return res, nil
}

func (s *Server) tasksGet(ctx context.Context, c caps, d dialect, p *taskParams) (mcp.Result, error) {
	t, err := s.read(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if _, isLegacy := d.(legacy); isLegacy {
		return &legacyTask{legacyTaskInfo: legacyInfo(t)}, nil
	}
	res := &detailedTask{taskInfo: extensionTask(t)}
	switch {
	case t.failure != nil:
		res.Error = t.failure
	case t.result != nil:
		res.Result = t.result.wire(true)
	default:
		res.InputRequests = openRequests(t)
	}
	return res, nil
}

// tasksCancel is cooperative in the extension (an ended task keeps its outcome, and the answer is
// the same); 2025-11-25 answers with the task, already cancelled, and refuses an ended one.
func (s *Server) tasksCancel(ctx context.Context, c caps, d dialect, p *taskParams) (mcp.Result, error) {
	_, isLegacy := d.(legacy)
	t, err := s.resolve(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if isLegacy {
		if err := s.describe(ctx, t); err != nil {
			return nil, err
		}
		if t.status.State.Terminal() {
			return nil, invalid("Cannot cancel task: it is already %s", legacy{}.status(t))
		}
	}
	err = s.cancel(ctx, t, "an MCP client")
	switch {
	case kindOf(err) == errEnded && isLegacy:
		return nil, invalid("Cannot cancel task: it has already ended")
	case err != nil && kindOf(err) != errEnded:
		return nil, err
	case !isLegacy:
		return &ack{}, nil
	}
	t.status = adapters.Status{State: adapters.Cancelled, Native: "CANCEL_REQUESTED", Started: t.status.Started, Updated: s.now(),
		Message: "Cancellation requested; the workflow is stopping."}
	return &legacyTask{legacyTaskInfo: legacyInfo(t)}, nil
}

// tasksUpdate delivers answers to the task's open questions; responses to keys that are not open
// are ignored, and the acknowledgement comes once the engine has the answers.
func (s *Server) tasksUpdate(ctx context.Context, c caps, d dialect, p *taskParams) (mcp.Result, error) {
	if _, isLegacy := d.(legacy); isLegacy {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/update is part of the tasks extension on 2026-07-28"}
	}
	t, err := s.resolve(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if p.InputResponses == nil {
		return nil, invalid(`Failed to update task: inputResponses is required, like {"confirm": {"action": "accept", "content": {...}}}`)
	}
	if _, err := s.answer(ctx, t, sent(p.InputResponses)); err != nil {
		return nil, err
	}
	return &ack{}, nil
}

// tasksResult exists only on 2025-11-25: it blocks until the task has ended (or the client goes
// away) and returns what the call would have returned, tagged with the task. Over HTTP it blocks
// for at most the server's longest wait (a request holds its principal's share meanwhile); then
// it answers with the task's status and how to go on (errStillRunning).
func (s *Server) tasksResult(ctx context.Context, c caps, d dialect, p *taskParams) (mcp.Result, error) {
	id := p.TaskID
	if _, isLegacy := d.(legacy); !isLegacy {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/result does not exist in the tasks extension: poll tasks/get"}
	}
	waitCtx, bound, stop := withWaitBound(ctx)
	defer stop()
	for waited := false; ; waited = true {
		t, err := s.read(ctx, id)
		if err != nil {
			return nil, err
		}
		related := mcp.Meta{metaRelatedTask: map[string]any{"taskId": id}}
		if t.status.State.Terminal() {
			if waited {
				s.notifyStatus(ctx, c, t)
			}
			if t.failure != nil {
				failure := *t.failure
				failure.Data, _ = json.Marshal(map[string]any{"_meta": related})
				return nil, &failure
			}
			res := t.result
			if res == nil { // cancelled
				res = toolError("%s", t.message())
			}
			out := res.wire(false)
			out.Meta = related
			return out, nil
		}
		if waitCtx.Err() != nil {
			return nil, errStillRunning(t, bound, related)
		}
		// Wait blocks cheaply in the engine until the execution ends, asking the client the
		// workflow's questions on the way where it can; then read again, which also re-checks the
		// id's expiry.
		if _, err := s.waitAsking(waitCtx, c, t, nil, related); err != nil && waitCtx.Err() == nil {
			return nil, engineError("Failed to wait for the task", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// errStillRunning answers a tasks/result that waited as long as a request may, with the task's
// status: 2025-11-25 lets a client whose tasks/result failed poll tasks/get, and call
// tasks/result again once the task has ended.
func errStillRunning(t *task, bound time.Duration, related mcp.Meta) error {
	info := legacyInfo(t)
	data, _ := json.Marshal(map[string]any{"retryable": true, "retryAfterMs": info.PollInterval, "task": info, "_meta": related})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: fmt.Sprintf("Task still %s after %s, the longest this server holds a request: poll tasks/get every %d ms, and call tasks/result again once it has ended", info.Status, bound, info.PollInterval)}
}

// withWaitBound is ctx, ended after the longest its request may wait for a workflow (bound) when
// its transport set one (HTTP).
func withWaitBound(ctx context.Context) (bounded context.Context, bound time.Duration, stop context.CancelFunc) {
	if bound, _ = ctx.Value(maxWaitKey{}).(time.Duration); bound <= 0 {
		return ctx, 0, func() {}
	}
	bounded, stop = context.WithTimeout(ctx, bound)
	return bounded, bound, stop
}

// legacyCreate starts a task for a `task`-augmented tools/call; the client's ttl can only shorten
// the tool's.
func (s *Server) legacyCreate(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	var meta struct {
		TTL *float64 `json:"ttl"`
	}
	if err := json.Unmarshal(c.task, &meta); err != nil {
		return nil, s.rpcError(legacy{}, invalid(`task must be an object like {"ttl": 60000}`))
	}
	opts := startOptions{}
	if meta.TTL != nil {
		if *meta.TTL <= 0 {
			return nil, s.rpcError(legacy{}, invalid("task.ttl must be a positive number of milliseconds"))
		}
		opts.ttl = time.Duration(*meta.TTL) * time.Millisecond
	}
	t, toolErr, err := s.start(ctx, call, opts)
	if err != nil || toolErr != nil {
		// 2025-11-25 has no way to hand back a tool error instead of a task: the call itself fails.
		if toolErr != nil {
			err = invalid("%s", toolErr.text)
		}
		return nil, s.rpcError(legacy{}, err)
	}
	return &legacyCreateTaskResult{Task: legacyInfo(t)}, nil
}

// extensionTask renders a task for the extension.
func extensionTask(t *task) taskInfo {
	return taskInfo{
		TaskID: t.id, Status: extension{}.status(t), StatusMessage: t.message(),
		CreatedAt: timestamp(t.createdAt()), LastUpdatedAt: timestamp(t.updatedAt()),
		TTLMs: t.ttlMs(), PollIntervalMs: t.pollInterval().Milliseconds(),
	}
}

// legacyInfo renders a task for 2025-11-25.
func legacyInfo(t *task) legacyTaskInfo {
	return legacyTaskInfo{
		TaskID: t.id, Status: legacy{}.status(t), StatusMessage: t.message(),
		CreatedAt: timestamp(t.createdAt()), LastUpdatedAt: timestamp(t.updatedAt()),
		TTL: t.ttlMs(), PollInterval: t.pollInterval().Milliseconds(),
	}
}

// notifyStatus tells a 2025-11-25 client on a connection that can carry notifications (stdio) that
// a task it waits on changed status. The notification is optional: failures are only logged.
func (s *Server) notifyStatus(ctx context.Context, c caps, t *task) {
	conn, ok := s.conns.Load(c.conn)
	if !ok || !c.tasks {
		return
	}
	if err := conn.(*stdioConn).notify(ctx, "notifications/tasks/status", legacyInfo(t)); err != nil {
		s.log.Warn("notifications/tasks/status not sent", "error", err)
	}
}
