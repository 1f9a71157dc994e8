package stepfunctions

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

// events builds a history as Step Functions writes it: ids from 1, each event naming the one
// before it in its branch.
type events struct{ list []types.HistoryEvent }

func (b *events) add(prev int64, ev types.HistoryEvent) int64 {
	ev.Id, ev.PreviousEventId = int64(len(b.list)+1), prev
	b.list = append(b.list, ev)
	return ev.Id
}

func (b *events) entered(prev int64, typ types.HistoryEventType, name string) int64 {
	return b.add(prev, types.HistoryEvent{Type: typ, StateEnteredEventDetails: &types.StateEnteredEventDetails{Name: aws.String(name)}})
}

func (b *events) exited(prev int64, typ types.HistoryEventType, name string) int64 {
	return b.add(prev, types.HistoryEvent{Type: typ, StateExitedEventDetails: &types.StateExitedEventDetails{Name: aws.String(name)}})
}

// wait adds a state that waits for a task token with parameters, up to its submission.
func (b *events) wait(prev int64, name, parameters string) (submitted int64) {
	id := b.entered(prev, types.HistoryEventTypeTaskStateEntered, name)
	id = b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskScheduled, TaskScheduledEventDetails: &types.TaskScheduledEventDetails{
		Resource: aws.String("sendMessage.waitForTaskToken"), ResourceType: aws.String("sqs"), Parameters: aws.String(parameters)}})
	id = b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskStarted})
	return b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskSubmitted})
}

func (b *events) succeed(prev int64, name string) int64 {
	id := b.add(prev, types.HistoryEvent{Type: types.HistoryEventTypeTaskSucceeded})
	return b.exited(id, types.HistoryEventTypeTaskStateExited, name)
}

func body(token, block string) string {
	return fmt.Sprintf(`{"QueueUrl":"q","MessageBody":{"taskgate":%s,"taskToken":%q}}`, block, token)
}

func TestReadQuestions(t *testing.T) {
	schema := `{"type":"object","properties":{"approve":{"type":"boolean"}}}`
	var b events
	start := b.add(0, types.HistoryEvent{Type: types.HistoryEventTypeExecutionStarted})
	par := b.entered(start, types.HistoryEventTypeParallelStateEntered, "Both")
	b.wait(par, "Approve", body("tok-approve", `{"key":"approve","message":"Deploy?","schema":`+schema+`}`))
	answered := b.wait(par, "Answered", body("tok-answered", `{"key":"done"}`))
	b.succeed(answered, "Answered")
	b.wait(par, "Plain", body("tok-plain", `{}`))
	b.wait(par, "Again", body("tok-again", `{"key":"approve","message":"a second approve, asked once the first is answered"}`))
	b.wait(par, "Elsewhere", `{"Entries":[{"Detail":"{\"taskgate\":{\"key\":\"in-text\"},\"taskToken\":\"tok-text\"}"}]}`)
	b.wait(par, "NoToken", `{"MessageBody":{"taskgate":{"key":"x"}}}`)
	b.wait(par, "BadSchema", body("tok-bad", `{"schema":{"type":"string"}}`))
	b.wait(par, "Callback", `{"MessageBody":{"job":"not a question"},"taskToken":"tok"}`)

	for name, list := range map[string][]types.HistoryEvent{
		"oldest first": b.list,
		"newest first": reversed(b.list),
	} {
		got := read(list)
		want := []wait{
			{driver.Question{Key: "approve", Message: "Deploy?", Schema: json.RawMessage(schema)}, "tok-approve"},
			{driver.Question{Key: "Plain", Message: "State Plain waits for an answer.", Schema: defaultSchema}, "tok-plain"},
			{driver.Question{Key: "in-text", Message: "State Elsewhere waits for an answer.", Schema: defaultSchema}, "tok-text"},
		}
		if !reflect.DeepEqual(got.waits, want) {
			t.Errorf("%s: waits\n%+v\nwant\n%+v", name, got.waits, want)
		}
		const wantMessage = `running Again, NoToken, BadSchema, Callback; waiting for answers to 3 questions; ` +
			`state NoToken waits for a task token, but its taskgate block has no "taskToken.$": "$$.Task.Token" beside it; ` +
			`state BadSchema waits for a task token, but its taskgate block's schema is not a JSON Schema of type object, like {"type":"object","properties":{"approve":{"type":"boolean"}}}`
		if got.message != wantMessage || got.ended {
			t.Errorf("%s: message %q, ended %v\nwant %q", name, got.message, got.ended, wantMessage)
		}
	}
}

func reversed(list []types.HistoryEvent) []types.HistoryEvent {
	r := slices.Clone(list)
	slices.Reverse(r)
	return r
}

func TestReadProgress(t *testing.T) {
	var b events
	start := b.add(0, types.HistoryEvent{Type: types.HistoryEventTypeExecutionStarted})
	m := b.entered(start, types.HistoryEventTypeMapStateEntered, "Test")
	ms := b.add(m, types.HistoryEvent{Type: types.HistoryEventTypeMapStateStarted, MapStateStartedEventDetails: &types.MapStateStartedEventDetails{Length: 5}})
	iteration := func(i int32) int64 {
		return b.add(ms, types.HistoryEvent{Type: types.HistoryEventTypeMapIterationStarted, MapIterationStartedEventDetails: &types.MapIterationEventDetails{Name: aws.String("Test"), Index: i}})
	}
	for i := range int32(2) {
		id := b.entered(iteration(i), types.HistoryEventTypeWaitStateEntered, "RunSuite")
		id = b.exited(id, types.HistoryEventTypeWaitStateExited, "RunSuite")
		b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeMapIterationSucceeded, MapIterationSucceededEventDetails: &types.MapIterationEventDetails{Name: aws.String("Test"), Index: i}})
	}
	b.entered(iteration(2), types.HistoryEventTypeWaitStateEntered, "RunSuite")
	notify := b.entered(iteration(3), types.HistoryEventTypeTaskStateEntered, "Notify")
	id := notify
	for attempt := range 3 {
		id = b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskScheduled, TaskScheduledEventDetails: &types.TaskScheduledEventDetails{Resource: aws.String("sendMessage")}})
		id = b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskStarted})
		if attempt < 2 {
			id = b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskFailed, TaskFailedEventDetails: &types.TaskFailedEventDetails{
				Error: aws.String("SQS.QueueDoesNotExist"), Cause: aws.String(fmt.Sprintf("no queue (%d)", attempt+1))}})
		}
	}
	const want = "running Test (2 of 5 items done), RunSuite, Notify (attempt 3, last error SQS.QueueDoesNotExist: no queue (2))"
	if got := read(b.list); got.message != want || got.ended || len(got.waits) > 0 {
		t.Errorf("read: %+v\nwant message %q", got, want)
	}

	// Only the newest events count: with 190 more, the window begins after the third RunSuite was
	// entered (event 13) and before Notify was (event 15), so neither the Map nor RunSuite is seen.
	for range historyWindow - 10 {
		id = b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeTaskStarted})
	}
	const windowed = "running Notify (attempt 3, last error SQS.QueueDoesNotExist: no queue (2))"
	if got := read(b.list); got.message != windowed {
		t.Errorf("read of more than the window: %q, want %q", got.message, windowed)
	}
	b.add(id, types.HistoryEvent{Type: types.HistoryEventTypeExecutionFailed})
	if got := read(reversed(b.list)); !got.ended {
		t.Errorf("read of an ended execution: %+v, want ended", got)
	}
}

func TestReadKeyOfAWaitEnteredBeforeTheWindow(t *testing.T) {
	var b events
	id := b.wait(0, "Approve", body("tok", `{}`))
	list := b.list[1:] // the state's entered event is older than the events read
	got := read(list)
	want := []wait{{driver.Question{Key: "event-2", Message: "State (entered before the events read) waits for an answer.", Schema: defaultSchema}, "tok"}}
	if !reflect.DeepEqual(got.waits, want) || id != 4 {
		t.Errorf("waits %+v, want %+v", got.waits, want)
	}
}
