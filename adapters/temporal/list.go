package temporal

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskgate/taskgate/adapters/driver"
)

// List reads the caller's workflows of t from the visibility store, by the prefix of their ids
// (which carry the caller's tag), keeping those whose ids Start could have given: a chain that continued as new is listed once, as its latest run.
func (e *conn) List(ctx context.Context, o driver.ListOptions) ([]driver.Listed, string, error) {
	w, err := workflowOf(o.Target)
	if err != nil {
		return nil, "", err
	}
	prefix := idPrefix + w.typ + "/" + driver.CallerTag(o.Caller) + "/"
	if err := inQuery(w); err != nil {
		return nil, "", fmt.Errorf("temporal: list %s: %w: %w", w.typ, driver.ErrInvalid, err)
	}
	token, err := base64.RawURLEncoding.DecodeString(o.Page)
	if err != nil {
		return nil, "", fmt.Errorf("temporal: list %s: %w: not a page this adapter gave", w.typ, driver.ErrInvalid)
	}
	resp, err := e.svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: e.namespace, PageSize: int32(o.Limit), NextPageToken: token,
		Query: fmt.Sprintf("WorkflowId STARTS_WITH '%s' AND TaskQueue = '%s'", prefix, w.queue),
	})
	if err != nil {
		return nil, "", e.fail(ctx, "list "+w.typ, err)
	}
	var out []driver.Listed
	for _, info := range resp.GetExecutions() {
		if l, ok := listed(info); ok && callersWorkflowID(w, info.GetExecution().GetWorkflowId(), o.Caller) {
			out = append(out, l)
		}
	}
	return out, base64.RawURLEncoding.EncodeToString(resp.GetNextPageToken()), nil
}

// listed is a visibility record as a listing shows it: as its chain (the Ref of the chain's first
// run) with the run's status; not at all (ok false) for a run that continued as new, which its
// chain's latest run stands for.
func listed(info *workflowpb.WorkflowExecutionInfo) (l driver.Listed, ok bool) {
	state := stateOf(info.GetStatus())
	if state == 0 {
		return l, false
	}
	first := info.GetFirstRunId()
	if first == "" {
		first = info.GetExecution().GetRunId()
	}
	st := driver.Status{State: state, Native: native(info.GetStatus()), Started: asTime(info.GetStartTime()), Updated: asTime(info.GetStartTime())}
	if closed := info.GetCloseTime(); closed != nil {
		st.Updated = asTime(closed)
	}
	return driver.Listed{Ref: ref(info.GetExecution().GetWorkflowId(), first), Status: st}, true
}

// SweepGroup puts every target of the namespace in one group, named for it: one visibility query
// lists the workflows of all their types and task queues. A target that cannot be listed (a ' or \ in its
// type or queue) is a group of its own, whose sweeps fail alone.
func (e *conn) SweepGroup(t driver.Target) string {
	if w, err := workflowOf(t); err != nil || inQuery(w) != nil {
		return "unlistable " + t.Name
	}
	return "namespace " + e.namespace
}

// inQuery checks that w's type and task queue can be written in a visibility query.
func inQuery(w workflow) error {
	return cmp.Or(listable("workflow type", w.typ), listable("task queue", w.queue))
}

// Sweep reads one page of the running workflows that taskgate started of o.Targets' types and
// task queues (visibility, up to sweepPage, each chain as its latest run) and shows those of
// o.Refs it holds; a KeyRef (no run) stands for its workflow id's running chain. A workflow of refs that no
// page shows has ended, continued as new under another chain, or is too young to be listed:
// Describe tells which. It costs a page per sweepPage running workflows of the types, whatever the
// number of refs or of types, where a query by ids would cost a page per hundred refs.
func (e *conn) Sweep(ctx context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	return e.sweep(ctx, o.Targets, o.Refs, o.Page, "ExecutionStatus = 'Running'")
}

// SweepEnded reads one page of the workflows that taskgate started of o.Targets' types and task
// queues that closed after o.Since (visibility by CloseTime; a run that continued as new is not an
// end of its chain), and shows those of o.Refs it holds: a page per sweepPage ends, however many
// run.
func (e *conn) SweepEnded(ctx context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	// Open workflows have a CloseTime past any in SQL visibility: the status leaves them out.
	return e.sweep(ctx, o.Targets, o.Refs, o.Page, fmt.Sprintf("ExecutionStatus != 'Running' AND CloseTime > '%s'", o.Since.UTC().Format(time.RFC3339Nano)))
}

// sweep reads one page of the workflows taskgate started of ts's types and task queues that match
// condition, and shows those of refs it holds. A type on another target's queue is listed too:
// refs leave it out.
func (e *conn) sweep(ctx context.Context, ts []driver.Target, refs []driver.Ref, page, condition string) ([]driver.Listed, string, error) {
	var types, queues []string
	for _, t := range ts {
		w, err := workflowOf(t)
		if err != nil {
			return nil, "", err
		}
		if err := inQuery(w); err != nil {
			return nil, "", fmt.Errorf("temporal: sweep %s: %w: %w", w.typ, driver.ErrInvalid, err)
		}
		types, queues = append(types, "'"+w.typ+"'"), append(queues, "'"+w.queue+"'")
	}
	if len(ts) == 0 {
		return nil, "", nil
	}
	slices.Sort(types)
	slices.Sort(queues)
	what := "sweep " + strings.Trim(types[0], "'")
	if len(types) > 1 {
		what = fmt.Sprintf("sweep %d workflow types", len(slices.Compact(slices.Clone(types))))
	}
	token, ok := sweepToken(page)
	if !ok {
		return nil, "", fmt.Errorf("temporal: %s: %w: not a page this adapter gave", what, driver.ErrInvalid)
	}
	resp, err := e.svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: e.namespace, PageSize: sweepPage, NextPageToken: token,
		Query: fmt.Sprintf("%s AND WorkflowType IN (%s) AND TaskQueue IN (%s) AND %s",
			sweptIDs(refs), strings.Join(slices.Compact(types), ", "), strings.Join(slices.Compact(queues), ", "), condition),
	})
	if err != nil {
		return nil, "", e.fail(ctx, what, err)
	}
	asked := make(map[string]bool, len(refs))
	for _, r := range refs {
		asked[r.ID] = true
	}
	var out []driver.Listed
	for _, info := range resp.GetExecutions() {
		e.remember(info)
		l, ok := listed(info)
		if !ok {
			continue
		}
		for _, id := range []string{l.Ref.ID, info.GetExecution().GetWorkflowId() + "/"} {
			if asked[id] {
				out = append(out, driver.Listed{Ref: driver.Ref{ID: id}, Status: l.Status})
			}
		}
	}
	return out, sweepPageOf(resp.GetNextPageToken()), nil
}

// sweptIDs is the condition on workflow ids of a sweep of refs: their ids where they are few (at
// most SweepIDs, a lookup by key: the first polls of tasks that a replica never read, listed by
// id beside the ends), else every id taskgate starts (a scan of the types).
func sweptIDs(refs []driver.Ref) string {
	if len(refs) == 0 || len(refs) > driver.SweepIDs {
		return "WorkflowId STARTS_WITH '" + idPrefix + "'"
	}
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		id, _, ok := WorkflowOf(r)
		if !ok || listable("workflow id", id) != nil {
			return "WorkflowId STARTS_WITH '" + idPrefix + "'"
		}
		ids = append(ids, "'"+id+"'")
	}
	slices.Sort(ids)
	return "WorkflowId IN (" + strings.Join(slices.Compact(ids), ", ") + ")"
}

// sweepPageOf writes visibility's page token as a page of a sweep ("" after the last): the token
// behind a check sum, so that a page no sweep gave is refused here rather than by the server, which
// answers an internal error for a token it cannot read.
func sweepPageOf(token []byte) string {
	if len(token) == 0 {
		return ""
	}
	sum := sha256.Sum256(token)
	return base64.RawURLEncoding.EncodeToString(append(sum[:4:4], token...))
}

// sweepToken reads a page that sweepPageOf wrote (nil for "").
func sweepToken(page string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(page)
	switch {
	case err != nil:
		return nil, false
	case len(b) == 0:
		return nil, true
	case len(b) < 5:
		return nil, false
	}
	sum := sha256.Sum256(b[4:])
	return b[4:], bytes.Equal(sum[:4], b[:4])
}

// sweepPage is how many running workflows one page of a sweep reads: visibility's largest page.
const sweepPage = 1000
