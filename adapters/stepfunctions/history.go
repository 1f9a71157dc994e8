package stepfunctions

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

// historyWindow is how many of an execution's newest events one poll reads: one page of
// GetExecutionHistory (reverseOrder, maxResults), so that a running execution costs one call
// more than an ended one whatever its length. 200 events hold a state that waits for an answer
// unless other branches wrote 200 events since it began to wait, every event of an inline Map of
// about 40 items (so its counts are exact), and a task's retries; events carry their data, so a
// bigger page would make every poll slower for what is rarely there. What lies further back is
// not seen: a wait that began before the window is not asked, and a state entered before it is
// not said to run.
const historyWindow = 200

// The taskgate block of a .waitForTaskToken state's payload, and the errors SendTaskFailure
// reports for an answer that is not accepted.
const (
	blockKey       = "taskgate"
	tokenKey       = "taskToken"
	waitSuffix     = ".waitForTaskToken"
	declinedError  = driver.DeclinedError
	dismissedError = driver.DismissedError
	// maxBlockDepth bounds how deep in a payload the block is looked for (an EventBridge entry's
	// Detail is three levels down).
	maxBlockDepth = 5
)

// defaultSchema is the answer schema of a block that gives none: any object.
var defaultSchema = json.RawMessage(`{"type":"object"}`)

// wait is an open question: a .waitForTaskToken task that has not ended, with a taskgate block.
type wait struct {
	driver.Question
	token string
}

// reading is what the newest events of an execution say.
type reading struct {
	// ended: the execution has ended (its newest event is an Execution* end).
	ended bool
	// waits are the open questions, oldest first, one per key.
	waits []wait
	// message says which states run, how far along, and what keeps a wait from being a question.
	message string
}

// history keeps the newest events of one read, whichever order the server sent them in (the AWS
// API honours reverseOrder and maxResults; some emulators send the whole history oldest first).
type history struct {
	events   []types.HistoryEvent // oldest first, at most historyWindow
	byID     map[int64]*types.HistoryEvent
	children map[int64][]*types.HistoryEvent
}

func newHistory(events []types.HistoryEvent) *history {
	events = slices.Clone(events)
	slices.SortFunc(events, func(a, b types.HistoryEvent) int { return cmp.Compare(b.Id, a.Id) })
	events = events[:min(len(events), historyWindow)]
	slices.Reverse(events)
	h := &history{events: events, byID: map[int64]*types.HistoryEvent{}, children: map[int64][]*types.HistoryEvent{}}
	for i := range events {
		ev := &events[i]
		h.byID[ev.Id] = ev
		h.children[ev.PreviousEventId] = append(h.children[ev.PreviousEventId], ev)
	}
	return h
}

// read reads the newest events of an execution.
func read(events []types.HistoryEvent) reading {
	h := newHistory(events)
	var r reading
	if n := len(h.events); n > 0 {
		switch h.events[n-1].Type {
		case types.HistoryEventTypeExecutionSucceeded, types.HistoryEventTypeExecutionFailed,
			types.HistoryEventTypeExecutionTimedOut, types.HistoryEventTypeExecutionAborted:
			r.ended = true
		}
	}
	var problems []string
	waiting := map[int64]bool{} // StateEntered event ids of states that wait for an answer
	for i := range h.events {
		ev := &h.events[i]
		d := ev.TaskScheduledEventDetails
		if ev.Type != types.HistoryEventTypeTaskScheduled || d == nil || !strings.HasSuffix(aws.ToString(d.Resource), waitSuffix) || !h.open(ev) {
			continue
		}
		entered := h.entered(ev)
		w, found, err := question(aws.ToString(d.Parameters), entered, ev.Id)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("state %s waits for a task token, but %v", stateName(entered), err))
		case found && !slices.ContainsFunc(r.waits, func(o wait) bool { return o.Key == w.Key }):
			r.waits = append(r.waits, w)
			if entered != nil {
				waiting[entered.Id] = true
			}
		}
	}
	var parts []string
	if running := h.running(waiting); len(running) > 0 {
		parts = append(parts, "running "+strings.Join(running, ", "))
	}
	if len(r.waits) > 0 {
		parts = append(parts, driver.Awaiting(r.questions()))
	}
	r.message = strings.Join(append(parts, problems...), "; ")
	return r
}

// open reports whether a scheduled task has not ended: nothing but its start and submission
// follows it.
func (h *history) open(scheduled *types.HistoryEvent) bool {
	for ev := scheduled; ; {
		next := h.children[ev.Id]
		if len(next) == 0 {
			return true
		}
		if len(next) > 1 || (next[0].Type != types.HistoryEventTypeTaskStarted && next[0].Type != types.HistoryEventTypeTaskSubmitted) {
			return false
		}
		ev = next[0]
	}
}

// entered is the StateEntered event of the state an event belongs to, nil when it is older than
// the window.
func (h *history) entered(ev *types.HistoryEvent) *types.HistoryEvent {
	for ev != nil && !strings.HasSuffix(string(ev.Type), "StateEntered") {
		ev = h.byID[ev.PreviousEventId]
	}
	return ev
}

func stateName(entered *types.HistoryEvent) string {
	if entered == nil || entered.StateEnteredEventDetails == nil {
		return "(entered before the events read)"
	}
	return aws.ToString(entered.StateEnteredEventDetails.Name)
}

// question reads the taskgate block of a wait's resolved parameters. Its key is the block's, else
// the state's name (else the scheduled event's id, when the state was entered before the window).
// found is false when the payload has no block (a wait for something else than an answer); err
// says what is wrong with a block that cannot be asked.
func question(parameters string, entered *types.HistoryEvent, eventID int64) (w wait, found bool, err error) {
	holder := findBlock(json.RawMessage(parameters), maxBlockDepth)
	if holder == nil {
		return wait{}, false, nil
	}
	var b struct {
		Message *string         `json:"message"`
		Schema  json.RawMessage `json:"schema"`
		Key     *string         `json:"key"`
	}
	if err := json.Unmarshal(holder[blockKey], &b); err != nil {
		return wait{}, true, fmt.Errorf("its taskgate block is not {message, schema, key}: %v", err)
	}
	var token string
	if json.Unmarshal(holder[tokenKey], &token) != nil || token == "" {
		return wait{}, true, fmt.Errorf(`its taskgate block has no "taskToken.$": "$$.Task.Token" beside it`)
	}
	state := stateName(entered)
	w = wait{Question: driver.Question{Key: state, Message: fmt.Sprintf("State %s waits for an answer.", state), Schema: defaultSchema}, token: token}
	switch {
	case b.Key != nil && *b.Key == "":
		return wait{}, true, fmt.Errorf("its taskgate block's key is empty")
	case b.Key != nil:
		w.Key = *b.Key
	case entered == nil:
		w.Key = fmt.Sprintf("event-%d", eventID)
	}
	if b.Message != nil {
		w.Message = *b.Message
	}
	if len(b.Schema) > 0 {
		var s struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b.Schema, &s) != nil || s.Type != "object" {
			return wait{}, true, fmt.Errorf(`its taskgate block's schema is not a JSON Schema of type object, like {"type":"object","properties":{"approve":{"type":"boolean"}}}`)
		}
		w.Schema = b.Schema
	}
	return w, true, nil
}

// findBlock finds the object that holds a taskgate block in a payload: the parameters
// themselves, or within them (an SQS MessageBody, a Lambda Payload, an EventBridge entry's
// Detail), also inside JSON text. Values keep their text, so a schema keeps the order of its
// properties, which forms show in that order.
func findBlock(v json.RawMessage, depth int) map[string]json.RawMessage {
	if depth < 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	var list []json.RawMessage
	var text string
	switch {
	case json.Unmarshal(v, &obj) == nil && obj != nil:
		var block map[string]json.RawMessage
		if json.Unmarshal(obj[blockKey], &block) == nil && block != nil {
			return obj
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if found := findBlock(obj[k], depth-1); found != nil {
				return found
			}
		}
	case json.Unmarshal(v, &list) == nil:
		for _, x := range list {
			if found := findBlock(x, depth-1); found != nil {
				return found
			}
		}
	case json.Unmarshal(v, &text) == nil && strings.HasPrefix(strings.TrimSpace(text), "{"):
		return findBlock(json.RawMessage(text), depth-1)
	}
	return nil
}

// running says which states run now, outer ones first: Maps with how many items are done,
// tasks with their attempt and last error when retried, several runs of one state (Map
// iterations) with how many. States that wait for an answer are said by the caller.
func (h *history) running(waiting map[int64]bool) []string {
	count := map[string]int{}
	latest := map[string]*types.HistoryEvent{}
	for i := range h.events {
		ev := &h.events[i]
		t := string(ev.Type)
		switch {
		case strings.HasSuffix(t, "StateEntered") && ev.StateEnteredEventDetails != nil:
			name := aws.ToString(ev.StateEnteredEventDetails.Name)
			count[name]++
			latest[name] = ev
		case strings.HasSuffix(t, "StateExited") && ev.StateExitedEventDetails != nil:
			count[aws.ToString(ev.StateExitedEventDetails.Name)]--
		case strings.HasSuffix(t, "StateAborted"):
			count[stateName(h.entered(h.byID[ev.PreviousEventId]))]--
		}
	}
	var names []string
	for name, n := range count {
		if n > 0 && !waiting[latest[name].Id] && latest[name].Type != types.HistoryEventTypeParallelStateEntered {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(latest[a].Id, latest[b].Id) })
	parts := make([]string, len(names))
	for i, name := range names {
		var details []string
		if n := count[name]; n > 1 {
			details = append(details, fmt.Sprintf("%d running", n))
		}
		switch latest[name].Type {
		case types.HistoryEventTypeMapStateEntered:
			details = append(details, h.mapProgress(latest[name])...)
		default:
			details = append(details, h.attempts(latest[name])...)
		}
		parts[i] = name
		if len(details) > 0 {
			parts[i] += " (" + strings.Join(details, ", ") + ")"
		}
	}
	return parts
}

// mapProgress says how far along an inline Map is: items done of all. (Its start event follows
// its entered event at once, so both are in the window or neither is.)
func (h *history) mapProgress(entered *types.HistoryEvent) []string {
	name := aws.ToString(entered.StateEnteredEventDetails.Name)
	var length int32 = -1
	for _, ev := range h.children[entered.Id] {
		if ev.Type == types.HistoryEventTypeMapStateStarted && ev.MapStateStartedEventDetails != nil {
			length = ev.MapStateStartedEventDetails.Length
		}
	}
	if length < 0 {
		return nil
	}
	done := 0
	for i := range h.events {
		ev := &h.events[i]
		var it *types.MapIterationEventDetails
		switch ev.Type {
		case types.HistoryEventTypeMapIterationSucceeded:
			it = ev.MapIterationSucceededEventDetails
		case types.HistoryEventTypeMapIterationFailed:
			it = ev.MapIterationFailedEventDetails
		case types.HistoryEventTypeMapIterationAborted:
			it = ev.MapIterationAbortedEventDetails
		}
		if it != nil && aws.ToString(it.Name) == name && ev.Id > entered.Id {
			done++
		}
	}
	return []string{fmt.Sprintf("%d of %d items done", done, length)}
}

// attempts says which attempt a retried task state is on, and how the last one failed.
func (h *history) attempts(entered *types.HistoryEvent) []string {
	n, last := 0, ""
	for ev := entered; ev != nil; {
		switch ev.Type {
		case types.HistoryEventTypeTaskScheduled, types.HistoryEventTypeActivityScheduled, types.HistoryEventTypeLambdaFunctionScheduled:
			n++
		}
		if name, cause, ok := failed(ev); ok {
			last = failure(name, cause)
		}
		next := h.children[ev.Id]
		if len(next) != 1 {
			break
		}
		ev = next[0]
	}
	if n < 2 {
		return nil
	}
	if last == "" {
		return []string{fmt.Sprintf("attempt %d", n)}
	}
	return []string{fmt.Sprintf("attempt %d, last error %s", n, last)}
}

// failed reads the error and cause of an event that ends a task attempt in failure.
func failed(ev *types.HistoryEvent) (name, cause string, ok bool) {
	switch {
	case ev.TaskFailedEventDetails != nil:
		return aws.ToString(ev.TaskFailedEventDetails.Error), aws.ToString(ev.TaskFailedEventDetails.Cause), true
	case ev.TaskTimedOutEventDetails != nil:
		return aws.ToString(ev.TaskTimedOutEventDetails.Error), aws.ToString(ev.TaskTimedOutEventDetails.Cause), true
	case ev.TaskStartFailedEventDetails != nil:
		return aws.ToString(ev.TaskStartFailedEventDetails.Error), aws.ToString(ev.TaskStartFailedEventDetails.Cause), true
	case ev.TaskSubmitFailedEventDetails != nil:
		return aws.ToString(ev.TaskSubmitFailedEventDetails.Error), aws.ToString(ev.TaskSubmitFailedEventDetails.Cause), true
	case ev.ActivityFailedEventDetails != nil:
		return aws.ToString(ev.ActivityFailedEventDetails.Error), aws.ToString(ev.ActivityFailedEventDetails.Cause), true
	case ev.ActivityTimedOutEventDetails != nil:
		return aws.ToString(ev.ActivityTimedOutEventDetails.Error), aws.ToString(ev.ActivityTimedOutEventDetails.Cause), true
	case ev.LambdaFunctionFailedEventDetails != nil:
		return aws.ToString(ev.LambdaFunctionFailedEventDetails.Error), aws.ToString(ev.LambdaFunctionFailedEventDetails.Cause), true
	case ev.LambdaFunctionTimedOutEventDetails != nil:
		return aws.ToString(ev.LambdaFunctionTimedOutEventDetails.Error), aws.ToString(ev.LambdaFunctionTimedOutEventDetails.Cause), true
	}
	return "", "", false
}

// questions are the questions of the open waits, in their order.
func (r reading) questions() []driver.Question {
	qs := make([]driver.Question, len(r.waits))
	for i, w := range r.waits {
		qs[i] = w.Question
	}
	return qs
}
