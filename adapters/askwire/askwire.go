// Package askwire is what a running workflow and taskgate's drivers share of the questions it
// asks and their answers on every engine: the JSON shapes of a question, of the reply taskgate
// delivers, and of the answer the workflow reads. It names no engine and imports no engine SDK.
// Each engine's own names (where the questions and the progress are kept, how answers arrive)
// and records (the open questions with what only that engine needs) are in a small package of
// that engine's, beside its driver, which imports no engine SDK either (adapters/ENGINE/ENGINEwire):
// its driver speaks to the engine through the client API alone, while its worker-side helper
// writes and reads the same types. Each helper's package comment describes its engine's protocol.
package askwire

import (
	"encoding/json"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
)

// Question is one open question as the workflow records it: its key, unique among the open
// questions, what the person reads, and the JSON Schema of the answer. An engine whose answers
// need more of a question (the id of what the answer resolves) records its own type, which embeds
// this one.
type Question struct {
	Key     string          `json:"key"`
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema"`
}

// Asked returns q as the engine contract holds it.
func (q Question) Asked() adapters.Question {
	return adapters.Question{Key: q.Key, Message: q.Message, Schema: q.Schema}
}

// Reply is an answer as taskgate delivers it to the workflow, however the engine carries it (the
// argument of a message to the workflow; the value of a promise the question made, which then
// needs no Key: the promise is the question's own).
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
