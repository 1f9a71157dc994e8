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
// caller's tag, which names the tool too), tool after tool. The cursor says where to go on; it is not secret: whose tasks
// are listed comes from the request, never from the cursor.

// listPage is how many tasks one List answers at most; listCalls bounds the engine calls one
// List makes (a Step Functions page may hold none of the caller's executions).
const (
	listPage  = 50
	listCalls = 20
)

type listCursor struct {
	Tool string `json:"t"`
	// Gen is the generation of the caller being listed (callers.go): while a secret rotates, a
	// tool's executions are listed under each.
	Gen  int    `json:"g,omitempty"`
	Page string `json:"p,omitempty"`
}

var errBadCursor = Invalidf("Failed to list tasks: the cursor is not one tasks/list gave")

// taskTools are the tools that may run as tasks which the request's caller may use now.
func (s *Service) taskTools(ctx context.Context) []*mapping.Tool {
	var tools []*mapping.Tool
	for _, t := range s.set.Tools {
		if t.TaskSupport != mapping.TaskForbidden && permitted(ctx, t) == nil {
			tools = append(tools, t)
		}
	}
	return tools
}

// List lists the caller's tasks from where cursor says ("" for the first page), and returns the
// cursor of the next page, "" after the last. Only tools the caller may use are listed, each
// execution once: under the tool it was started through.
func (s *Service) List(ctx context.Context, cursor string) ([]*Task, string, error) {
	tools := s.taskTools(ctx)
	at, err := readCursor(cursor, tools, s.callers.generations())
	if err != nil {
		return nil, "", err
	}
	listed := []*Task{}
	principal, now := Principal(ctx), s.now()
	for calls := 0; at.tool < len(tools) && len(listed) < listPage && calls < listCalls; calls++ {
		tool := tools[at.tool]
		who := s.callers.of(principal, tool.Name, at.gen)
		ectx, e := s.engine(ctx, tool)
		execs, next, err := e.List(ectx, adapters.ListOptions{Target: tool.Target, Caller: who, Page: at.page, Limit: listPage - len(listed)})
		switch {
		case errors.Is(err, adapters.ErrInvalid) && at.page != "":
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
		at = at.next(next, s.callers.generations())
	}
	var nextCursor string
	if at.tool < len(tools) {
		b, _ := json.Marshal(listCursor{Tool: tools[at.tool].Name, Gen: at.gen, Page: at.page})
		nextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	return listed, nextCursor, nil
}

// listAt is where a listing stands: a tool's index, the caller's generation, the engine's page.
type listAt struct {
	tool, gen int
	page      string
}

// next is where the listing goes on after a page whose engine said next ("" after its last).
func (a listAt) next(page string, generations int) listAt {
	switch {
	case page != "":
		return listAt{a.tool, a.gen, page}
	case a.gen+1 < generations:
		return listAt{a.tool, a.gen + 1, ""}
	}
	return listAt{a.tool + 1, 0, ""}
}

// readCursor is where a cursor says to go on, among the tools the caller may use: a cursor that
// names any other tool reads like one that names no tool.
func readCursor(cursor string, tools []*mapping.Tool, generations int) (listAt, error) {
	if cursor == "" {
		return listAt{}, nil
	}
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Gen < 0 || c.Gen >= generations {
		return listAt{}, errBadCursor
	}
	for i, t := range tools {
		if t.Name == c.Tool {
			return listAt{i, c.Gen, c.Page}, nil
		}
	}
	return listAt{}, errBadCursor
}
