package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mapping"
)

// middleware sees every request after the SDK decoded it: it records the caller's dialect for the
// task methods, answers tools/call for async tools (which the SDK knows nothing about) in the
// caller's dialect, and fits initialize and tools/list to the caller.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c := capsFromRequest(req)
		ctx, cancel := withClient(context.WithValue(ctx, capsKey{}, c))
		defer cancel()
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			return legacyInitialize(res)
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			return s.listTools(c, res.(*mcp.ListToolsResult))
		case "tools/call":
			params := req.(*mcp.CallToolRequest).Params
			tool, ok := s.set.Tool(params.Name)
			if !ok || tool.TaskSupport == mapping.TaskForbidden {
				return next(ctx, method, req)
			}
			return s.callAsync(ctx, c, tool, params.Arguments)
		}
		return next(ctx, method, req)
	}
}

// callAsync serves a call of an async tool in whatever way the caller can take it.
func (s *Server) callAsync(ctx context.Context, c caps, tool *mapping.Tool, args json.RawMessage) (mcp.Result, error) {
	switch {
	case c.operation != nil || (c.sep1391 && !(c.modern && c.tasks)):
		return s.startOperation(ctx, c, tool, args)
	case c.task != nil && !c.modern:
		return s.legacyCreate(ctx, c, tool, args)
	case c.modern && c.tasks:
		t, toolErr, err := s.start(ctx, tool, args, startOptions{})
		if err != nil || toolErr != nil {
			return toolErr, err
		}
		return reply(c, "task", modernTask(t)), nil
	case !c.modern && c.tasks:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("tool %s runs only as a task: call it with a `task` param", tool.Name)}
	}
	switch s.noTask {
	case NoTaskWait:
		return s.callAndWait(ctx, c, tool, args)
	case NoTaskHide:
		if c.modern {
			return nil, errMissingTasksCapability(tool.Name)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("tool %s is a long-running operation and this client declared no support for tasks or operations", tool.Name)}
	default:
		return s.startHandle(ctx, tool, args)
	}
}

// listTools fits tools/list to the caller: SEP-1391 clients see invocationMode, 2025-11-25
// clients execution.taskSupport, and clients with no task support what --no-task-clients says.
func (s *Server) listTools(c caps, res *mcp.ListToolsResult) (mcp.Result, error) {
	// Handle tools are for clients that may not do tasks: known not to, or legacy ones over HTTP.
	handleTools := s.noTask == NoTaskHandles && (c.noTasks() || !c.known)
	var tools []map[string]any
	for _, t := range res.Tools {
		var m map[string]any
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		json.Unmarshal(b, &m)
		mt, mapped := s.set.Tool(t.Name)
		async := mapped && mt.TaskSupport != mapping.TaskForbidden
		if isHandleTool(t.Name) {
			if handleTools {
				tools = append(tools, m)
			}
			continue
		}
		switch {
		case c.sep1391:
			m["invocationMode"] = map[bool]string{true: "async", false: "sync"}[async]
		case c.modern && c.tasks:
		case !c.modern && (c.tasks || !c.known):
			if async {
				m["execution"] = map[string]any{"taskSupport": "required"}
			}
		case async && s.noTask == NoTaskHide:
			continue
		case async && s.noTask == NoTaskHandles:
			m["description"] = fmt.Sprint(m["description"], " ", handleNote)
		}
		tools = append(tools, m)
	}
	fields := map[string]any{"tools": tools}
	if res.NextCursor != "" {
		fields["nextCursor"] = res.NextCursor
	}
	return reply(c, "complete", fields), nil
}

// legacyInitialize replaces the tasks extension, which the SDK shows to every protocol, with the
// 2025-11-25 tasks capability. tasks/list is not offered: tasks are not bound to an authenticated
// caller, so a list could show one client another's tasks.
func legacyInitialize(res mcp.Result) (mcp.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "_meta")
	capsMap, _ := m["capabilities"].(map[string]any)
	if capsMap == nil {
		capsMap = map[string]any{}
		m["capabilities"] = capsMap
	}
	if ext, ok := capsMap["extensions"].(map[string]any); ok {
		delete(ext, extensionTasks)
		if len(ext) == 0 {
			delete(capsMap, "extensions")
		}
	}
	capsMap["tasks"] = map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	capsMap["experimental"] = map[string]any{experimentalSEP1391: map[string]any{}}
	return &object{fields: m}, nil
}
