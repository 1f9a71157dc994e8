package stepfunctions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
)

// asking starts AskAndEcho and waits until it asks.
func asking(ctx context.Context, t *testing.T, e driver.Conn) (driver.Target, driver.Ref) {
	t.Helper()
	tg := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.AskAndEcho)[sfnexamples.AskAndEcho])
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"message":"Ship it?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", func(st driver.Status) bool { return st.State == driver.InputRequired })
	return tg, r
}

// An answer over the 256 KiB a task's output may hold is refused with no API call; the question
// stays open and a normal answer completes the execution.
func TestAnswerOverTheLimit(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	tg, r := asking(ctx, t, e)

	over, _ := json.Marshal(map[string]any{"confirm": true, "pad": strings.Repeat("x", 256<<10)})
	before := c.total()
	err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: driver.ActionAccept, Content: over})
	want := fmt.Sprintf("answering %q of execution %s: invalid request: the answer is 256.0 KiB; Step Functions takes answers of at most 256 KiB (262144 bytes)", "confirm", r.ID)
	if !errors.Is(err, driver.ErrInvalid) || err.Error() != want {
		t.Errorf("an answer of %d bytes: %v\nwant %s", len(over), err, want)
	}
	if n := c.total() - before; n != 0 {
		t.Errorf("an answer over the limit made %d API calls, want none", n)
	}
	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: driver.ActionAccept, Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatalf("a normal answer after the refused one: %v", err)
	}
	if out := awaitOutcome(t, e, tg, r); out.State != driver.Succeeded || !sameJSON(out.Output, json.RawMessage(`{"confirm":true}`)) {
		t.Errorf("outcome %+v, want succeeded with the answer", out)
	}
}

// taskToken is the token of the task the execution waits on, from its history.
func taskToken(ctx context.Context, t *testing.T, c *sfn.Client, r driver.Ref) string {
	t.Helper()
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(r.ID), ReverseOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range h.Events {
		if d := ev.TaskScheduledEventDetails; d != nil {
			var p struct {
				Entries []struct{ Detail struct{ TaskToken string } }
			}
			if json.Unmarshal([]byte(aws.ToString(d.Parameters)), &p) == nil && len(p.Entries) == 1 {
				return p.Entries[0].Detail.TaskToken
			}
		}
	}
	t.Fatalf("no task token in the history of %s", r.ID)
	return ""
}

// An execution that succeeds with an output that is not JSON ends Failed, saying so. Step
// Functions refuses such an output (InvalidOutput); the local endpoint (moto) takes it from
// another sender of SendTaskSuccess (NaN, a bare string) and returns it as the execution's output.
func TestAnOutputThatIsNotJSONIsAFailure(t *testing.T) {
	ctx := testContext(t)
	e := newEngine(t, nil)
	for _, tc := range []struct{ sent, cause string }{
		{`{"confirm":NaN}`, "it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 12)"},
		{`"yes"`, "it is not valid JSON (invalid character 'y' looking for beginning of value, at byte 1)"},
	} {
		tg, r := asking(ctx, t, e)
		if _, err := sfnClient(t, e).SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(taskToken(ctx, t, sfnClient(t, e), r)), Output: aws.String(tc.sent)}); err != nil {
			t.Fatalf("SendTaskSuccess %s: %v", tc.sent, err)
		}
		want := driver.Outcome{State: driver.Failed, Native: "SUCCEEDED", Error: driver.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: " + tc.cause}
		out := awaitOutcome(t, e, tg, r)
		if out.State != want.State || out.Native != want.Native || out.Error != want.Error || out.Cause != want.Cause || out.Output != nil {
			t.Errorf("sent %s: outcome %+v\nwant %+v", tc.sent, out, want)
		}
		if got, err := e.Outcome(ctx, tg, r); err != nil || got.Cause != want.Cause {
			t.Errorf("sent %s: Outcome %+v, %v; want the same as Wait's", tc.sent, got, err)
		}
	}
}
