package temporal

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

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
		state := stateOf(info.GetStatus())
		if state == 0 || !callersWorkflowID(w, info.GetExecution().GetWorkflowId(), caller) {
			continue // a run that continued as new (its chain's latest run is listed), or not a start of taskgate's
		}
		first := info.GetFirstRunId()
		if first == "" {
			first = info.GetExecution().GetRunId()
		}
		st := adapters.Status{State: state, Native: native(info.GetStatus()), Started: asTime(info.GetStartTime()), Updated: asTime(info.GetStartTime())}
		if closed := info.GetCloseTime(); closed != nil {
			st.Updated = closed.AsTime()
		}
		out = append(out, adapters.Listed{Ref: ref(info.GetExecution().GetWorkflowId(), first), Status: st})
	}
	return out, base64.RawURLEncoding.EncodeToString(resp.GetNextPageToken()), nil
}
