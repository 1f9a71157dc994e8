// Package askwire is what a running workflow and taskgate's drivers share of the questions it
// asks, their answers and its progress: the names and the JSON shapes, on every engine. It
// imports no engine SDK, so that a driver speaks to its engine through the client API alone,
// while the worker-side helpers (adapters/temporal/taskgateflow, adapters/restate/taskgatehandler)
// write and read the same types. Each helper's package comment describes its engine's protocol.
package askwire

import (
	"encoding/json"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
)

// Question is one open question as the workflow records it.
type Question struct {
	Key     string          `json:"key"`
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema"`
	// Awakeable is the id of the Restate awakeable that the answer resolves; Temporal has none.
	Awakeable string `json:"awakeable,omitempty"`
}

// Asked returns q as the engine contract holds it.
func (q Question) Asked() adapters.Question {
	return adapters.Question{Key: q.Key, Message: q.Message, Schema: q.Schema}
}

// Reply is an answer as taskgate delivers it: a Temporal Update's (or signal's) one argument, a
// Restate awakeable's value (which needs no key: the awakeable is the question's own).
type Reply struct {
	Key     string          `json:"key,omitempty"`
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Answer is how a question was answered, as the workflow reads it.
type Answer struct {
	// Action is adapters.ActionAccept, ActionDecline or ActionCancel (dismissed without a choice);
	// the workflow decides what each means.
	Action string
	// Content is the answer when accepted: a JSON object that fits the question's schema.
	Content json.RawMessage
}

// Accepted reports whether the answer has content.
func (a Answer) Accepted() bool { return a.Action == adapters.ActionAccept }

// Decode decodes the content of an accepted answer into v.
func (a Answer) Decode(v any) error {
	if !a.Accepted() {
		return fmt.Errorf("the question was not answered but %s: there is no content to decode", a.Action)
	}
	return json.Unmarshal(a.Content, v)
}

// Temporal: the questions and the progress are memo fields, and answers arrive by Update.
const (
	// UpdateName is the Update that delivers answers.
	UpdateName = "taskgate.answer"
	// SignalName is the signal that delivers answers when a workflow asks for signals.
	SignalName = "taskgate.answer"
	// MemoQuestions is the memo key of the open questions (a TemporalQuestions).
	MemoQuestions = "taskgate.questions"
	// MemoProgress is the memo key of the progress message (a string).
	MemoProgress = "taskgate.progress"
	// NotOpenType is the application error type of a rejected answer to a question that is not
	// open.
	NotOpenType = "taskgate.NotOpen"
	// InvalidAnswerType is the application error type of a rejected answer that does not fit.
	InvalidAnswerType = "taskgate.InvalidAnswer"
	// ViaUpdate and ViaSignal are the ways answers arrive, as TemporalQuestions.Via names them.
	ViaUpdate = "update"
	ViaSignal = "signal"
)

// TemporalQuestions is the memo value under MemoQuestions.
type TemporalQuestions struct {
	// Run is the run id of the run that asks them.
	Run string `json:"run"`
	// Via is ViaUpdate or ViaSignal.
	Via  string     `json:"via"`
	Open []Question `json:"open"`
}

// Restate: the questions and the progress are state of the workflow or virtual object, and
// answers resolve awakeables.
const (
	// StateQuestions is the state key of the open questions (a RestateQuestions).
	StateQuestions = "taskgate.questions"
	// StateProgress is the state key of the progress message (a string).
	StateProgress = "taskgate.progress"
	// MetadataError is the terminal error metadata key that names a failure for taskgate.
	MetadataError = "taskgate.error"
)

// RestateQuestions is the state value under StateQuestions.
type RestateQuestions struct {
	// Invocation is the id of the invocation that asks them.
	Invocation string     `json:"invocation"`
	Open       []Question `json:"open"`
}
