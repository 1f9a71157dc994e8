// Package taskgatehandler is what a Restate handler imports to ask the person behind an MCP client
// a question while it runs, to say how far along it is, and to name its failures. taskgate serves
// the handler as an MCP tool: the client sees the question as input_required, and its answer comes
// back to the handler.
//
// Questions and progress live in the state of the handler's workflow or virtual object, so only
// a workflow's run handler and a virtual object's exclusive handlers can use them:
//
//	func (Deploy) Run(ctx restate.WorkflowContext, in Input) (Output, error) {
//		taskgatehandler.Progress(ctx, "building "+in.Version)
//		...
//		a, err := taskgatehandler.Ask(ctx, "approve", "Deploy "+in.Version+" to prod?",
//			json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean"}},"required":["approve"]}`))
//		if err != nil {
//			return Output{}, err // the invocation was cancelled while it waited
//		}
//		var answer struct{ Approve bool }
//		if !a.Accepted() || a.Decode(&answer) != nil || !answer.Approve {
//			return Output{Deployed: false}, nil
//		}
//		...
//	}
//
// # How taskgate reads and answers (the protocol, for handlers in other languages too)
//
// Nothing passes through the handler when taskgate polls: it reads the state with the admin API's
// SQL (the state table), in the same query as the invocation's status.
//
//   - State StateQuestions ("taskgate.questions"): a JSON object {"invocation": INVOCATION-ID,
//     "open": [{"key": K, "message": M, "schema": {...}, "awakeable": AWAKEABLE-ID}, ...]}, the open
//     questions oldest first; absent, or with no open question, when nothing is asked. Questions
//     another invocation recorded are not open.
//   - State StateProgress ("taskgate.progress"): a JSON string, what the handler is doing.
//   - The answer: taskgate resolves the question's awakeable through the ingress with a Reply,
//     {"action": "accept" | "decline" | "cancel", "content": {...}}, already checked against the
//     question's schema. The handler removes the question from the state once it has read it, and
//     taskgate's answer returns once the question is gone.
//   - Failures: a terminal error whose metadata MetadataError ("taskgate.error") names the failure
//     (like "Example.Failure") reaches the MCP client under that name, with the error's message as
//     its cause; without it, the name is "TerminalError".
//
// Every question and progress report is a state write, journaled by Restate: report progress at
// the steps of the work, not in a loop.
package taskgatehandler

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	restate "github.com/restatedev/sdk-go"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/askwire"
	"github.com/taskgate/taskgate/adapters/restate/restatewire"
)

// Names of the protocol (package restatewire).
const (
	StateQuestions = restatewire.StateQuestions
	StateProgress  = restatewire.StateProgress
	MetadataError  = restatewire.MetadataError
)

// The actions of an answer.
const (
	Accept  = adapters.ActionAccept
	Decline = adapters.ActionDecline
	Cancel  = adapters.ActionCancel
)

// The protocol's values, shared with taskgate's driver.
type (
	// Question is one open question, as the state holds it: askwire's question and its awakeable.
	Question = restatewire.Question
	// Questions is the state value under StateQuestions.
	Questions = restatewire.Questions
	// Reply is what taskgate resolves a question's awakeable with.
	Reply = askwire.Reply
)

// Answer is how a question was answered.
type Answer struct{ askwire.Answer }

// Refusal returns the failure to end with when the question key was not accepted: nil when it was,
// a terminal error named adapters.DeclinedError or adapters.DismissedError otherwise, the names
// taskgate's other engines give these failures too.
func (a Answer) Refusal(key string) error {
	switch a.Action {
	case Accept:
		return nil
	case Decline:
		return Fail(adapters.DeclinedError, fmt.Sprintf("the question %q was declined", key))
	}
	return Fail(adapters.DismissedError, fmt.Sprintf("the question %q was dismissed", key))
}

// Fail returns a terminal error that reaches the MCP client as a failure called name, with cause as
// its message.
func Fail(name, cause string) error {
	return restate.ToTerminalError(errors.New(cause), restate.WithMetadata(MetadataError, name))
}

// Asking is an open question.
type Asking struct {
	key   string
	reply restate.AwakeableFuture[Reply]
}

// Open asks a question and returns at once: it is open until Await reads its answer. key names it,
// unique among the open questions (it may be asked again once answered); message is what the
// person reads; schema is the JSON Schema (type object) of the answer, with properties of
// primitive types as MCP's elicitation forms allow.
func Open(ctx restate.ObjectContext, key, message string, schema json.RawMessage) (*Asking, error) {
	if key == "" {
		return nil, errors.New("taskgatehandler: a question needs a key")
	}
	qs, err := questions(ctx)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(qs.Open, func(q Question) bool { return q.Key == key }) {
		return nil, fmt.Errorf("taskgatehandler: a question %q is already open: give each open question a key of its own", key)
	}
	reply := restate.Awakeable[Reply](ctx)
	qs.Open = append(qs.Open, Question{Question: askwire.Question{Key: key, Message: message, Schema: schema}, Awakeable: reply.Id()})
	restate.Set(ctx, StateQuestions, qs)
	return &Asking{key: key, reply: reply}, nil
}

// Ask asks one question and waits for its answer. The error is the invocation's cancellation when
// it is cancelled first: the question is then withdrawn.
func Ask(ctx restate.ObjectContext, key, message string, schema json.RawMessage) (Answer, error) {
	q, err := Open(ctx, key, message, schema)
	if err != nil {
		return Answer{}, err
	}
	answers, err := Await(ctx, q)
	return answers[key], err
}

// Await waits for the answers to open questions, by key, closing each as its answer arrives. On
// a cancellation, the questions still open are withdrawn and the cancellation returned.
func Await(ctx restate.ObjectContext, open ...*Asking) (map[string]Answer, error) {
	futures := make([]restate.Future, len(open))
	for i, q := range open {
		futures[i] = q.reply
	}
	answers := map[string]Answer{}
	for done, err := range restate.Wait(ctx, futures...) {
		if err != nil {
			return answers, errors.Join(err, withdraw(ctx, open...))
		}
		i := slices.IndexFunc(open, func(q *Asking) bool { return restate.Future(q.reply) == done })
		q := open[i]
		r, err := q.reply.Result()
		if err != nil {
			return answers, errors.Join(err, withdraw(ctx, open...))
		}
		if err := withdraw(ctx, q); err != nil {
			return answers, err
		}
		answers[q.key] = Answer{askwire.Answer{Action: r.Action, Content: r.Content}}
		open = slices.Delete(open, i, i+1)
	}
	return answers, nil
}

// Progress says what the handler is doing, for taskgate to show while it runs; "" withdraws it.
func Progress(ctx restate.ObjectContext, message string) {
	if message == "" {
		restate.Clear(ctx, StateProgress)
		return
	}
	restate.Set(ctx, StateProgress, message)
}

// questions reads the open questions of this invocation.
func questions(ctx restate.ObjectContext) (Questions, error) {
	id := ctx.Request().ID
	qs, err := restate.Get[Questions](ctx, StateQuestions)
	if err != nil {
		return Questions{}, fmt.Errorf("taskgatehandler: reading the open questions (state %s): %w", StateQuestions, err)
	}
	if qs.Invocation != id {
		qs = Questions{Invocation: id}
	}
	return qs, nil
}

// withdraw removes questions from the open ones.
func withdraw(ctx restate.ObjectContext, done ...*Asking) error {
	qs, err := questions(ctx)
	if err != nil {
		return err
	}
	qs.Open = slices.DeleteFunc(qs.Open, func(q Question) bool {
		return slices.ContainsFunc(done, func(a *Asking) bool { return a.key == q.Key })
	})
	if len(qs.Open) == 0 {
		restate.Clear(ctx, StateQuestions)
	} else {
		restate.Set(ctx, StateQuestions, qs)
	}
	return nil
}
