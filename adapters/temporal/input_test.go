package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/temporal/taskgateflow"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
)

// Workflows of these tests alone.
const (
	staleQuestionName = "StaleQuestion"
	flakyName         = "Flaky"
	signalledName     = "Signalled"
	misaskedName      = "Misasked"
	timedQuestionName = "TimedQuestion"
	flakyActivity     = "FlakyStep"
)

func registerTestWorkflows(w worker.Registry) {
	w.RegisterWorkflowWithOptions(staleQuestion, workflow.RegisterOptions{Name: staleQuestionName})
	w.RegisterWorkflowWithOptions(flaky, workflow.RegisterOptions{Name: flakyName})
	w.RegisterWorkflowWithOptions(signalled, workflow.RegisterOptions{Name: signalledName})
	w.RegisterWorkflowWithOptions(misasked, workflow.RegisterOptions{Name: misaskedName})
	w.RegisterWorkflowWithOptions(timedQuestion, workflow.RegisterOptions{Name: timedQuestionName})
	w.RegisterActivityWithOptions(flakyStep, activity.RegisterOptions{Name: flakyActivity})
}

// staleQuestion asks in its first run and continues as new without waiting for the answer: the
// memo, with the question, is carried over into a second run that asks nothing and sleeps.
func staleQuestion(ctx workflow.Context, continued bool) error {
	if continued {
		return workflow.Sleep(ctx, time.Minute)
	}
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return err
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		_, _ = inbox.Ask(ctx, "stale", "asked by the first run", temporalexamples.ConfirmSchema)
	})
	if err := workflow.Sleep(ctx, 500*time.Millisecond); err != nil {
		return err
	}
	return workflow.NewContinueAsNewError(ctx, staleQuestionName, true)
}

// flaky runs flakyStep, which fails twice before it heartbeats for a minute.
func flaky(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 5},
	})
	return workflow.ExecuteActivity(ctx, flakyActivity).Get(ctx, nil)
}

func flakyStep(ctx context.Context) error {
	if n := activity.GetInfo(ctx).Attempt; n < 3 {
		return temporal.NewApplicationError(fmt.Sprintf("disk full on attempt %d", n), "Step.DiskFull")
	}
	activity.RecordHeartbeat(ctx, map[string]int{"done": 40})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return nil
	}
}

// signalled is AskAndEcho with answers through the signal.
func signalled(ctx workflow.Context) (json.RawMessage, error) {
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{Signals: true})
	if err != nil {
		return nil, err
	}
	a, err := inbox.Ask(ctx, "confirm", "by signal?", temporalexamples.ConfirmSchema)
	if err != nil {
		return nil, err
	}
	return a.Content, nil
}

// misasked asks what cannot be asked, and returns what Ask said each time.
func misasked(ctx workflow.Context) ([]string, error) {
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return nil, err
	}
	var said []string
	for _, q := range []struct {
		key    string
		schema string
	}{{"", `{"type":"object"}`}, {"s", `{"type":"string"}`}, {"j", `{"type":`}, {"d", `{"type":"object"}`}, {"d", `{"type":"object"}`}} {
		qctx, cancel := workflow.WithCancel(ctx)
		workflow.Go(qctx, func(ctx workflow.Context) {
			if _, err := inbox.Ask(ctx, q.key, "?", json.RawMessage(q.schema)); err != nil {
				said = append(said, err.Error())
			}
		})
		if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
			return nil, err
		}
		if q.key != "d" {
			cancel()
		}
	}
	return said, nil
}

// timedQuestion asks with a deadline of a second, then works on without an answer.
func timedQuestion(ctx workflow.Context) error {
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return err
	}
	qctx, cancel := workflow.WithCancel(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		_ = workflow.Sleep(ctx, time.Second)
		cancel()
	})
	if _, err := inbox.Ask(qctx, "soon", "answer within a second", temporalexamples.ConfirmSchema); !temporal.IsCanceledError(err) {
		return fmt.Errorf("Ask past its deadline: %v, want a cancellation", err)
	}
	return workflow.Sleep(ctx, time.Minute)
}

func inputRequired(st driver.Status) bool { return st.State == driver.InputRequired }

func TestAskAndAnswer(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.AskAndEchoName)
	r := start(ctx, t, e, tg, map[string]any{"message": "Ship it?"}, "")

	st := enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)
	want := driver.Status{State: driver.InputRequired, Native: "RUNNING", Message: `waiting for an answer to "confirm"`,
		Started: st.Started, Updated: st.Updated,
		Inputs: []driver.Question{{Key: "confirm", Message: "Ship it?", Schema: temporalexamples.ConfirmSchema}}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Describe:\n%+v\nwant\n%+v", st, want)
	}

	what := fmt.Sprintf("temporal: answer %q of %v: ", "confirm", r)
	for _, c := range []struct {
		key  string
		a    driver.Answer
		is   error
		want string
	}{
		{"confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":"yes"}`)}, driver.ErrInvalid,
			what + `invalid request: the answer to "confirm" does not fit its schema: at "/confirm": got string, want boolean`},
		{"confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{}`)}, driver.ErrInvalid,
			what + `invalid request: the answer to "confirm" does not fit its schema: at "/": missing property 'confirm'`},
		{"confirm", driver.Answer{Action: "sure"}, driver.ErrInvalid,
			what + `invalid request: answer action "sure": want accept, decline or cancel`},
		{"other", driver.Answer{Action: "decline"}, driver.ErrNotFound,
			fmt.Sprintf("temporal: answer %q of %v: execution not found: no open question %q: it was answered, or never asked", "other", r, "other")},
	} {
		err := e.Answer(ctx, tg, r, c.key, c.a)
		if !errors.Is(err, c.is) || err.Error() != c.want {
			t.Errorf("Answer %s %+v: %v\nwant %s", c.key, c.a, err, c.want)
		}
	}
	if st, err := e.Describe(ctx, tg, r); err != nil || !reflect.DeepEqual(st.Inputs, want.Inputs) {
		t.Errorf("Describe after refused answers: %+v, %v; want the question still open", st, err)
	}
	// The protocol, as another client sees it: the validator refuses a key that is not open.
	id, run := workflowOf(t, r)
	h, err := sdkClient(t, e).UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, RunID: run,
		UpdateName: taskgateflow.UpdateName, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{taskgateflow.Reply{Key: "nope", Action: "decline"}}})
	var appErr *temporal.ApplicationError
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if !errors.As(err, &appErr) || appErr.Type() != taskgateflow.NotOpenType || appErr.Message() != `no open question "nope": it was answered, or never asked` {
		t.Errorf("an Update for a question that is not open: %v, want an application error of type %s", err, taskgateflow.NotOpenType)
	}

	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	// The Update completes once the workflow removed the question: the very next read shows it.
	if st, err := e.Describe(ctx, tg, r); err != nil || st.State == driver.InputRequired || len(st.Inputs) > 0 {
		t.Errorf("Describe right after the answer: %+v, %v; want no open question", st, err)
	}
	err = e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":false}`)})
	if !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("a second answer: %v, want ErrNotFound", err)
	}
	out, err := awaitEnd(ctx, e, tg, r)
	if err != nil || out.State != driver.Succeeded || string(out.Output) != `{"confirm":true}` {
		t.Errorf("Wait: %+v, %v; want succeeded with the answer", out, err)
	}
	err = e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "decline"})
	if wantEnded := what + "execution not found: the workflow has ended (COMPLETED), no question is open"; err == nil || err.Error() != wantEnded {
		t.Errorf("an answer after the end: %v, want %q", err, wantEnded)
	}
}

func TestQuestionsOfAnotherRunAreNotOpen(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(staleQuestionName)
	r := start(ctx, t, e, tg, false, "")
	t.Cleanup(func() { _ = e.Cancel(context.Background(), tg, r, "test over") })

	first := enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)
	if len(first.Inputs) != 1 || first.Inputs[0].Key != "stale" {
		t.Fatalf("the first run asks %+v", first.Inputs)
	}
	st := enginetest.AwaitStatus(ctx, t, e, tg, r, "the end of input_required", func(st driver.Status) bool { return st.State != driver.InputRequired })
	if st.State != driver.Working || len(st.Inputs) > 0 {
		t.Errorf("the second run: %+v, want working with no question", st)
	}
	if latest := describeRun(ctx, t, e, latestRun(t, r)); latest.GetWorkflowExecutionInfo().GetMemo().GetFields()[taskgateflow.MemoQuestions] == nil {
		t.Errorf("the second run's memo has no questions: the test does not show what it means to")
	}
	err := e.Answer(ctx, tg, r, "stale", driver.Answer{Action: "decline"})
	if !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("an answer to the first run's question: %v, want ErrNotFound", err)
	}
}

func TestPendingActivitiesAreTheDefaultMessage(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(flakyName)
	r := start(ctx, t, e, tg, nil, "")
	t.Cleanup(func() { _ = e.Cancel(context.Background(), tg, r, "test over") })

	const want = `activity FlakyStep (attempt 3 of 5; last failure: Step.DiskFull: disk full on attempt 2; heartbeat: {"done":40})`
	st := enginetest.AwaitStatus(ctx, t, e, tg, r, "the wanted status message", func(st driver.Status) bool { return st.Message == want })
	if st.State != driver.Working {
		t.Errorf("Describe: %+v, want working", st)
	}
}

func TestAnswerBySignal(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(signalledName)
	r := start(ctx, t, e, tg, nil, "")
	enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)

	// A signal has no answer: an answer that does not fit is logged by the workflow and the
	// question stays open.
	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":1}`)}); err != nil {
		t.Fatalf("Answer that does not fit: %v", err)
	}
	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	out, err := awaitEnd(ctx, e, tg, r)
	if err != nil || string(out.Output) != `{"confirm":true}` {
		t.Errorf("Wait: %+v, %v; want the second answer", out, err)
	}
}

func TestBuildReleaseProgress(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.BuildReleaseName)
	r := start(ctx, t, e, tg, map[string]any{"version": "1.4.0", "stepSeconds": 1}, "")
	seen := enginetest.Messages(ctx, t, e, tg, r, 50*time.Millisecond)
	want := []string{"step 1 of 3: compile 1.4.0", "step 2 of 3: test 1.4.0", "step 3 of 3: package 1.4.0"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("messages %q, want %q", seen, want)
	}
	out, err := e.Outcome(ctx, tg, r)
	if err != nil || string(out.Output) != `{"version":"1.4.0","status":"released"}` {
		t.Errorf("Outcome: %+v, %v", out, err)
	}
}

func TestApproveDeployment(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.ApproveDeploymentName)
	for _, c := range []struct {
		a    driver.Answer
		want string
	}{
		{driver.Answer{Action: "accept", Content: json.RawMessage(`{"approve":true,"reason":"green tests"}`)},
			`{"version":"2.0.1","env":"prod","deployed":true,"reason":"green tests"}`},
		{driver.Answer{Action: "accept", Content: json.RawMessage(`{"approve":false}`)}, `{"version":"2.0.1","env":"prod","deployed":false}`},
		{driver.Answer{Action: "decline"}, `{"version":"2.0.1","env":"prod","deployed":false,"reason":"declined"}`},
	} {
		r := start(ctx, t, e, tg, map[string]any{"version": "2.0.1", "env": "prod", "stepSeconds": 0.2}, "")
		st := enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)
		if len(st.Inputs) != 1 || st.Inputs[0].Message != "Deploy 2.0.1 to prod?" || !strings.Contains(string(st.Inputs[0].Schema), `"approve"`) {
			t.Errorf("Describe: %+v", st)
		}
		if err := e.Answer(ctx, tg, r, "approve", c.a); err != nil {
			t.Fatalf("Answer %+v: %v", c.a, err)
		}
		if out, err := awaitEnd(ctx, e, tg, r); err != nil || string(out.Output) != c.want {
			t.Errorf("after %+v: %+v, %v; want %s", c.a, out, err, c.want)
		}
	}
}

// TestConformanceFixtures plays what the official MCP conformance suite does with confirm_delete
// and multi_input, on the engine.
func TestConformanceFixtures(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e := v.engine

	del := v.target(temporalexamples.ConfirmDeleteName)
	r := start(ctx, t, e, del, map[string]any{"filename": "mrtr-resume.txt"}, "")
	st := enginetest.AwaitStatus(ctx, t, e, del, r, "input_required", inputRequired)
	if len(st.Inputs) != 1 || st.Inputs[0].Key != "confirm" || st.Inputs[0].Message != "Delete mrtr-resume.txt?" {
		t.Errorf("confirm_delete asks %+v", st.Inputs)
	}
	if err := e.Answer(ctx, del, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatal(err)
	}
	if out, err := awaitEnd(ctx, e, del, r); err != nil || string(out.Output) != `{"filename":"mrtr-resume.txt","deleted":true}` {
		t.Errorf("confirm_delete: %+v, %v", out, err)
	}

	multi := v.target(temporalexamples.MultiInputName)
	r = start(ctx, t, e, multi, map[string]any{}, "")
	st = enginetest.AwaitStatus(ctx, t, e, multi, r, "two open questions", func(st driver.Status) bool { return len(st.Inputs) == 2 })
	keys := []string{st.Inputs[0].Key, st.Inputs[1].Key}
	if !reflect.DeepEqual(keys, []string{"confirm", "name"}) {
		t.Errorf("multi_input asks %q, want confirm and name, oldest first", keys)
	}
	both := json.RawMessage(`{"name":"partial-1","confirm":true}`)
	if err := e.Answer(ctx, multi, r, "name", driver.Answer{Action: "accept", Content: both}); err != nil {
		t.Fatal(err)
	}
	st, err := e.Describe(ctx, multi, r)
	if err != nil || st.State != driver.InputRequired || len(st.Inputs) != 1 || st.Inputs[0].Key != "confirm" {
		t.Errorf("multi_input after one answer: %+v, %v; want only confirm open", st, err)
	}
	if err := e.Answer(ctx, multi, r, "confirm", driver.Answer{Action: "accept", Content: both}); err != nil {
		t.Fatal(err)
	}
	if out, err := awaitEnd(ctx, e, multi, r); err != nil || string(out.Output) != `{"name":"partial-1","confirmed":true}` {
		t.Errorf("multi_input: %+v, %v", out, err)
	}
}

func TestAskMistakes(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(misaskedName)
	r := start(ctx, t, e, tg, nil, "")
	out, err := awaitEnd(ctx, e, tg, r)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	if err := json.Unmarshal(out.Output, &said); err != nil {
		t.Fatalf("output %s: %v", out.Output, err)
	}
	want := []string{
		"taskgateflow: a question needs a key",
		`taskgateflow: the schema of question "s": it must be a JSON Schema of type object, like {"type":"object","properties":{"approve":{"type":"boolean"}}}`,
		`taskgateflow: the schema of question "j": not JSON: unexpected EOF`,
		`taskgateflow: a question "d" is already open: give each open question a key of its own`,
	}
	if !reflect.DeepEqual(said, want) {
		t.Errorf("Ask said\n%q\nwant\n%q", said, want)
	}
}

func TestAQuestionPastItsDeadlineIsWithdrawn(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(timedQuestionName)
	r := start(ctx, t, e, tg, nil, "")
	t.Cleanup(func() { _ = e.Cancel(context.Background(), tg, r, "test over") })
	enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)
	st := enginetest.AwaitStatus(ctx, t, e, tg, r, "the end of input_required", func(st driver.Status) bool { return st.State != driver.InputRequired })
	if st.State != driver.Working || len(st.Inputs) > 0 {
		t.Errorf("after the deadline: %+v, want working with no question", st)
	}
	if err := e.Answer(ctx, tg, r, "soon", confirmed); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("an answer after the deadline: %v, want ErrNotFound", err)
	}
}

var confirmed = driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}
