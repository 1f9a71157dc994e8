// Package restatewire is what a Restate handler and taskgate's Restate driver share of its
// questions, their answers and its progress, beside the engine-neutral shapes of package askwire:
// the state keys, the error metadata key that names a failure, and the state record of the open
// questions, each with the awakeable its answer resolves. It imports no Restate SDK, so that the
// driver (adapters/restate, which speaks HTTP to the admin API and the ingress) and the
// worker-side helper (adapters/restate/taskgatehandler, whose package comment describes the
// protocol) import it alike.
//
// These are wire names that deployed handlers write and read: they never change.
package restatewire

import "github.com/taskgate/taskgate/adapters/askwire"

// The questions and the progress are state of the workflow or virtual object, and answers
// resolve awakeables.
const (
	// StateQuestions is the state key of the open questions (a Questions).
	StateQuestions = "taskgate.questions"
	// StateProgress is the state key of the progress message (a string).
	StateProgress = "taskgate.progress"
	// MetadataError is the terminal error metadata key that names a failure for taskgate.
	MetadataError = "taskgate.error"
)

// Question is one open question as the state holds it: the neutral question, and the id of the
// awakeable that its answer resolves, in the same JSON object
// ({"key", "message", "schema", "awakeable"}).
type Question struct {
	askwire.Question
	// Awakeable is the id of the awakeable that the answer resolves.
	Awakeable string `json:"awakeable,omitempty"`
}

// Questions is the state value under StateQuestions.
type Questions struct {
	// Invocation is the id of the invocation that asks them.
	Invocation string     `json:"invocation"`
	Open       []Question `json:"open"`
}
