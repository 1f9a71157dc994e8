package restate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/taskgate/taskgate/adapters"
)

// List reads one page of the caller's invocations of t from sys_invocation, newest first, by
// their task keys (which carry the caller's tag). A page is where the one before ended: the
// creation time and id of its last invocation, "MILLISECONDS.INVOCATION-ID".
func (e *Engine) List(ctx context.Context, t adapters.Target, caller, page string, limit int) ([]adapters.Listed, string, error) {
	h, err := handlerOf(t)
	if err != nil {
		return nil, "", err
	}
	what := "list " + t.Name
	after := ""
	if page != "" {
		ms, id, ok := strings.Cut(page, ".")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil || !validInvocation(id) {
			return nil, "", fmt.Errorf("restate: %s: %w: not a page this adapter gave", what, adapters.ErrInvalid)
		}
		at := "to_timestamp_millis(" + strconv.FormatInt(n, 10) + ")"
		after = " AND (created_at < " + at + " OR (created_at = " + at + " AND id > " + literal(id) + "))"
	}
	svc, err := e.service(ctx, what, h.service)
	if err != nil {
		return nil, "", err
	}
	limit = max(limit, 1)
	sql := "SELECT " + invocationColumns + " FROM sys_invocation WHERE target_service_name = " + literal(h.service) +
		" AND target_handler_name = " + literal(h.handler) +
		" AND starts_with(" + svc.keyColumn() + ", " + literal(adapters.CallerTag(caller)+"-") + ")" + after +
		" ORDER BY created_at DESC, id LIMIT " + strconv.Itoa(limit+1)
	var rows []invocation
	if err := e.query(ctx, what, sql, &rows); err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = strconv.FormatInt(last.Created.UnixMilli(), 10) + "." + last.ID
	}
	listed := make([]adapters.Listed, 0, len(rows))
	for _, inv := range rows {
		if validTaskKey(inv.taskKey()) {
			listed = append(listed, adapters.Listed{Ref: ref(h, inv.taskKey(), inv.ID), Status: inv.status()})
		}
	}
	return listed, next, nil
}

// Sweep reads the invocations of a page of refs (adapters.SweepIDs of them) from sys_invocation in
// one query, by their invocation ids (a KeyRef's by its task key: the newest invocation that
// carries it). Every row is checked to carry its Ref's task key, as a read checks it.
func (e *Engine) Sweep(ctx context.Context, t adapters.Target, refs []adapters.Ref, page string) ([]adapters.Listed, string, error) {
	h, err := handlerOf(t)
	if err != nil {
		return nil, "", err
	}
	what := "sweep " + t.Name
	chunk, next, err := adapters.SweepChunk(refs, page)
	if err != nil {
		return nil, "", fmt.Errorf("restate: %s: %w", what, err)
	}
	byInvocation, byKey := map[string]adapters.Ref{}, map[string]adapters.Ref{}
	var ids, keys []string
	for _, r := range chunk {
		p, ok := parseRef(r)
		switch {
		case !ok || p.service != h.service || p.handler != h.handler:
			return nil, "", fmt.Errorf("restate: %s: %w: %q is no invocation of %s", what, adapters.ErrInvalid, r.ID, t.Name)
		case p.invocation == "":
			byKey[p.key] = r
			keys = append(keys, literal(p.key))
		default:
			byInvocation[p.invocation] = r
			ids = append(ids, literal(p.invocation))
		}
	}
	if len(chunk) == 0 {
		return nil, "", nil
	}
	svc, err := e.service(ctx, what, h.service)
	if err != nil {
		return nil, "", err
	}
	var which []string
	if len(ids) > 0 {
		which = append(which, "id IN ("+strings.Join(ids, ", ")+")")
	}
	if len(keys) > 0 {
		which = append(which, svc.keyColumn()+" IN ("+strings.Join(keys, ", ")+")")
	}
	sql := "SELECT " + invocationColumns + " FROM sys_invocation WHERE target_service_name = " + literal(h.service) +
		" AND target_handler_name = " + literal(h.handler) + " AND (" + strings.Join(which, " OR ") + ")" +
		" ORDER BY created_at DESC LIMIT " + strconv.Itoa(4*adapters.SweepIDs)
	var rows []invocation
	if err := e.query(ctx, what, sql, &rows); err != nil {
		return nil, "", err
	}
	shown := map[adapters.Ref]bool{}
	var listed []adapters.Listed
	for _, inv := range rows {
		r, ok := byInvocation[inv.ID]
		if !ok {
			r, ok = byKey[inv.taskKey()]
		}
		if p, _ := parseRef(r); ok && !shown[r] && inv.taskKey() == p.key {
			shown[r] = true
			listed = append(listed, adapters.Listed{Ref: r, Status: inv.status()})
		}
	}
	return listed, next, nil
}
