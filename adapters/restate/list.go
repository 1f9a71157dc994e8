package restate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// List reads one page of the caller's invocations of t from sys_invocation, newest first, by
// their task keys (which carry the caller's tag). A page is where the one before ended: the
// creation time and id of its last invocation, "MILLISECONDS.INVOCATION-ID".
func (e *conn) List(ctx context.Context, o driver.ListOptions) ([]driver.Listed, string, error) {
	t, caller, page, limit := o.Target, o.Caller, o.Page, o.Limit
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
			return nil, "", fmt.Errorf("restate: %s: %w: not a page this adapter gave", what, driver.ErrInvalid)
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
		" AND starts_with(" + svc.keyColumn() + ", " + literal(driver.CallerTag(caller)+"-") + ")" + after +
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
	listed := make([]driver.Listed, 0, len(rows))
	for _, inv := range rows {
		if validTaskKey(inv.taskKey()) {
			listed = append(listed, driver.Listed{Ref: ref(h, inv.taskKey(), inv.ID), Status: inv.status()})
		}
	}
	return listed, next, nil
}

// sweptIDs is the condition on invocation ids of a sweep: their ids where they are few (at most
// SweepIDs, the first polls of tasks that a replica never read, listed by id beside the ends) and
// none stands for a task key, else none (every invocation of the handlers).
func sweptIDs(byInvocation, byKey map[string]driver.Ref) string {
	if len(byKey) > 0 || len(byInvocation) == 0 || len(byInvocation) > driver.SweepIDs {
		return ""
	}
	ids := slices.Sorted(maps.Keys(byInvocation))
	for i, id := range ids {
		ids[i] = literal(id)
	}
	return " AND id IN (" + strings.Join(ids, ", ") + ")"
}

// SweepGroup puts every target of the deployment in one group: one SQL query lists the
// invocations of all their handlers.
func (e *conn) SweepGroup(driver.Target) string { return "every handler" }

// Sweep reads one page of the invocations of o.Targets' handlers that have not completed
// (sys_invocation, up to sweepPage, in the order of their ids; a page is the last id of the one
// before) and shows those of o.Refs it holds; a KeyRef stands for the newest invocation that carries
// its task key. An invocation of refs that no page shows has completed: Describe reads how. It
// costs a query per sweepPage invocations in flight, whatever the number of refs or handlers.
func (e *conn) Sweep(ctx context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	return e.sweep(ctx, o.Targets, o.Refs, o.Page, "status != 'completed'")
}

// SweepEnded reads one page of the invocations of o.Targets' handlers that completed after o.Since
// (as Sweep reads the others) and shows those of o.Refs it holds: a query per sweepPage ends,
// however many are in flight.
func (e *conn) SweepEnded(ctx context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	return e.sweep(ctx, o.Targets, o.Refs, o.Page, "status = 'completed' AND completed_at > CAST("+literal(o.Since.UTC().Format(time.RFC3339Nano))+" AS TIMESTAMP)")
}

// sweep reads one page of the invocations of ts's handlers that match condition, and shows those
// of refs it holds.
func (e *conn) sweep(ctx context.Context, ts []driver.Target, refs []driver.Ref, page, condition string) ([]driver.Listed, string, error) {
	if len(ts) == 0 {
		return nil, "", nil
	}
	what := "sweep " + ts[0].Name
	if len(ts) > 1 {
		what = fmt.Sprintf("sweep %d handlers", len(ts))
	}
	handlers := map[[2]string]bool{} // service, handler
	var of []string
	for _, t := range ts {
		h, err := handlerOf(t)
		if err != nil {
			return nil, "", err
		}
		if k := [2]string{h.service, h.handler}; !handlers[k] {
			handlers[k] = true
			of = append(of, "(target_service_name = "+literal(h.service)+" AND target_handler_name = "+literal(h.handler)+")")
		}
	}
	after := ""
	if page != "" {
		if !validInvocation(page) {
			return nil, "", fmt.Errorf("restate: %s: %w: %q is not a page of this sweep", what, driver.ErrInvalid, page)
		}
		after = " AND id > " + literal(page)
	}
	byInvocation, byKey := map[string]driver.Ref{}, map[string]driver.Ref{}
	for _, r := range refs {
		p, ok := parseRef(r)
		switch {
		case !ok || !handlers[[2]string{p.service, p.handler}]:
			return nil, "", fmt.Errorf("restate: %s: %w: %q is no invocation of the handlers swept", what, driver.ErrInvalid, r.ID)
		case p.invocation == "":
			byKey[p.key] = r
		default:
			byInvocation[p.invocation] = r
		}
	}
	slices.Sort(of)
	sql := "SELECT " + invocationColumns + " FROM sys_invocation WHERE (" + strings.Join(of, " OR ") + ") AND " + condition + after +
		sweptIDs(byInvocation, byKey) + " ORDER BY id LIMIT " + strconv.Itoa(sweepPage)
	var rows []invocation
	if err := e.query(ctx, what, sql, &rows); err != nil {
		return nil, "", err
	}
	var listed []driver.Listed
	for _, inv := range rows {
		for _, r := range []driver.Ref{byInvocation[inv.ID], byKey[inv.taskKey()]} {
			if p, ok := parseRef(r); ok && inv.taskKey() == p.key {
				listed = append(listed, driver.Listed{Ref: r, Status: inv.status()})
			}
		}
	}
	next := ""
	if len(rows) == sweepPage {
		next = rows[len(rows)-1].ID
	}
	return listed, next, nil
}

// sweepPage is how many invocations in flight one page of a sweep reads.
const sweepPage = 1000
