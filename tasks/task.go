package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// Task is one task as read from its id and, when read, its engine. The dialects only render it.
type Task struct {
	// ID is the task id the client holds.
	ID   string
	Tool *mapping.Tool
	// Status is the execution's, as the engine last told (or, just started, "working").
	Status adapters.Status
	// Result is the tool result once the execution ended with an output or an error.
	Result *Result
	// Failure is set instead of Result when the execution ended in a protocol error: a failure
	// type the tool lists under protocolErrors, or an output that cannot become a result.
	Failure *Failure
	claims  token.Claims
}

// Result is what a tool call returns, before a dialect puts it on the wire.
type Result struct {
	Text string
	// Structured is the structured result, a JSON value; nil when there is none.
	Structured json.RawMessage
	IsError    bool
}

// ToolError returns a result that reports an error to the model.
func ToolError(format string, args ...any) *Result {
	return &Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// Failure is a protocol error that ended a task: every dialect reports it as an internal error
// with this message.
type Failure struct {
	Message string
}

// Ref returns the engine's own reference of the task's execution.
func (t *Task) Ref() adapters.Ref { return t.claims.Ref }

// execution names the execution t reads, whatever the spelling of its id: its engine block, its
// target and its Ref.
func (t *Task) execution() string {
	return t.Tool.Engine + "\x00" + t.Tool.Target.Name + "\x00" + t.claims.Ref.ID
}

// Ended reports whether the execution has ended.
func (t *Task) Ended() bool { return t.Status.State.Terminal() }

// Failed reports whether the task ended with an error of either kind (an execution that failed
// and whose outcome was not read is failed too).
func (t *Task) Failed() bool {
	return t.Failure != nil || (t.Result != nil && t.Result.IsError) || (t.Result == nil && t.Status.State == adapters.Failed)
}

// CreatedAt returns when the task was created.
func (t *Task) CreatedAt() time.Time {
	if !t.claims.Created.IsZero() {
		return t.claims.Created
	}
	return t.Status.Started
}

// UpdatedAt returns the time as of which the status is true: a running execution's reading time
// (readings are reused, and may be older under load), else the engine's last change.
func (t *Task) UpdatedAt() time.Time {
	at := t.Status.Updated
	if !t.Status.State.Terminal() && t.Status.ReadAt.After(at) {
		at = t.Status.ReadAt
	}
	if at.After(t.CreatedAt()) {
		return at
	}
	return t.CreatedAt()
}

// PollInterval returns the interval suggested to the task's pollers at its present age, or longer,
// until the engine will next be read for it (which grows with the load on the read budget).
func (t *Task) PollInterval() time.Duration {
	d := t.Tool.PollIntervalAt(time.Since(t.CreatedAt()))
	if next := time.Until(t.Status.NextReadAt); !t.Status.State.Terminal() && next > d {
		d = next.Round(time.Millisecond)
	}
	return d
}

// pace is how the task is polled, which its engine's reads of it are told: its tool's curve, from
// its creation when its id says when.
func (t *Task) pace() pace.Pace { return pace.Pace{Created: t.claims.Created, Curve: t.Tool} }

// TTL says how long the task id is honoured after its creation; zero when unlimited.
func (t *Task) TTL() time.Duration {
	if t.claims.Tool == "" { // a native id carries no ttl: the mapping's applies
		return t.Tool.TTL
	}
	return t.claims.TTL
}

// Message returns the task's status message: the engine's, or words for its state. While the task
// waits on answers it is the questions themselves, whatever else the engine says (its progress, or
// only the questions' keys): a client that cannot read the questions otherwise (stateless HTTP
// before 2026-07-28, the handle tools) sees them there.
func (t *Task) Message() string {
	if t.Status.State == adapters.InputRequired && len(t.Status.Inputs) > 0 {
		return awaiting(t.Status.Inputs)
	}
	if t.Status.Message != "" {
		return t.Status.Message
	}
	switch t.Status.State {
	case adapters.Submitted:
		return "Accepted; waiting for a worker to pick it up."
	case adapters.Working:
		return "Running (" + t.Status.Native + ")."
	case adapters.Succeeded:
		return "Completed (" + t.Status.Native + ")."
	case adapters.Failed:
		return "Ended with an error (" + t.Status.Native + ")."
	case adapters.Cancelled:
		return "Cancelled (" + t.Status.Native + ")."
	}
	return ""
}

// awaiting says which questions a task waits on, each with its text.
func awaiting(qs []adapters.Question) string {
	if len(qs) == 1 {
		return fmt.Sprintf("waiting for an answer to %q: %s", qs[0].Key, qs[0].Message)
	}
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = fmt.Sprintf("%q: %s", q.Key, q.Message)
	}
	return fmt.Sprintf("waiting for answers to %d questions: %s", len(qs), strings.Join(parts, "; "))
}

// settle turns how an execution ended into the tool's result, or into a protocol failure when the
// failure type is one of the tool's protocolErrors or the output cannot become a result.
func settle(tool *mapping.Tool, o adapters.Outcome) (*Result, *Failure) {
	switch o.State {
	case adapters.Succeeded:
		structured, err := tool.StructuredResult(o.Output)
		if err == nil {
			var text string
			if text, err = tool.ResultText(structured); err == nil {
				out := &Result{Text: text}
				if !isJSONNull(structured) {
					out.Structured = structured
				}
				return out, nil
			}
		}
		return nil, &Failure{Message: fmt.Sprintf("%s succeeded, but its output could not be turned into the tool result: %v", tool.Name, err)}
	case adapters.Failed:
		if slices.Contains(tool.ProtocolErrors, o.Error) {
			return nil, &Failure{Message: failureText(o)}
		}
		return &Result{Text: failureText(o), IsError: true}, nil
	case adapters.Cancelled:
		return ToolError("The workflow was cancelled (%s)%s", o.Native, prefixed(": ", o.Cause)), nil
	}
	return nil, &Failure{Message: fmt.Sprintf("the workflow is %s (%s) and has no result", o.State, o.Native)}
}

func failureText(o adapters.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The workflow ended %s", o.Native)
	if o.Error != "" {
		fmt.Fprintf(&b, " with error %s", o.Error)
	}
	b.WriteString(prefixed(": ", o.Cause))
	return b.String()
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func isJSONNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || string(b) == "null"
}
