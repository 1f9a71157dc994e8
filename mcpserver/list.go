package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// tasks/list (2025-11-25): the caller's own tasks, read from the engines' listings (the ids the
// engines keep carry the caller's tag), tool after tool. The cursor says where to go on; it is
// not secret: whose tasks are listed comes from the request, never from the cursor.

// listPage is how many tasks one tasks/list answers at most; listCalls bounds the engine calls
// one tasks/list makes (a Step Functions page may hold none of the caller's executions).
const (
	listPage  = 50
	listCalls = 20
)

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listCursor struct {
	Tool string `json:"t"`
	Page string `json:"p,omitempty"`
}

var errBadCursor = invalid("Failed to list tasks: the cursor is not one tasks/list gave")

func (s *Server) addListMethod() error {
	return mcp.AddReceivingCustomMethod(s.mcp, "tasks/list", func(ctx context.Context, _ *mcp.ServerSession, p *listParams) (mcp.Result, error) {
		if capsOf(ctx).modern {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/list does not exist in the tasks extension"}
		}
		var cursor string
		if p != nil {
			cursor = p.Cursor
		}
		res, err := s.tasksList(ctx, cursor)
		if err != nil {
			return nil, s.rpcError(legacy{}, err)
		}
		return res, nil
	})
}

func (s *Server) tasksList(ctx context.Context, cursor string) (mcp.Result, error) {
	var tools []*mapping.Tool
	for _, t := range s.set.Tools {
		if t.TaskSupport != mapping.TaskForbidden {
			tools = append(tools, t)
		}
	}
	at, page, err := s.readCursor(cursor, tools)
	if err != nil {
		return nil, err
	}
	res := &legacyTaskList{Tasks: []legacyTaskInfo{}}
	caller, now := callerOf(ctx), s.now()
	for calls := 0; at < len(tools) && len(res.Tasks) < listPage && calls < listCalls; calls++ {
		tool := tools[at]
		listed, next, err := s.engines[tool.Engine].List(ctx, tool.Target, caller, page, listPage-len(res.Tasks))
		switch {
		case errors.Is(err, adapters.ErrInvalid) && page != "":
			return nil, errBadCursor
		case err != nil:
			return nil, engineError("Failed to list tasks", err)
		}
		for _, l := range listed {
			claims := token.Claims{Tool: tool.Name, Ref: l.Ref, Caller: caller, Created: l.Status.Started.UTC().Truncate(time.Millisecond), TTL: tool.TTL}
			if tool.TTL > 0 && now.After(claims.Created.Add(tool.TTL)) {
				continue // its id would have expired: not a task any more
			}
			res.Tasks = append(res.Tasks, legacyInfo(&task{id: s.tokens.Issue(claims), tool: tool, claims: claims, status: l.Status}))
		}
		if page = next; page == "" {
			at++
		}
	}
	if at < len(tools) {
		b, _ := json.Marshal(listCursor{Tool: tools[at].Name, Page: page})
		res.NextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	return res, nil
}

// readCursor is where a cursor says to go on: the index of a tool and its engine's page.
func (s *Server) readCursor(cursor string, tools []*mapping.Tool) (int, string, error) {
	if cursor == "" {
		return 0, "", nil
	}
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(b, &c) != nil {
		return 0, "", errBadCursor
	}
	for i, t := range tools {
		if t.Name == c.Tool {
			return i, c.Page, nil
		}
	}
	return 0, "", errBadCursor
}
