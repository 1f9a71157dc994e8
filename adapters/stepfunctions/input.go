package stepfunctions

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/taskgate/taskgate/adapters/driver"
)

// recent reads the newest events of an execution: one GetExecutionHistory call.
func (e *conn) recent(ctx context.Context, arn string) (reading, error) {
	h, err := e.reader.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{
		ExecutionArn: aws.String(arn),
		ReverseOrder: true,
		MaxResults:   historyWindow,
	})
	if missing := missingExecution(arn, err); missing != nil {
		return reading{}, missing
	}
	if denied(err) {
		return reading{}, fmt.Errorf("reading the history of execution %s: taskgate may not: grant it states:GetExecutionHistory: %w", arn, err)
	}
	if err != nil {
		return reading{}, apiError("reading the history of execution "+arn, err)
	}
	return read(h.Events), nil
}

// withHistory adds to a running execution's status what its newest events say: the questions
// it waits on, the states that run and how far along. Without the IAM permission to read the
// history, the status says so and stays as DescribeExecution gave it.
func (e *conn) withHistory(ctx context.Context, r driver.Ref, st driver.Status) (driver.Status, error) {
	h, err := e.recent(ctx, r.ID)
	if denied(err) {
		st.Message = join(st.Message, "no questions or progress: taskgate may not read the execution history (grant states:GetExecutionHistory)")
		return st, nil
	}
	if err != nil {
		return driver.Status{}, err
	}
	st.Message = join(st.Message, h.message)
	if len(h.waits) > 0 {
		st.State, st.Inputs = driver.InputRequired, h.questions()
	}
	return st, nil
}

func denied(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "AccessDeniedException"
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// answerLimit: an accepted answer is the waiting task's output, sent as it is.
var answerLimit = driver.AnswerLimit{Engine: "Step Functions", Bytes: maxPayload}

// Answer answers the open question key: SendTaskSuccess with the content as the task's output
// when accepted, else SendTaskFailure with error "taskgate.Declined" (declined) or
// "taskgate.Dismissed" (cancel). The question is found in the execution's newest events, as
// Describe finds it.
func (e *conn) Answer(ctx context.Context, t driver.Target, r driver.Ref, key string, a driver.Answer) error {
	what := fmt.Sprintf("answering %q of execution %s", key, r.ID)
	if err := a.Check(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if a.Action == driver.ActionAccept {
		if err := answerLimit.Check(len(a.Content)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if !ownsTarget(t, r) {
		return notOwned(t, r)
	}
	h, err := e.recent(ctx, r.ID)
	if err != nil {
		return err
	}
	if h.ended {
		return fmt.Errorf("%s: %w: the execution has ended, no question is open", what, driver.ErrNotFound)
	}
	var w *wait
	for i := range h.waits {
		if h.waits[i].Key == key {
			w = &h.waits[i]
		}
	}
	if w == nil {
		return fmt.Errorf("%s: %w: no open question %q: it was answered, or never asked", what, driver.ErrNotFound, key)
	}
	switch a.Action {
	case driver.ActionAccept:
		_, err = e.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(w.token), Output: aws.String(string(a.Content))})
	case driver.ActionDecline:
		_, err = e.client.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(w.token),
			Error: aws.String(declinedError), Cause: aws.String(fmt.Sprintf("the question %q was declined", key))})
	default:
		_, err = e.client.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(w.token),
			Error: aws.String(dismissedError), Cause: aws.String(fmt.Sprintf("the question %q was dismissed", key))})
	}
	return answerError(what, err)
}

// answerError translates the errors of SendTaskSuccess and SendTaskFailure.
func answerError(what string, err error) error {
	var gone *types.TaskDoesNotExist
	var timedOut *types.TaskTimedOut
	var badToken *types.InvalidToken
	var badOutput *types.InvalidOutput
	switch {
	case err == nil:
		return nil
	case errors.As(err, &gone), errors.As(err, &timedOut), errors.As(err, &badToken):
		return fmt.Errorf("%s: %w: the question is no longer open (answered, or timed out): %w", what, driver.ErrNotFound, err)
	case errors.As(err, &badOutput):
		return driver.Refuse("the engine refused the answer as the task's output: "+badOutput.ErrorMessage(),
			fmt.Errorf("%s: %w: Step Functions refused the answer as the task's output: %w", what, driver.ErrInvalid, err))
	case denied(err):
		return fmt.Errorf("%s: taskgate may not: grant it states:SendTaskSuccess and states:SendTaskFailure: %w", what, err)
	}
	return apiError(what, err)
}
