package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// Clients with no task support at all (--no-task-clients).

// NoTaskMode says how async tools are served to clients that support no kind of task.
type NoTaskMode string

const (
	// NoTaskHandles: the call starts the execution and returns a handle, which the handle tools
	// task_status, task_result and task_cancel take.
	NoTaskHandles NoTaskMode = "handles"
	// NoTaskWait: the call waits for the result up to the tool's timeout, with progress
	// notifications when the client asked for them.
	NoTaskWait NoTaskMode = "wait"
	// NoTaskHide: such clients see only sync tools.
	NoTaskHide NoTaskMode = "hide"
)

// ParseNoTaskMode reads a --no-task-clients value.
func ParseNoTaskMode(s string) (NoTaskMode, error) {
	switch m := NoTaskMode(s); m {
	case NoTaskHandles, NoTaskWait, NoTaskHide:
		return m, nil
	}
	return "", fmt.Errorf("--no-task-clients %q: want handles, wait or hide", s)
}

const handleNote = "(Runs in the background: the call returns a handle at once; pass it to task_status to follow it, task_result to read the result, task_cancel to stop it.)"

var handleTools = []*mcp.Tool{
	{Name: "task_status", Description: "Reports the status of a background tool call, given the handle the call returned."},
	{Name: "task_result", Description: "Returns the result of a background tool call once it has finished, given its handle; until then it reports that it is still running."},
	{Name: "task_cancel", Description: "Asks a background tool call to stop, given its handle."},
}

var handleSchema = json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string","description":"The handle a background tool call returned."}},"required":["handle"],"additionalProperties":false}`)

func isHandleTool(name string) bool {
	for _, t := range handleTools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (s *Server) addHandleTools() {
	for _, t := range handleTools {
		t := *t
		t.InputSchema = handleSchema
		s.mcp.AddTool(&t, s.handleTool)
	}
}

// startHandle starts an execution and gives the caller its handle: the task id.
func (s *Server) startHandle(ctx context.Context, tool *mapping.Tool, args json.RawMessage) (mcp.Result, error) {
	t, toolErr, err := s.start(ctx, tool, args, startOptions{})
	if err != nil || toolErr != nil {
		return toolErr, err
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"Started %s in the background. Handle: %s\nCall task_status or task_result with this handle to follow it, task_cancel to stop it.", tool.Name, t.id)}},
		StructuredContent: map[string]any{"handle": t.id, "status": "working"},
	}, nil
}

// handleTool serves task_status, task_result and task_cancel.
func (s *Server) handleTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Handle string `json:"handle"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Handle == "" {
		return toolError(`Invalid arguments for %s: argument "handle" is required`, req.Params.Name), nil
	}
	var t *task
	var err error
	if req.Params.Name == "task_cancel" {
		if t, err = s.resolve(args.Handle, ""); err == nil {
			err = s.cancel(ctx, t, "an MCP client (task_cancel)")
			if isEnded(err) {
				return toolError("The task had already ended; nothing to cancel."), nil
			}
		}
	} else {
		t, err = s.read(ctx, args.Handle, "")
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams {
		return toolError("%s: %s", req.Params.Name, rpcErr.Message), nil
	}
	if err != nil {
		return nil, err
	}
	switch req.Params.Name {
	case "task_cancel":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Cancellation requested."}},
			StructuredContent: map[string]any{"status": "cancelling"}}, nil
	case "task_result":
		if t.result != nil {
			return t.result, nil
		}
		if t.failure != nil {
			return toolError("%s", t.failure.Message), nil
		}
		if t.status.State == adapters.Cancelled {
			return toolError("%s", t.message()), nil
		}
	}
	status := map[adapters.State]string{adapters.Submitted: "working", adapters.Working: "working",
		adapters.Succeeded: "completed", adapters.Failed: "completed", adapters.Cancelled: "cancelled"}[t.status.State]
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %s", status, t.message())}},
		StructuredContent: map[string]any{"status": status, "statusMessage": t.message()},
	}, nil
}

// callAndWait starts an execution and answers only with its result, up to the tool's timeout,
// sending the engine's status as progress when the client gave a progress token.
func (s *Server) callAndWait(ctx context.Context, c caps, tool *mapping.Tool, args json.RawMessage) (mcp.Result, error) {
	t, toolErr, err := s.start(ctx, tool, args, startOptions{})
	if err != nil || toolErr != nil {
		return toolErr, err
	}
	ctx, stop := context.WithTimeout(ctx, tool.Timeout)
	defer stop()
	if c.progress != nil && c.session != nil {
		go s.reportProgress(ctx, c, t)
	}
	o, err := s.engines[tool.Engine].Wait(ctx, tool.Target, t.claims.Ref)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return toolError("%s did not finish within its timeout of %s; the execution goes on in the engine", tool.Name, tool.Timeout), nil
	case err != nil:
		return nil, errEngine("Failed to wait for "+tool.Name, err)
	case o.State == adapters.Cancelled:
		return toolError("%s was cancelled (%s): %s", tool.Name, o.Native, o.Cause), nil
	}
	res, err := toolResult(tool, o)
	if err != nil {
		return toolError("%v", err), nil
	}
	return res, nil
}

// reportProgress sends one progress notification per poll interval until ctx ends.
func (s *Server) reportProgress(ctx context.Context, c caps, t *task) {
	tick := time.NewTicker(t.tool.PollInterval)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := s.describe(ctx, t); err != nil {
			continue
		}
		c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: c.progress, Progress: float64(n), Message: t.message(),
		})
	}
}
