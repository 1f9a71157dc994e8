package dialects

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// callTool serves tools/call of a mapped tool, or of a handle tool: the caller must see the tool
// and hold the scopes it needs; a requestState that names a waiting call's task resumes that wait;
// the tool's questions are gathered; then the first dialect that takes the call serves it.
func (r *Router) callTool(ctx context.Context, c caps, p *mcp.CallToolParamsRaw) (mcp.Result, error) {
	tool, ok := r.tasks.Mapping().Tool(p.Name)
	visible, missing := false, []string(nil)
	if ok {
		visible, missing = tasks.Access(ctx, tool)
	}
	switch {
	case !visible && r.noTask == NoTaskHandles && isHandleTool(p.Name):
		return wireResult(handles{r}.tool(ctx, p.Name, p.Arguments), c.modern), nil
	case !visible:
		// A tool hidden from the caller is answered exactly as one that does not exist.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	case len(missing) > 0:
		return nil, ErrNotPermitted(ctx, tool, missing)
	}
	tasks.Note(ctx, tool, adapters.Ref{})
	if c.modern && p.RequestState != "" {
		task, err := r.tasks.OpenRequestState(ctx, tool, p.Arguments, p.RequestState)
		switch {
		case err != nil:
			return nil, r.rpcError(taskWords, err)
		case task != "":
			return waiting{r}.resume(ctx, c, p, task)
		}
	}
	a, err := r.ask(ctx, c, tool, p)
	switch {
	case err != nil:
		return nil, r.rpcError(taskWords, err)
	case a.reply != nil:
		return a.reply, nil
	}
	call := toolCall{tool: tool, args: p.Arguments, answers: a.answers}
	for _, d := range r.dialects {
		if d.takes(c, tool) {
			return d.call(ctx, c, call)
		}
	}
	// No dialect serves this caller a tool that runs only as a task (--no-task-clients hide).
	if c.modern {
		return nil, errMissingTasksCapability(tool.Name)
	}
	return nil, errTaskRequired(tool)
}

// listTools answers tools/list: each tool as the caller can use it. SEP-1391 clients see
// invocationMode, 2025-11-25 clients execution.taskSupport; clients without tasks see what
// --no-task-clients says.
func (r *Router) listTools(ctx context.Context, c caps) mcp.Result {
	res := &listToolsResult{Tools: []toolEntry{}, TTLMs: toolsListTTL.Milliseconds()}
	// Handle tools are for clients that may not do tasks: known not to, or legacy ones over HTTP.
	mayGetHandles := r.noTask == NoTaskHandles && (c.noTasks() || !c.known)
	for _, t := range r.tasks.Mapping().Tools {
		if visible, _ := tasks.Access(ctx, t); !visible {
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
				e.Execution = &toolExecution{TaskSupport: string(legacyTaskSupport(c, t, r.noTask))}
			}
		case required && r.noTask == NoTaskHide:
			continue
		case required && r.noTask == NoTaskHandles:
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
