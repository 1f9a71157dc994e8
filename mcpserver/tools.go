package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// route is how one tools/call is served.
type route int

const (
	routeWait      route = iota + 1 // the call waits for the result
	routeExtension                  // a task of the extension (2026-07-28)
	routeLegacy                     // a task of 2025-11-25
	routeOperation                  // a SEP-1391 operation
	routeHandle                     // a handle for the handle tools
	routeRefuse                     // the client cannot take this tool
)

// routeOf decides how a call of tool is served to the caller c.
func (s *Server) routeOf(c caps, tool *mapping.Tool) route {
	if tool.TaskSupport == mapping.TaskForbidden {
		return routeWait
	}
	optional := tool.TaskSupport == mapping.TaskOptional
	switch {
	case c.operation != nil:
		return routeOperation
	case c.modern && c.tasks:
		return routeExtension
	case c.task != nil && !c.modern:
		return routeLegacy
	case c.sep1391 && !optional:
		return routeOperation
	case optional:
		return routeWait
	case !c.modern && c.tasks:
		return routeRefuse // a 2025-11-25 client that can send `task` must send it
	}
	switch s.noTask {
	case NoTaskWait:
		return routeWait
	case NoTaskHide:
		return routeRefuse
	}
	return routeHandle
}

// toolCall is one call of a mapped tool, with the answers to its questions once it has them.
type toolCall struct {
	tool    *mapping.Tool
	args    json.RawMessage
	answers map[string]json.RawMessage
}

// callTool serves tools/call of a mapped tool, or of a handle tool.
func (s *Server) callTool(ctx context.Context, c caps, p *mcp.CallToolParamsRaw) (mcp.Result, error) {
	tool, ok := s.set.Tool(p.Name)
	visible, missing := false, []string(nil)
	if ok {
		visible, missing = access(ctx, tool)
	}
	switch {
	case !visible && s.noTask == NoTaskHandles && isHandleTool(p.Name):
		return s.handleTool(ctx, c, p.Name, p.Arguments).wire(c.modern), nil
	case !visible:
		// A tool hidden from the caller is answered exactly as one that does not exist.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	case len(missing) > 0:
		return nil, errNotPermitted(ctx, tool, missing)
	}
	observeTask(ctx, tool, adapters.Ref{})
	if c.modern && p.RequestState != "" {
		st, err := s.checkAskState(ctx, tool, p)
		switch {
		case err != nil:
			return nil, s.rpcError(extension{}, err)
		case st.Task != "":
			return s.resumeWait(ctx, c, p, st.Task)
		}
	}
	a, err := s.ask(ctx, c, tool, p)
	switch {
	case err != nil:
		return nil, s.rpcError(extension{}, err)
	case a.reply != nil:
		return a.reply, nil
	}
	call := toolCall{tool: tool, args: p.Arguments, answers: a.answers}
	switch s.routeOf(c, tool) {
	case routeExtension:
		t, toolErr, err := s.start(ctx, call, startOptions{})
		if err != nil || toolErr != nil {
			return s.toolAnswer(c, extension{}, toolErr, err)
		}
		return &createTaskResult{taskInfo: extensionTask(t)}, nil
	case routeLegacy:
		return s.legacyCreate(ctx, c, call)
	case routeOperation:
		return s.startOperation(ctx, c, call)
	case routeHandle:
		return s.startHandle(ctx, c, call), nil
	case routeRefuse:
		if c.modern {
			return nil, errMissingTasksCapability(tool.Name)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("tool %s runs only as a task: call it with a `task` param", tool.Name)}
	}
	return s.callAndWait(ctx, c, call), nil
}

// toolAnswer is the answer of a call that started nothing: a tool error the model reads, or an
// error of the request.
func (s *Server) toolAnswer(c caps, d dialect, toolErr *toolOutput, err error) (mcp.Result, error) {
	if err != nil {
		return nil, s.rpcError(d, err)
	}
	return toolErr.wire(c.modern), nil
}

func errMissingTasksCapability(tool string) error {
	data, _ := json.Marshal(map[string]any{
		"requiredCapabilities": map[string]any{"extensions": map[string]any{extensionTasks: map[string]any{}}},
	})
	msg := "Missing required client capability"
	if tool != "" {
		msg += ": tool " + tool + " runs only as a task; declare the " + extensionTasks + " extension"
	}
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: msg, Data: data}
}

// callAndWait serves a call that waits for its result, up to the tool's timeout (and, over HTTP,
// the longest a request may wait): tools that may not run as tasks, and clients that take no
// task. A client that gives up the call (cancels it, or closes the HTTP request) cancels the
// execution: it has no other way to. Progress notifications carry the engine's status when the
// client asked for them. The workflow's questions go back to a 2026-07-28 client that declared
// elicitation in an input_required result, and its retry resumes the wait (resumeWait); a client
// of an earlier version is asked with elicitation/create where it takes it.
func (s *Server) callAndWait(ctx context.Context, c caps, call toolCall) mcp.Result {
	tool := call.tool
	input, toolErr := prepare(tool, call.args, call.answers)
	if toolErr != nil {
		return toolErr.wire(c.modern)
	}
	w := newWait(ctx, tool)
	defer w.stop()
	e := s.engines[tool.Engine]
	if tool.TaskSupport == mapping.TaskForbidden {
		// Run serves targets that cannot be described after they start (Express) as well.
		ref, o, err := e.Run(pacedTool(w.ctx, tool, s.now()), tool.Target, adapters.StartRequest{Input: input})
		s.auditLine(ctx, "run", tool, ref, outcome(err))
		if ref != (adapters.Ref{}) {
			s.started(ctx, tool)
		}
		return s.waited(ctx, w, tool, ref, nil, o, err).wire(c.modern)
	}
	// The execution is the caller's, as a task's is: a question it asks may be answered in another
	// request of the caller (resumeWait).
	caller := callerOf(ctx)
	created := s.now().UTC().Truncate(time.Millisecond)
	ref, err := e.Start(pacedTool(w.ctx, tool, created), tool.Target, adapters.StartRequest{Input: input, Caller: caller})
	s.auditLine(ctx, "start", tool, ref, outcome(err))
	if err != nil {
		return s.waited(ctx, w, tool, ref, nil, adapters.Outcome{}, err).wire(c.modern)
	}
	s.started(ctx, tool)
	claims := token.Claims{Tool: tool.Name, Ref: ref, Caller: caller, Created: created, TTL: tool.TTL}
	return s.awaitTask(ctx, c, w, &task{tool: tool, claims: claims}, call.args, nil)
}

// resumeWait goes on with a waiting call whose workflow asked (the task its requestState names):
// it delivers the answers the retry brings and waits again.
func (s *Server) resumeWait(ctx context.Context, c caps, p *mcp.CallToolParamsRaw, id string) (mcp.Result, error) {
	t, err := s.resolve(ctx, id)
	if err != nil {
		return nil, s.rpcError(extension{}, err)
	}
	delivered, err := s.answer(ctx, t, given(p.InputResponses))
	if err != nil {
		return nil, s.rpcError(extension{}, err)
	}
	w := newWait(ctx, t.tool)
	defer w.stop()
	return s.awaitTask(ctx, c, w, t, p.Arguments, delivered), nil
}

// awaitTask waits for the task a waiting call started; args are the call's arguments, answered
// the questions it answered already.
func (s *Server) awaitTask(ctx context.Context, c caps, w *wait, t *task, args json.RawMessage, answered []string) mcp.Result {
	if c.progress != nil && c.session != nil {
		reported := *t // read apart from the wait's own reads
		go s.reportProgress(w.ctx, c, &reported)
	}
	var rounds *inRounds
	if c.modern && c.elicitation {
		rounds = &inRounds{answered: answered}
	}
	o, err := s.waitAsking(w.ctx, c, t, rounds, nil)
	if errors.Is(err, errQuestionsOpen) {
		var open inputRequests
		for _, r := range openRequests(t) {
			if !slices.Contains(answered, r.key) {
				open = append(open, r)
			}
		}
		return s.inputRequired(ctx, t.tool, args, open, s.tokens.Issue(t.claims))
	}
	return s.waited(ctx, w, t.tool, t.claims.Ref, t, o, err).wire(c.modern)
}

// wait bounds a waiting call: by the tool's timeout and, over HTTP, by the longest a request may
// wait (bound).
type wait struct {
	ctx, bounded context.Context
	bound        time.Duration
	stop         func()
}

func newWait(ctx context.Context, tool *mapping.Tool) *wait {
	bounded, bound, stopBound := withWaitBound(ctx)
	waitCtx, stop := context.WithTimeout(bounded, tool.Timeout)
	return &wait{ctx: waitCtx, bounded: bounded, bound: bound, stop: func() { stop(); stopBound() }}
}

// waited is the result of a waiting call that ended with o or err; t is the task it waited on,
// nil when there was none (the start failed, or the tool ran with Run).
func (s *Server) waited(ctx context.Context, w *wait, tool *mapping.Tool, ref adapters.Ref, t *task, o adapters.Outcome, err error) *toolOutput {
	switch {
	case err == nil:
	case errors.Is(err, adapters.ErrInvalid):
		return toolError("Could not start %s: %v", tool.Name, err)
	case ctx.Err() != nil:
		s.abandon(ctx, tool, ref)
		return toolError("%s was cancelled: the client stopped waiting", tool.Name)
	case errors.Is(err, context.DeadlineExceeded):
		within := fmt.Sprintf("within its timeout of %s", tool.Timeout)
		if w.bounded.Err() != nil && w.bound < tool.Timeout {
			within = fmt.Sprintf("within %s, the longest this server holds a request", w.bound)
		}
		if t != nil && s.describe(ctx, t) == nil && t.status.State == adapters.InputRequired {
			return toolError("%s did not finish %s: it is %s, and this client takes neither tasks nor elicitation to answer; the execution goes on in the engine", tool.Name, within, t.message())
		}
		return toolError("%s did not finish %s; the execution goes on in the engine", tool.Name, within)
	default:
		id := s.report(engineError("Failed to run "+tool.Name, err))
		return toolError("%s could not be run: the engine did not answer as expected; retry in a moment (error id %s)", tool.Name, id)
	}
	res, failure := settle(tool, o)
	if failure != nil {
		return toolError("%s", failure.Message)
	}
	return res
}

// abandon cancels the execution of a call its client gave up on.
func (s *Server) abandon(ctx context.Context, tool *mapping.Tool, ref adapters.Ref) {
	if ref == (adapters.Ref{}) {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer stop()
	reason := fmt.Sprintf("cancelled through taskgate: the MCP client stopped waiting for %s", tool.Name)
	err := s.engines[tool.Engine].Cancel(ctx, tool.Target, ref, reason)
	s.auditLine(ctx, "cancel", tool, ref, outcome(err))
	if err != nil && !errors.Is(err, adapters.ErrEnded) {
		s.log.Warn("cancelling an abandoned call failed", "tool", tool.Name, "ref", ref.String(), "error", err)
	}
}

// reportProgress sends one progress notification per poll interval (growing with the call's age)
// until ctx ends.
func (s *Server) reportProgress(ctx context.Context, c caps, t *task) {
	next := time.NewTimer(t.pollInterval())
	defer next.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
		}
		next.Reset(t.pollInterval())
		if s.describe(ctx, t) != nil {
			continue
		}
		c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: c.progress, Progress: float64(n), Message: t.message(),
		})
	}
}

// legacyTaskSupport is a tool's execution.taskSupport for a 2025-11-25 client: "required" only
// when a call without a task would be refused. A client whose declarations are unknown (stateless
// HTTP) gets a handle or the waited-for result in the handles and wait modes, so the tool is
// "optional" to it, and clients that honour the word (the TypeScript SDK refuses a plain call to a
// required tool) may call it plainly.
func legacyTaskSupport(c caps, t *mapping.Tool, mode NoTaskMode) mapping.TaskSupport {
	if t.TaskSupport == mapping.TaskRequired && !c.known && mode != NoTaskHide {
		return mapping.TaskOptional
	}
	return t.TaskSupport
}

// listTools answers tools/list: each tool as the caller can use it. SEP-1391 clients see
// invocationMode, 2025-11-25 clients execution.taskSupport; clients without tasks see what
// --no-task-clients says.
func (s *Server) listTools(ctx context.Context, c caps) mcp.Result {
	res := &listToolsResult{Tools: []toolEntry{}, TTLMs: toolsListTTL.Milliseconds()}
	// Handle tools are for clients that may not do tasks: known not to, or legacy ones over HTTP.
	mayGetHandles := s.noTask == NoTaskHandles && (c.noTasks() || !c.known)
	for _, t := range s.set.Tools {
		if visible, _ := access(ctx, t); !visible {
			continue
		}
		e := toolEntry{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		required := t.TaskSupport == mapping.TaskRequired
		switch {
		case c.sep1391:
			e.InvocationMode = "sync"
			if t.TaskSupport != mapping.TaskForbidden {
				e.InvocationMode = "async"
			}
		case c.modern && c.tasks:
		case !c.modern && (c.tasks || !c.known):
			if t.TaskSupport != mapping.TaskForbidden {
				e.Execution = &toolExecution{TaskSupport: string(legacyTaskSupport(c, t, s.noTask))}
			}
		case required && s.noTask == NoTaskHide:
			continue
		case required && s.noTask == NoTaskHandles:
			e.Description += " " + handleNote
		}
		if required && mayGetHandles {
			// The call may answer a handle, which the tool's outputSchema does not describe.
			e.OutputSchema = nil
		}
		res.Tools = append(res.Tools, e)
	}
	if mayGetHandles {
		for _, h := range handleTools {
			res.Tools = append(res.Tools, toolEntry{Name: h.name, Description: h.description, InputSchema: h.schema})
		}
	}
	return res
}
