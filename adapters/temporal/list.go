package temporal

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskgate/taskgate/adapters"
)

// List reads the caller's workflows of t from the visibility store, by the prefix of their ids
// (which carry the caller's tag), keeping those whose ids Start could have given: a chain that continued as new is listed once, as its latest run.
func (e *Engine) List(ctx context.Context, t adapters.Target, caller, page string, limit int) ([]adapters.Listed, string, error) {
	w, err := workflowOf(t)
	if err != nil {
		return nil, "", err
	}
	prefix := idPrefix + w.typ + "/" + adapters.CallerTag(caller) + "/"
	if strings.ContainsAny(prefix+w.queue, `'\`) {
		return nil, "", fmt.Errorf("temporal: list %s: %w: a workflow type or task queue with ' or \\ cannot be listed", w.typ, adapters.ErrInvalid)
	}
	token, err := base64.RawURLEncoding.DecodeString(page)
	if err != nil {
		return nil, "", fmt.Errorf("temporal: list %s: %w: not a page this adapter gave", w.typ, adapters.ErrInvalid)
	}
	resp, err := e.svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: e.namespace, PageSize: int32(limit), NextPageToken: token,
		Query: fmt.Sprintf("WorkflowId STARTS_WITH '%s' AND TaskQueue = '%s'", prefix, w.queue),
	})
	if err != nil {
		return nil, "", e.fail(ctx, "list "+w.typ, err)
	}
	var out []adapters.Listed
	for _, info := range resp.GetExecutions() {
		if l, ok := listed(info); ok && callersWorkflowID(w, info.GetExecution().GetWorkflowId(), caller) {
			out = append(out, l)
		}
	}
	return out, base64.RawURLEncoding.EncodeToString(resp.GetNextPageToken()), nil
}

// listed is a visibility record as a listing shows it: as its chain (the Ref of the chain's first
// run) with the run's status; not at all (ok false) for a run that continued as new, which its
// chain's latest run stands for.
func listed(info *workflowpb.WorkflowExecutionInfo) (l adapters.Listed, ok bool) {
	state := stateOf(info.GetStatus())
	if state == 0 {
		return l, false
	}
	first := info.GetFirstRunId()
	if first == "" {
		first = info.GetExecution().GetRunId()
	}
	st := adapters.Status{State: state, Native: native(info.GetStatus()), Started: asTime(info.GetStartTime()), Updated: asTime(info.GetStartTime())}
	if closed := info.GetCloseTime(); closed != nil {
		st.Updated = closed.AsTime()
	}
	return adapters.Listed{Ref: ref(info.GetExecution().GetWorkflowId(), first), Status: st}, true
}

// Sweep reads the workflows of a page of refs (adapters.SweepIDs of them) from the visibility
// store by their ids (WorkflowId IN ...), each chain as its latest run; a KeyRef (no run) stands
// for its workflow id's newest chain. A page is "OFFSET.TOKEN": the chunk's offset into refs and
// visibility's own page within the chunk (a chain that continued as new often has many runs).
func (e *Engine) Sweep(ctx context.Context, t adapters.Target, refs []adapters.Ref, page string) ([]adapters.Listed, string, error) {
	w, err := workflowOf(t)
	if err != nil {
		return nil, "", err
	}
	at, inner, _ := strings.Cut(page, ".")
	chunk, next, err := adapters.SweepChunk(refs, at)
	if err != nil {
		return nil, "", fmt.Errorf("temporal: sweep %s: %w", w.typ, err)
	}
	wanted, ids := map[string]adapters.Ref{}, map[string]bool{}
	var quoted []string
	for _, r := range chunk {
		id, _, ok := WorkflowOf(r)
		if !ok || strings.ContainsAny(id, `'\`) {
			return nil, "", fmt.Errorf("temporal: sweep %s: %w: %q is no workflow this adapter started", w.typ, adapters.ErrInvalid, r.ID)
		}
		if !ids[id] {
			ids[id] = true
			quoted = append(quoted, "'"+id+"'")
		}
		wanted[r.ID] = r
	}
	if len(quoted) == 0 {
		return nil, next, nil
	}
	token, err := base64.RawURLEncoding.DecodeString(inner)
	if err != nil {
		return nil, "", fmt.Errorf("temporal: sweep %s: %w: not a page this adapter gave", w.typ, adapters.ErrInvalid)
	}
	resp, err := e.svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: e.namespace, PageSize: sweepPage, NextPageToken: token,
		Query: "WorkflowId IN (" + strings.Join(quoted, ", ") + ")",
	})
	if err != nil {
		return nil, "", e.fail(ctx, "sweep "+w.typ, err)
	}
	var out []adapters.Listed
	shown := map[adapters.Ref]bool{}
	for _, info := range resp.GetExecutions() {
		l, ok := listed(info)
		if !ok {
			continue
		}
		r, asked := wanted[l.Ref.ID]
		if !asked {
			r, asked = wanted[info.GetExecution().GetWorkflowId()+"/"]
		}
		if asked && !shown[r] { // runs come newest first: a reused id's older chains are not asked
			shown[r] = true
			out = append(out, adapters.Listed{Ref: r, Status: l.Status})
		}
	}
	if more := resp.GetNextPageToken(); len(more) > 0 {
		next = at + "." + base64.RawURLEncoding.EncodeToString(more)
	}
	return out, next, nil
}

// sweepPage is how many runs one page of a sweep reads: every chain of its chunk, and runs that
// continued as new besides.
const sweepPage = 4 * adapters.SweepIDs
