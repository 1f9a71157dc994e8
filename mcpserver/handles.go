package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
)

// Clients with no task support at all (--no-task-clients).

// NoTaskMode says how tools that run only as tasks are served to clients that support no kind of
// task.
type NoTaskMode string

const (
	// NoTaskHandles: the call starts the execution and returns a handle, which the handle tools
	// task_status, task_result and task_cancel take.
	NoTaskHandles NoTaskMode = "handles"
	// NoTaskWait: the call waits for the result up to the tool's timeout, with progress
	// notifications when the client asked for them.
	NoTaskWait NoTaskMode = "wait"
	// NoTaskHide: such clients do not see these tools; a call answers that a task is required.
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

var handleTools = []struct{ name, description string }{
	{"task_status", "Reports the status of a background tool call, given the handle the call returned."},
	{"task_result", "Returns the result of a background tool call once it has finished, given its handle; until then it reports that it is still running."},
	{"task_cancel", "Asks a background tool call to stop, given its handle."},
}

var handleSchema = json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string","description":"The handle a background tool call returned."}},"required":["handle"],"additionalProperties":false}`)

func isHandleTool(name string) bool {
	for _, t := range handleTools {
		if t.name == name {
			return true
		}
	}
	return false
}

// startHandle starts an execution and gives the caller its handle: the task id.
func (s *Server) startHandle(ctx context.Context, c caps, call toolCall) *callToolResult {
	tool := call.tool
	t, toolErr, err := s.start(ctx, call, startOptions{})
	if err != nil {
		return s.handleError(tool.Name, err).wire(c.modern)
	}
	if toolErr != nil {
		return toolErr.wire(c.modern)
	}
	structured, _ := json.Marshal(map[string]string{"handle": t.id, "status": "working"})
	return (&toolOutput{text: fmt.Sprintf("Started %s in the background. Handle: %s\nCall task_status or task_result with this handle to follow it, task_cancel to stop it.",
		tool.Name, t.id), structured: structured}).wire(c.modern)
}

// handleError is a task error as the model reads it: the handle tools answer in tool results.
func (s *Server) handleError(what string, err error) *toolOutput {
	rendered := s.rpcError(handles{}, err)
	return toolError("%s: %s", what, rendered.Error())
}

// handleTool serves task_status, task_result and task_cancel.
func (s *Server) handleTool(ctx context.Context, c caps, name string, args json.RawMessage) *toolOutput {
	var a struct {
		Handle string `json:"handle"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Handle == "" {
		return toolError(`Invalid arguments for %s: argument "handle" is required`, name)
	}
	if name == "task_cancel" {
		t, err := s.resolve(ctx, a.Handle)
		if err == nil {
			err = s.cancel(ctx, t, "an MCP client (task_cancel)")
		}
		switch {
		case kindOf(err) == errEnded:
			return toolError("The task had already ended; nothing to cancel.")
		case err != nil:
			return s.handleError(name, err)
		}
		structured, _ := json.Marshal(map[string]string{"status": "cancelling"})
		return &toolOutput{text: "Cancellation requested.", structured: structured}
	}
	t, err := s.read(ctx, a.Handle)
	if err != nil {
		return s.handleError(name, err)
	}
	if name == "task_result" {
		switch {
		case t.result != nil:
			return t.result
		case t.failure != nil:
			return toolError("%s", t.failure.Message)
		case t.status.State == adapters.Cancelled:
			return toolError("%s", t.message())
		}
	}
	status := handles{}.status(t)
	structured, _ := json.Marshal(map[string]string{"status": status, "statusMessage": t.message()})
	return &toolOutput{text: fmt.Sprintf("%s: %s", status, t.message()), structured: structured}
}
