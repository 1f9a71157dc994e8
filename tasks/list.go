package tasks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// The caller's own tasks, read from the engines' listings (the ids the engines keep carry the
// caller's tag), tool after tool. The cursor says where to go on; it is not secret: whose tasks
// are listed comes from the request, never from the cursor.

// listPage is how many tasks one List answers at most; listCalls bounds the engine calls one
// List makes (a Step Functions page may hold none of the caller's executions).
const (
	listPage  = 50
	listCalls = 20
)

type listCursor struct {
	Tool string `json:"t"`
	Page string `json:"p,omitempty"`
}

var errBadCursor = Invalidf("Failed to list tasks: the cursor is not one tasks/list gave")

// List lists the caller's tasks from where cursor says ("" for the first page), and returns the
// cursor of the next page, "" after the last.
func (s *Service) List(ctx context.Context, cursor string) ([]*Task, string, error) {
	var tools []*mapping.Tool
	for _, t := range s.set.Tools {
		if t.TaskSupport != mapping.TaskForbidden {
			tools = append(tools, t)
		}
	}
	at, page, err := readCursor(cursor, tools)
	if err != nil {
		return nil, "", err
	}
	listed := []*Task{}
	who, now := caller(ctx), s.now()
	for calls := 0; at < len(tools) && len(listed) < listPage && calls < listCalls; calls++ {
		tool := tools[at]
		ectx, e := s.engine(ctx, tool, time.Time{})
		execs, next, err := e.List(ectx, tool.Target, who, page, listPage-len(listed))
		switch {
		case errors.Is(err, adapters.ErrInvalid) && page != "":
			return nil, "", errBadCursor
		case err != nil:
			return nil, "", engineError("Failed to list tasks", err)
		}
		for _, l := range execs {
			claims := token.Claims{Tool: tool.Name, Ref: l.Ref, Caller: who, Created: l.Status.Started.UTC().Truncate(time.Millisecond), TTL: tool.TTL}
			if tool.TTL > 0 && now.After(claims.Created.Add(tool.TTL)) {
				continue // its id would have expired: not a task any more
			}
			listed = append(listed, &Task{ID: s.tokens.Issue(claims), Tool: tool, claims: claims, Status: l.Status})
		}
		if page = next; page == "" {
			at++
		}
	}
	var nextCursor string
	if at < len(tools) {
		b, _ := json.Marshal(listCursor{Tool: tools[at].Name, Page: page})
		nextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	return listed, nextCursor, nil
}

// readCursor is where a cursor says to go on: the index of a tool and its engine's page.
func readCursor(cursor string, tools []*mapping.Tool) (int, string, error) {
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
