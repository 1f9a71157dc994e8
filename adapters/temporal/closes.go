package temporal

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/internal/lru"
)

// closedRun is how a listing showed a run closed: all of its outcome's Status, so that Outcome
// reads only its close event.
type closedRun struct {
	status          enumspb.WorkflowExecutionStatus
	started, closed int64 // Unix nanoseconds
}

func (c closedRun) asStatus() driver.Status {
	return driver.Status{State: stateOf(c.status), Native: native(c.status), Started: time.Unix(0, c.started).UTC(), Updated: time.Unix(0, c.closed).UTC()}
}

// closesKept bounds the closed runs remembered: two pages of ends, so that a page's are still
// there when their outcomes are read.
const closesKept = 2 * sweepPage

func newCloses() *lru.Cache[string, closedRun] { return lru.New[string, closedRun](closesKept) }

// remember keeps how info's run closed, by its Ref, when the listing tells all its outcome's
// Status: a run of no chain (the first run's times are the chain's) that did not time out (a
// timeout's cause is in the run's description).
func (e *conn) remember(info *workflowpb.WorkflowExecutionInfo) {
	status, run := info.GetStatus(), info.GetExecution().GetRunId()
	if !closed(status) || status == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW || status == enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT ||
		(info.GetFirstRunId() != "" && info.GetFirstRunId() != run) || info.GetStartTime() == nil || info.GetCloseTime() == nil {
		return
	}
	e.closes.Update(ref(info.GetExecution().GetWorkflowId(), run).ID, func(c *closedRun) {
		*c = closedRun{status: status, started: asTime(info.GetStartTime()).UnixNano(), closed: asTime(info.GetCloseTime()).UnixNano()}
	})
}
