package stepfunctions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/mapping"
)

func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

func TestAskAndAnswer(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	tg := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.AskAndEcho)[sfnexamples.AskAndEcho])
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"message":"Ship it?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	st := enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", func(st driver.Status) bool { return st.State == driver.InputRequired })
	confirm := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)
	if len(st.Inputs) != 1 || st.Inputs[0].Key != "confirm" || st.Inputs[0].Message != "Ship it?" || !sameJSON(st.Inputs[0].Schema, confirm) ||
		st.Native != "RUNNING" || st.Message != `waiting for an answer to "confirm"` {
		t.Errorf("Describe: %+v", st)
	}
	// A poll of a running execution: DescribeExecution and one page of its history.
	before := c.snapshot()
	if _, err := e.Describe(ctx, tg, r); err != nil {
		t.Fatal(err)
	}
	if got := c.since(before); !reflect.DeepEqual(got, map[string]int{"DescribeExecution": 1, "GetExecutionHistory": 1}) {
		t.Errorf("a poll of a running execution made %v", got)
	}

	what := fmt.Sprintf("answering %%q of execution %s: ", r.ID)
	for _, tc := range []struct {
		key  string
		a    driver.Answer
		is   error
		want string
	}{
		{"other", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}, driver.ErrNotFound,
			fmt.Sprintf(what, "other") + `execution not found: no open question "other": it was answered, or never asked`},
		{"confirm", driver.Answer{Action: "perhaps"}, driver.ErrInvalid,
			fmt.Sprintf(what, "confirm") + `invalid request: answer action "perhaps": want accept, decline or cancel`},
	} {
		if err := e.Answer(ctx, tg, r, tc.key, tc.a); !errors.Is(err, tc.is) || err.Error() != tc.want {
			t.Errorf("Answer %s %+v: %v\nwant %s", tc.key, tc.a, err, tc.want)
		}
	}
	before = c.snapshot()
	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	if got := c.since(before); !reflect.DeepEqual(got, map[string]int{"GetExecutionHistory": 1, "SendTaskSuccess": 1}) {
		t.Errorf("an answer made %v", got)
	}
	out := awaitOutcome(t, e, tg, r)
	if out.State != driver.Succeeded || !sameJSON(out.Output, json.RawMessage(`{"confirm":true}`)) {
		t.Errorf("outcome %+v, want succeeded with the answer", out)
	}
	before = c.snapshot()
	if _, err := e.Describe(ctx, tg, r); err != nil {
		t.Fatal(err)
	}
	if got := c.since(before); !reflect.DeepEqual(got, map[string]int{"DescribeExecution": 1}) {
		t.Errorf("a poll of an ended execution made %v", got)
	}
	err = e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "decline"})
	if want := fmt.Sprintf(what, "confirm") + "execution not found: the execution has ended, no question is open"; err == nil || err.Error() != want {
		t.Errorf("an answer after the end: %v, want %q", err, want)
	}
}

func TestAnswerDecline(t *testing.T) {
	ctx := testContext(t)
	e := newEngine(t, nil)
	tg := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.ApproveDeployment)[sfnexamples.ApproveDeployment])
	for _, tc := range []struct {
		a    driver.Answer
		want string
	}{
		{driver.Answer{Action: "decline"}, `{"version":"2.0.1","env":"prod","deployed":false,"reason":"declined"}`},
		{driver.Answer{Action: "cancel"}, `{"version":"2.0.1","env":"prod","deployed":false,"reason":"dismissed"}`},
		{driver.Answer{Action: "accept", Content: json.RawMessage(`{"approve":true,"reason":"green"}`)},
			`{"version":"2.0.1","env":"prod","deployed":true,"approval":{"approve":true,"reason":"green"}}`},
	} {
		r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"version":"2.0.1","env":"prod","stepSeconds":0}`)})
		if err != nil {
			t.Fatal(err)
		}
		st := enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", func(st driver.Status) bool { return st.State == driver.InputRequired })
		if len(st.Inputs) != 1 || st.Inputs[0].Key != "approve" || st.Inputs[0].Message != "Deploy 2.0.1 to prod?" ||
			!strings.HasPrefix(string(st.Inputs[0].Schema), `{"type":"object","properties":{"approve":`) {
			t.Errorf("Describe: %+v", st)
		}
		if err := e.Answer(ctx, tg, r, "approve", tc.a); err != nil {
			t.Fatalf("Answer %+v: %v", tc.a, err)
		}
		if out := awaitOutcome(t, e, tg, r); out.State != driver.Succeeded || !sameJSON(out.Output, json.RawMessage(tc.want)) {
			t.Errorf("after %+v: %+v, want output %s", tc.a, out, tc.want)
		}
	}
}

func TestBuildReleaseProgress(t *testing.T) {
	ctx := testContext(t)
	e := newEngine(t, nil)
	tg := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.BuildRelease)[sfnexamples.BuildRelease])
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"version":"1.4.0","stepSeconds":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	seen := enginetest.Messages(ctx, t, e, tg, r, 100*time.Millisecond)
	// In this order, with states that last an instant (ListSuites) possibly in between.
	want := []string{"running Compile", "running Test (0 of 3 items done), RunSuite", "running Test (1 of 3 items done), RunSuite",
		"running Test (2 of 3 items done), RunSuite", "running Package"}
	next := 0
	for _, m := range seen {
		if next < len(want) && m == want[next] {
			next++
		}
	}
	t.Logf("messages %q", seen)
	if next < len(want) {
		t.Errorf("messages %q, want %q among them in this order", seen, want)
	}
}

func TestRetriedTaskMessage(t *testing.T) {
	ctx := testContext(t)
	e := newEngine(t, nil)
	def := `{"StartAt":"Notify","States":{"Notify":{"Type":"Task","Resource":"arn:aws:states:::events:putEvents",
		"Parameters":{"Entries":[{"EventBusName":"taskgate-no-such-bus","Source":"taskgate.test","DetailType":"x","Detail":{}}]},
		"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":2,"MaxAttempts":3,"BackoffRate":1}],"End":true}}}`
	out, err := sfnClient(t, e).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("retried-" + randomHex(4)), Definition: aws.String(def), RoleArn: aws.String(testRole)})
	if err != nil {
		t.Fatal(err)
	}
	tg := stateMachine(t, aws.ToString(out.StateMachineArn))
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Cancel(context.Background(), tg, r, "test over") })
	st := enginetest.AwaitStatus(ctx, t, e, tg, r, "a retry's attempt in the message", func(st driver.Status) bool { return strings.Contains(st.Message, "attempt 2") || st.State.Terminal() })
	t.Logf("message %q", st.Message)
	if !strings.HasPrefix(st.Message, "running Notify (attempt 2, last error ") || st.State != driver.Working {
		t.Errorf("Describe of a retried task: %+v", st)
	}
}

// TestHistoryNotReadable: without states:GetExecutionHistory a running execution is still
// described, and says why it shows no questions; a throttled history read is a throttled poll.
func TestHistoryNotReadable(t *testing.T) {
	ctx := testContext(t)
	c := &calls{deniedOp: "GetExecutionHistory"}
	e := newEngine(t, c)
	tg := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.AskAndEcho)[sfnexamples.AskAndEcho])
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"message":"Ship it?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Describe(ctx, tg, r)
	const want = "no questions or progress: taskgate may not read the execution history (grant states:GetExecutionHistory)"
	if err != nil || st.State != driver.Working || st.Message != want || len(st.Inputs) > 0 {
		t.Errorf("Describe without the permission: %+v, %v; want working, message %q", st, err, want)
	}
	wantAnswer := "reading the history of execution " + r.ID + ": taskgate may not: grant it states:GetExecutionHistory: "
	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "decline"}); err == nil || !strings.HasPrefix(err.Error(), wantAnswer) {
		t.Errorf("Answer without the permission: %v, want %q...", err, wantAnswer)
	}

	throttled := &calls{throttleOp: "GetExecutionHistory", throttle: -1}
	e = newEngine(t, throttled)
	if _, err := e.Describe(ctx, tg, r); !errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("Describe with the history read throttled: %v, want ErrUnavailable", err)
	}
	// The interpreter opens the question a moment after the start; only then can an answer be sent.
	may := newEngine(t, nil)
	for st, err := may.Describe(ctx, tg, r); err != nil || st.State != driver.InputRequired; st, err = may.Describe(ctx, tg, r) {
		if ctx.Err() != nil {
			t.Fatalf("the execution never asked: %+v, %v", st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	noSend := newEngine(t, &calls{deniedOp: "SendTaskFailure"})
	wantSend := fmt.Sprintf("answering %q of execution %s: taskgate may not: grant it states:SendTaskSuccess and states:SendTaskFailure: ", "confirm", r.ID)
	if err := noSend.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "decline"}); err == nil || !strings.HasPrefix(err.Error(), wantSend) {
		t.Errorf("Answer without states:SendTaskFailure: %v, want %q...", err, wantSend)
	}
	// Answered through an engine that may, so that the execution ends.
	if err := may.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "decline"}); err != nil {
		t.Fatal(err)
	}
}

// A running poll reads the history only of state machines that can ask or report progress, as
// Check finds from the definition, or as the mapping says (Target.Details): otherwise it is one
// DescribeExecution.
func TestHistoryReadOnlyWhenWorthIt(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	arns := createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho, sfnexamples.AskAndEcho)
	for _, tc := range []struct {
		name      string
		target    driver.Target
		input     string
		readCalls int
		calls     map[string]int
		state     driver.State
	}{
		{"wait and echo", stateMachine(t, arns[sfnexamples.WaitAndEcho]), `{"seconds":600,"text":"x"}`, 1,
			map[string]int{"DescribeExecution": 1}, driver.Working},
		{"wait and echo, history: true", mapped(t, arns[sfnexamples.WaitAndEcho], true), `{"seconds":600,"text":"x"}`, 2,
			map[string]int{"DescribeExecution": 1, "GetExecutionHistory": 1}, driver.Working},
		{"ask and echo", stateMachine(t, arns[sfnexamples.AskAndEcho]), `{"message":"Ship it?"}`, 2,
			map[string]int{"DescribeExecution": 1, "GetExecutionHistory": 1}, driver.InputRequired},
		{"ask and echo, history: false", mapped(t, arns[sfnexamples.AskAndEcho], false), `{"message":"Ship it?"}`, 1,
			map[string]int{"DescribeExecution": 1}, driver.Working},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := e.Check(ctx, tc.target)
			if err != nil || info.ReadCalls != tc.readCalls {
				t.Errorf("Check: ReadCalls %d, %v; want %d", info.ReadCalls, err, tc.readCalls)
			}
			r, err := e.Start(ctx, tc.target, driver.StartRequest{Input: json.RawMessage(tc.input)})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Cancel(context.WithoutCancel(ctx), tc.target, r, "test over")
			enginetest.AwaitStatus(ctx, t, e, tc.target, r, tc.state.String(), func(st driver.Status) bool { return st.State == tc.state })
			before := c.snapshot()
			st, err := e.Describe(ctx, tc.target, r)
			if err != nil || st.State != tc.state {
				t.Errorf("Describe: %v %v, want %v", st.State, err, tc.state)
			}
			if got := c.since(before); !maps.Equal(got, tc.calls) {
				t.Errorf("Describe of a running execution made %v, want %v", got, tc.calls)
			}
		})
	}
}

// mapped is the target of a tool that maps arn as stateMachine: {arn: ..., history: history}.
func mapped(t *testing.T, arn string, history bool) driver.Target {
	t.Helper()
	set, err := mapping.Parse("t.yaml", []byte(fmt.Sprintf("engines: {a: {stepfunctions: {}}}\ntools:\n"+
		"  - {name: t, description: d, engine: a, inputSchema: {type: object}, stateMachine: {arn: %q, history: %v}}\n", arn, history)))
	if err != nil {
		t.Fatal(err)
	}
	return set.Tools[0].Target
}
