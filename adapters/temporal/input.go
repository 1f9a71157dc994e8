package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	updatepb "go.temporal.io/api/update/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/proto"

	"github.com/taskgate/taskgate/adapters/askwire"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal/temporalwire"
)

// Bounds of what a status message repeats.
const (
	maxActivities    = 3
	maxFailureText   = 200
	maxHeartbeatText = 100
)

// running fills in what a running run says about itself, from the DescribeWorkflowExecution
// answer alone: its open questions and its progress from the memo (package taskgateflow), else
// its pending activities.
func (e *conn) running(st *driver.Status, d *workflowservice.DescribeWorkflowExecutionResponse) {
	qs, err := e.questions(d)
	if err != nil {
		st.Message = err.Error()
		return
	}
	if len(qs.Open) > 0 {
		st.State = driver.InputRequired
		for _, q := range qs.Open {
			st.Inputs = append(st.Inputs, q.Asked())
		}
	}
	fields := d.GetWorkflowExecutionInfo().GetMemo().GetFields()
	switch st.Message = e.memoString(fields[temporalwire.MemoProgress]); {
	case st.Message != "":
	case len(st.Inputs) > 0:
		st.Message = driver.Awaiting(st.Inputs)
	default:
		st.Message = e.activities(d.GetPendingActivities())
	}
}

// questions reads the run's open questions from its memo; questions another run recorded (the
// memo is carried over by continue-as-new) are not open.
func (e *conn) questions(d *workflowservice.DescribeWorkflowExecutionResponse) (temporalwire.Questions, error) {
	var qs temporalwire.Questions
	p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[temporalwire.MemoQuestions]
	if p == nil {
		return qs, nil
	}
	if err := e.dc.FromPayload(p, &qs); err != nil {
		return qs, fmt.Errorf("the workflow's questions (memo %s) cannot be read: %v; a worker whose data converter encrypts or compresses payloads hides them from taskgate", temporalwire.MemoQuestions, err)
	}
	if qs.Run != d.GetWorkflowExecutionInfo().GetExecution().GetRunId() {
		return temporalwire.Questions{}, nil
	}
	return qs, nil
}

// activities says what the pending activities are doing: name, attempt, last failure, last
// heartbeat.
func (e *conn) activities(pas []*workflowpb.PendingActivityInfo) string {
	var parts []string
	for i, pa := range pas {
		if i == maxActivities {
			parts = append(parts, fmt.Sprintf("and %d more", len(pas)-maxActivities))
			break
		}
		var details []string
		switch pa.GetState() {
		case enumspb.PENDING_ACTIVITY_STATE_PAUSED:
			details = append(details, "paused")
		case enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
			details = append(details, "cancellation requested")
		}
		if n := pa.GetAttempt(); n > 1 {
			if limit := pa.GetMaximumAttempts(); limit > 0 {
				details = append(details, fmt.Sprintf("attempt %d of %d", n, limit))
			} else {
				details = append(details, fmt.Sprintf("attempt %d", n))
			}
		}
		if f := pa.GetLastFailure(); f != nil {
			name, msg := failureOf(f)
			details = append(details, "last failure: "+clip(name+": "+msg, maxFailureText))
		}
		if hb := pa.GetHeartbeatDetails(); len(hb.GetPayloads()) > 0 {
			if b, err := e.jsonResult(hb); err == nil {
				details = append(details, "heartbeat: "+clip(string(b), maxHeartbeatText))
			}
		}
		part := "activity " + pa.GetActivityType().GetName()
		if len(details) > 0 {
			part += " (" + strings.Join(details, "; ") + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// clip cuts s to n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Answer delivers an answer to the open question key of the chain's current run: through the
// Update temporalwire.UpdateName, waiting until the workflow has taken it (or refused it), or
// through the signal temporalwire.SignalName when the workflow asks for that.
func (e *conn) Answer(ctx context.Context, t driver.Target, r driver.Ref, key string, a driver.Answer) error {
	what := fmt.Sprintf("answer %q of %v", key, r)
	args, err := e.answerPayloads(key, a)
	if err != nil {
		return fmt.Errorf("temporal: %s: %w", what, err)
	}
	c, err := e.chain(ctx, what, r)
	if err != nil {
		return err
	}
	if closed(c.status()) {
		return fmt.Errorf("temporal: %s: %w: the workflow has ended (%s), no question is open", what, driver.ErrNotFound, native(c.status()))
	}
	qs, err := e.questions(c.latest)
	if err != nil {
		return fmt.Errorf("temporal: %s: %s", what, err)
	}
	if !slices.ContainsFunc(qs.Open, func(q askwire.Question) bool { return q.Key == key }) {
		return fmt.Errorf("temporal: %s: %w: no open question %q: it was answered, or never asked", what, driver.ErrNotFound, key)
	}
	run := &commonpb.WorkflowExecution{WorkflowId: c.id, RunId: c.latest.GetWorkflowExecutionInfo().GetExecution().GetRunId()}
	if qs.Via == temporalwire.ViaSignal {
		_, err := e.svc.SignalWorkflowExecution(ctx, &workflowservice.SignalWorkflowExecutionRequest{
			Namespace: e.namespace, WorkflowExecution: run, SignalName: temporalwire.SignalName,
			Input: args, Identity: identity, RequestId: uuid.NewString(),
		})
		if err != nil {
			return e.fail(ctx, what, err)
		}
		return nil
	}
	return e.update(ctx, what, run, args)
}

// answerLimit bounds the encoded answer (the Update's or the signal's arguments). The worker
// that takes an answer through the Update reports it with the Update's request in one gRPC
// message, which carries the answer twice (measured: 4302362 bytes for an answer of 2150490), and
// a gRPC message is at most 4 MiB: an answer of 2 MiB, Temporal's own limit on a payload
// (limit.blobSize.error), already makes that message too large, and the worker then fails its
// workflow task on every retry while the Update waits for good. Half of 4 MiB, less 64 KiB for
// the rest of the worker's message.
var answerLimit = driver.AnswerLimit{Engine: "Temporal", Bytes: 2<<20 - 64<<10}

// answerTaken bounds how long Answer waits for the workflow to take an answer through the Update,
// when ctx allows longer: a worker that is down, or whose workflow task keeps failing, never
// completes it.
const answerTaken = 20 * time.Second

// deadlineSlack is how close to its deadline a call that failed counts as one that ran out of time.
const deadlineSlack = 100 * time.Millisecond

// answerPayloads checks and encodes an answer to the question key as the workflow reads it.
func (e *conn) answerPayloads(key string, a driver.Answer) (*commonpb.Payloads, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	reply := askwire.Reply{Key: key, Action: a.Action}
	if a.Action == driver.ActionAccept {
		reply.Content = a.Content
	}
	args, err := e.dc.ToPayloads(reply)
	if err != nil {
		return nil, fmt.Errorf("encoding the answer: %w", err)
	}
	if err := answerLimit.Check(proto.Size(args)); err != nil {
		return nil, err
	}
	return args, nil
}

// update sends the answer Update and waits until it completes (accepted and handled, or refused by
// the workflow's validator), at most answerTaken.
func (e *conn) update(ctx context.Context, what string, run *commonpb.WorkflowExecution, args *commonpb.Payloads) error {
	ctx, cancel := context.WithTimeout(ctx, answerTaken)
	defer cancel()
	completed := &updatepb.WaitPolicy{LifecycleStage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED}
	resp, err := e.svc.UpdateWorkflowExecution(ctx, &workflowservice.UpdateWorkflowExecutionRequest{
		Namespace:         e.namespace,
		WorkflowExecution: run,
		WaitPolicy:        completed,
		Request: &updatepb.Request{
			Meta:  &updatepb.Meta{UpdateId: uuid.NewString(), Identity: identity},
			Input: &updatepb.Input{Name: temporalwire.UpdateName, Args: args},
		},
	})
	if err != nil {
		return e.notTaken(ctx, what, err)
	}
	outcome, ref := resp.GetOutcome(), resp.GetUpdateRef()
	// The server answers before the Update completes when its own wait ends first: poll on.
	for outcome == nil {
		polled, err := e.svc.PollWorkflowExecutionUpdate(ctx, &workflowservice.PollWorkflowExecutionUpdateRequest{
			Namespace: e.namespace, UpdateRef: ref, Identity: identity, WaitPolicy: completed,
		})
		if err != nil {
			return e.notTaken(ctx, what, err)
		}
		outcome = polled.GetOutcome()
	}
	if f := outcome.GetFailure(); f != nil {
		return refused(what, f)
	}
	return nil
}

// notTaken is the error of an Update call that failed: the contract's for err, or, when the wait
// for the workflow to take the answer ran out, ErrUnavailable in words that say so. The wait ran
// out when the call ended at its deadline, whatever ended it: the server may cut the stream
// (RST_STREAM CANCEL) a moment before the client's own timer ends ctx.
func (e *conn) notTaken(ctx context.Context, what string, err error) error {
	if deadline, ok := ctx.Deadline(); !errors.Is(ctx.Err(), context.DeadlineExceeded) && (!ok || time.Until(deadline) > deadlineSlack) {
		return e.fail(ctx, what, err)
	}
	return fmt.Errorf("temporal: %s: %w: the workflow did not take the answer in time (a worker polls its task queue? its workflow tasks succeed?); it may still take it: read the task before answering again: %w",
		what, driver.ErrUnavailable, context.DeadlineExceeded)
}

// refused turns the workflow's refusal of an answer into the contract's error, with its words.
func refused(what string, f *failurepb.Failure) error {
	switch f.GetApplicationFailureInfo().GetType() {
	case temporalwire.NotOpenType:
		return fmt.Errorf("temporal: %s: %w: %s", what, driver.ErrNotFound, f.GetMessage())
	case temporalwire.InvalidAnswerType:
		return driver.Refuse(f.GetMessage(), fmt.Errorf("temporal: %s: %w: %s", what, driver.ErrInvalid, f.GetMessage()))
	}
	return fmt.Errorf("temporal: %s: the workflow refused the answer: %s", what, f.GetMessage())
}
