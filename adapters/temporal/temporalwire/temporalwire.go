// Package temporalwire is what a Temporal workflow and taskgate's Temporal driver share of its
// questions, their answers and its progress, beside the engine-neutral shapes of package askwire:
// the names of the memo fields, of the Update and the signal that deliver answers, of the errors
// that refuse them, and the memo record of the open questions. It imports no Temporal SDK, so
// that the driver (adapters/temporal, client API only) and the worker-side helper
// (adapters/temporal/taskgateflow, whose package comment describes the protocol) import it alike.
//
// These are wire names that deployed workflows write and read: they never change.
package temporalwire

import "github.com/taskgate/taskgate/adapters/askwire"

// The questions and the progress are memo fields, and answers arrive by Update (or signal).
const (
	// UpdateName is the Update that delivers answers.
	UpdateName = "taskgate.answer"
	// SignalName is the signal that delivers answers when a workflow asks for signals.
	SignalName = "taskgate.answer"
	// MemoQuestions is the memo key of the open questions (a Questions).
	MemoQuestions = "taskgate.questions"
	// MemoProgress is the memo key of the progress message (a string).
	MemoProgress = "taskgate.progress"
	// NotOpenType is the application error type of a rejected answer to a question that is not
	// open.
	NotOpenType = "taskgate.NotOpen"
	// InvalidAnswerType is the application error type of a rejected answer that does not fit.
	InvalidAnswerType = "taskgate.InvalidAnswer"
	// ViaUpdate and ViaSignal are the ways answers arrive, as Questions.Via names them.
	ViaUpdate = "update"
	ViaSignal = "signal"
)

// Questions is the memo value under MemoQuestions.
type Questions struct {
	// Run is the run id of the run that asks them.
	Run string `json:"run"`
	// Via is ViaUpdate or ViaSignal.
	Via  string             `json:"via"`
	Open []askwire.Question `json:"open"`
}
