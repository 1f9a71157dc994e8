// Package taskgateflow is what a Temporal workflow imports to ask the person behind an MCP client
// a question while it runs, and to say how far along it is. taskgate serves the workflow as an MCP
// tool: the client sees the question as input_required, and its answer comes back to the workflow.
//
//	func Deploy(ctx workflow.Context, in Input) (Output, error) {
//		inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
//		if err != nil {
//			return Output{}, err
//		}
//		_ = taskgateflow.Progress(ctx, "building "+in.Version)
//		...
//		a, err := inbox.Ask(ctx, "approve", "Deploy "+in.Version+" to prod?",
//			json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean"}},"required":["approve"]}`))
//		if err != nil {
//			return Output{}, err // the workflow was cancelled while it waited
//		}
//		var answer struct{ Approve bool }
//		if !a.Accepted() || a.Decode(&answer) != nil || !answer.Approve {
//			return Output{Deployed: false}, nil
//		}
//		...
//	}
//
// # How taskgate reads and answers (the protocol, for workers in other languages too)
//
// Nothing passes through a worker when taskgate polls: the open questions and the progress are in
// the workflow's memo, which DescribeWorkflowExecution returns (and the Temporal UI shows).
//
//   - Memo MemoQuestions ("taskgate.questions"): a JSON object {"run": RUN-ID, "via": "update" or
//     "signal", "open": [{"key": K, "message": M, "schema": {...}}, ...]}, the open questions oldest
//     first; absent, null or with no open question when nothing is asked. Questions recorded by
//     another run (the memo is carried over by continue-as-new) are not open.
//   - Memo MemoProgress ("taskgate.progress"): a JSON string, what the workflow is doing. Without it,
//     taskgate describes the workflow's pending activities.
//   - The answer: the Update UpdateName ("taskgate.answer") with one argument {"key": K, "action":
//     "accept" | "decline" | "cancel", "content": {...}}. Its validator rejects an answer to a
//     question that is not open with an application error of type NotOpenType, and an answer that
//     does not fit the question's schema with type InvalidAnswerType; its handler removes the
//     question from the memo before it returns, so the next describe no longer shows it. With
//     "via": "signal", taskgate sends the same argument as the signal SignalName instead, for
//     servers where Updates are turned off: the caller then does not learn whether it was taken.
//
// Every question and every Progress call upserts the memo, which adds an event to the workflow's
// history: report progress at the steps of the work, not in a loop.
//
// The schema is checked in the workflow with github.com/santhosh-tekuri/jsonschema (draft 2020-12,
// no references to other documents): validation is pure computation and runs only in the
// validator, which Temporal does not replay, so the workflow stays deterministic.
package taskgateflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/askwire"
	"github.com/taskgate/taskgate/adapters/temporal/temporalwire"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Names of the protocol (package temporalwire).
const (
	UpdateName        = temporalwire.UpdateName
	SignalName        = temporalwire.SignalName
	MemoQuestions     = temporalwire.MemoQuestions
	MemoProgress      = temporalwire.MemoProgress
	NotOpenType       = temporalwire.NotOpenType
	InvalidAnswerType = temporalwire.InvalidAnswerType
	ViaUpdate         = temporalwire.ViaUpdate
	ViaSignal         = temporalwire.ViaSignal
)

// The actions of an answer.
const (
	Accept  = adapters.ActionAccept
	Decline = adapters.ActionDecline
	Cancel  = adapters.ActionCancel
)

// The protocol's values, shared with taskgate's driver.
type (
	// Question is one open question, as the memo holds it.
	Question = askwire.Question
	// Questions is the memo value under MemoQuestions.
	Questions = temporalwire.Questions
	// Reply is the one argument of the Update (or signal) that answers a question.
	Reply = askwire.Reply
	// Answer is how a question was answered.
	Answer = askwire.Answer
)

// Options configure an Inbox.
type Options struct {
	// Signals makes answers arrive as the signal SignalName instead of the Update UpdateName, for
	// Temporal servers with Updates turned off. The person answering then gets no word back when
	// an answer does not fit; such an answer is logged and the question stays open.
	Signals bool
}

// Inbox holds a workflow's open questions. Make one per workflow run with NewInbox, before any
// Ask; it may be used from several workflow goroutines, so several questions can be open at once.
type Inbox struct {
	via     string
	run     string
	open    []*question
	answers map[string]Answer
}

type question struct {
	Question
	schema *jsonschema.Schema
}

// NewInbox registers the handler that answers arrive through, the Update UpdateName (or the
// signal SignalName).
func NewInbox(ctx workflow.Context, opts Options) (*Inbox, error) {
	in := &Inbox{via: ViaUpdate, run: workflow.GetInfo(ctx).WorkflowExecution.RunID, answers: map[string]Answer{}}
	if opts.Signals {
		in.via = ViaSignal
		ch := workflow.GetSignalChannel(ctx, SignalName)
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				var r Reply
				if !ch.Receive(ctx, &r) {
					return
				}
				if err := in.validate(r); err != nil {
					workflow.GetLogger(ctx).Warn("taskgateflow: an answer was refused", "key", r.Key, "error", err)
					continue
				}
				if err := in.deliver(ctx, r); err != nil {
					workflow.GetLogger(ctx).Warn("taskgateflow: an answer could not be delivered", "key", r.Key, "error", err)
				}
			}
		})
		return in, nil
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateName, in.deliver, workflow.UpdateHandlerOptions{
		Validator: func(_ workflow.Context, r Reply) error { return in.validate(r) },
	})
	if err != nil {
		return nil, fmt.Errorf("taskgateflow: registering the Update %s: %w", UpdateName, err)
	}
	return in, nil
}

// Ask opens a question and waits for its answer. key names it, unique among the open questions
// (it may be asked again once answered); message is what the person reads; schema is the JSON
// Schema (type object) of the answer, with properties of primitive types as MCP's elicitation
// forms allow. The error is ctx's when the workflow is cancelled (or ctx ends) first: the question
// is then withdrawn.
func (in *Inbox) Ask(ctx workflow.Context, key, message string, schema json.RawMessage) (Answer, error) {
	if key == "" {
		return Answer{}, errors.New("taskgateflow: a question needs a key")
	}
	if in.find(key) >= 0 {
		return Answer{}, fmt.Errorf("taskgateflow: a question %q is already open: give each open question a key of its own", key)
	}
	compiled, err := compile(schema)
	if err != nil {
		return Answer{}, fmt.Errorf("taskgateflow: the schema of question %q: %w", key, err)
	}
	in.open = append(in.open, &question{Question{Key: key, Message: message, Schema: schema}, compiled})
	if err := in.record(ctx); err != nil {
		in.withdraw(key)
		return Answer{}, err
	}
	if err := workflow.Await(ctx, func() bool { _, ok := in.answers[key]; return ok }); err != nil {
		in.withdraw(key)
		// Recorded on a context of its own: the workflow may go on after a cancellation.
		dctx, cancel := workflow.NewDisconnectedContext(ctx)
		defer cancel()
		if rerr := in.record(dctx); rerr != nil {
			return Answer{}, errors.Join(err, rerr)
		}
		return Answer{}, err
	}
	a := in.answers[key]
	delete(in.answers, key)
	return a, nil
}

// Progress says what the workflow is doing, for taskgate to show while it runs (and the Temporal
// UI in the memo); "" withdraws it, so that taskgate describes the pending activities again.
func Progress(ctx workflow.Context, message string) error {
	var v any = message
	if message == "" {
		v = nil
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{MemoProgress: v}); err != nil {
		return fmt.Errorf("taskgateflow: recording progress: %w", err)
	}
	return nil
}

func (in *Inbox) find(key string) int {
	return slices.IndexFunc(in.open, func(q *question) bool { return q.Key == key })
}

func (in *Inbox) withdraw(key string) {
	if i := in.find(key); i >= 0 {
		in.open = slices.Delete(in.open, i, i+1)
	}
}

// record writes the open questions into the memo; none removes the key.
func (in *Inbox) record(ctx workflow.Context) error {
	var v any
	if len(in.open) > 0 {
		qs := Questions{Run: in.run, Via: in.via, Open: make([]Question, len(in.open))}
		for i, q := range in.open {
			qs.Open[i] = q.Question
		}
		v = qs
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{MemoQuestions: v}); err != nil {
		return fmt.Errorf("taskgateflow: recording the open questions: %w", err)
	}
	return nil
}

// validate says whether r answers an open question as its schema asks. It runs in the Update's
// validator, which reads and never changes the workflow's state.
func (in *Inbox) validate(r Reply) error {
	i := in.find(r.Key)
	if i < 0 {
		return temporal.NewApplicationError(fmt.Sprintf("no open question %q: it was answered, or never asked", r.Key), NotOpenType)
	}
	switch r.Action {
	case Decline, Cancel:
		return nil
	case Accept:
	default:
		return temporal.NewApplicationError(fmt.Sprintf("answer action %q: want accept, decline or cancel", r.Action), InvalidAnswerType)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Content))
	if err != nil {
		return temporal.NewApplicationError(fmt.Sprintf("the answer to %q is not JSON: %v", r.Key, err), InvalidAnswerType)
	}
	if err := in.open[i].schema.Validate(v); err != nil {
		return temporal.NewApplicationError(fmt.Sprintf("the answer to %q does not fit its schema: %s", r.Key, why(err)), InvalidAnswerType)
	}
	return nil
}

// deliver hands an answer to the Ask that waits for it, and removes the question from the memo
// before the Update completes.
func (in *Inbox) deliver(ctx workflow.Context, r Reply) error {
	i := in.find(r.Key)
	if i < 0 {
		return temporal.NewApplicationError(fmt.Sprintf("no open question %q: it was answered, or never asked", r.Key), NotOpenType)
	}
	in.open = slices.Delete(in.open, i, i+1)
	a := Answer{Action: r.Action}
	if r.Action == Accept {
		a.Content = r.Content
	}
	in.answers[r.Key] = a
	return in.record(ctx)
}

// schemaURL names an answer schema for the compiler; nothing is ever loaded.
const schemaURL = "mem:///answer.json"

// compile compiles an answer schema: a JSON object of type object, draft 2020-12 unless its
// $schema says otherwise, with no references to other documents.
func compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if obj, ok := doc.(map[string]any); !ok || obj["type"] != "object" {
		return nil, errors.New(`it must be a JSON Schema of type object, like {"type":"object","properties":{"approve":{"type":"boolean"}}}`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(nil)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

var printer = message.NewPrinter(language.English)

// why says what is wrong with an answer, every leaf error as "at PATH: reason", in a stable order.
func why(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, fmt.Sprintf("at %q: %s", "/"+strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer)))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(leaves)
	return strings.Join(leaves, "; ")
}
