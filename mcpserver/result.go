package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// toolResult is what the tool call returns for an ended execution: the structured result with its
// JSON as text when it succeeded, or the engine's error and cause with isError when it failed.
func toolResult(tool *mapping.Tool, o adapters.Outcome) (*mcp.CallToolResult, error) {
	switch o.State {
	case adapters.Succeeded:
		out, err := tool.StructuredResult(o.Output)
		if err != nil {
			return nil, fmt.Errorf("the workflow succeeded but its output could not be turned into the tool result: %w", err)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}
		if !isJSONNull(out) {
			res.StructuredContent = out
		}
		return res, nil
	case adapters.Failed:
		return failureResult(o), nil
	default:
		return nil, fmt.Errorf("the workflow was %s (%s) and has no result", o.State, o.Native)
	}
}

func failureResult(o adapters.Outcome) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "The workflow ended %s", o.Native)
	if o.Error != "" {
		fmt.Fprintf(&b, " with error %s", o.Error)
	}
	if o.Cause != "" {
		fmt.Fprintf(&b, ": %s", o.Cause)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func isJSONNull(b json.RawMessage) bool { return len(b) == 0 || string(b) == "null" }

// callSync serves sync tools: start, wait up to the tool's timeout, return the result.
func (s *Server) callSync(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	tool, ok := s.set.Tool(req.Params.Name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", req.Params.Name)
	}
	args := req.Params.Arguments
	if err := tool.ValidateArguments(args); err != nil {
		return toolError("Invalid arguments for %s: %v", tool.Name, err), nil
	}
	input, err := tool.EngineInput(args)
	if err != nil {
		return toolError("%v", err), nil
	}
	ctx, stop := context.WithTimeout(ctx, tool.Timeout)
	defer stop()
	_, o, err := s.engines[tool.Engine].Run(ctx, tool.Target, adapters.StartRequest{Input: input})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return toolError("%s did not finish within its timeout of %s; the execution goes on in the engine", tool.Name, tool.Timeout), nil
	case errors.Is(err, adapters.ErrInvalid):
		return toolError("Could not start %s: %v", tool.Name, err), nil
	case err != nil:
		return nil, errEngine("Failed to run "+tool.Name, err)
	}
	if o.State == adapters.Cancelled {
		return toolError("%s was cancelled (%s): %s", tool.Name, o.Native, o.Cause), nil
	}
	res, err := toolResult(tool, o)
	if err != nil {
		return toolError("%v", err), nil
	}
	return res, nil
}

// callToolFields is a CallToolResult as JSON fields, to extend with fields the SDK has no type for.
func callToolFields(res *mcp.CallToolResult) map[string]any {
	b, _ := json.Marshal(res)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// textOf is the first text content of a result.
func textOf(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
