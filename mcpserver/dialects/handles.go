package dialects

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// handles serves clients with no task support at all (--no-task-clients handles): a call starts
// the execution and answers a handle, which the handle tools task_status, task_result,
// task_cancel and task_answer take. It speaks in tool results only, in the words of 2025-11-25.
type handles struct{ r *Router }

const handleNote = "(Runs in the background: the call returns a handle at once; pass it to task_status to follow it, task_result to read the result, task_cancel to stop it, task_answer to answer its questions.)"

var handleSchema = json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string","description":"The handle a background tool call returned."}},"required":["handle"],"additionalProperties":false}`)

var answerSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"handle":{"type":"string","description":"The handle a background tool call returned."},` +
	`"answers":{"type":"object","description":"The answers, by question key: each an object that matches the question's schema, as task_status shows it.","additionalProperties":{"type":"object"}},` +
	`"decline":{"type":"array","items":{"type":"string"},"description":"The keys of questions the user said no to."}` +
	`},"required":["handle"],"additionalProperties":false}`)

var handleTools = []struct {
	name, description string
	schema            json.RawMessage
}{
	{"task_status", "Reports the status of a background tool call, given the handle the call returned; when it waits on an answer, the questions and the schema of their answers.", handleSchema},
	{"task_result", "Returns the result of a background tool call once it has finished, given its handle; until then it reports that it is still running.", handleSchema},
	{"task_cancel", "Asks a background tool call to stop, given its handle.", handleSchema},
	{"task_answer", "Answers the questions a background tool call asks (task_status shows them), given its handle: answers by question key, or the keys the user declined.", answerSchema},
}

func isHandleTool(name string) bool {
	for _, t := range handleTools {
		if t.name == name {
			return true
		}
	}
	return false
}

// takes: in the handles mode, what no other dialect took.
func (d handles) takes(caps, *mapping.Tool) bool { return d.r.noTask == NoTaskHandles }

// call starts an execution and gives the caller its handle: the task id.
func (d handles) call(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	t, err := d.r.tasks.Start(ctx, call.request())
	if err != nil {
		return wireResult(d.toolError(call.tool.Name, err), c.modern), nil
	}
	structured, _ := json.Marshal(map[string]string{"handle": t.ID, "status": "working"})
	return wireResult(&tasks.Result{Text: fmt.Sprintf("Started %s in the background. Handle: %s\nCall task_status or task_result with this handle to follow it, task_cancel to stop it.",
		call.tool.Name, t.ID), Structured: structured}, c.modern), nil
}

func (handles) speaks(caps) bool           { return false }
func (handles) methods() map[string]method { return nil }
func (handles) words() words               { return taskWords }

// toolError is a task error as the model reads it: the handle tools answer in tool results. A
// refusal is told as the service said it; other errors are rendered as a dialect's errors are,
// after what failed.
func (d handles) toolError(what string, err error) *tasks.Result {
	if why, ok := refusal(err); ok {
		return tasks.ToolError("%s", why)
	}
	return tasks.ToolError("%s: %s", what, d.r.rpcError(d.words(), err).Error())
}

// tool serves task_status, task_result, task_cancel and task_answer.
func (d handles) tool(ctx context.Context, name string, args json.RawMessage) *tasks.Result {
	var a struct {
		Handle  string                    `json:"handle"`
		Answers map[string]map[string]any `json:"answers"`
		Decline []string                  `json:"decline"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return tasks.ToolError("Invalid arguments for %s: %v", name, err)
	}
	if a.Handle == "" {
		return tasks.ToolError(`Invalid arguments for %s: argument "handle" is required`, name)
	}
	switch name {
	case "task_answer":
		return d.answer(ctx, a.Handle, a.Answers, a.Decline)
	case "task_cancel":
		t, err := d.r.tasks.Open(ctx, a.Handle)
		if err == nil {
			err = d.r.tasks.Cancel(ctx, t, "an MCP client (task_cancel)")
		}
		switch {
		case tasks.KindOf(err) == tasks.Ended:
			return tasks.ToolError("The task had already ended; nothing to cancel.")
		case err != nil:
			return d.toolError(name, err)
		}
		structured, _ := json.Marshal(map[string]string{"status": "cancelling"})
		return &tasks.Result{Text: "Cancellation requested.", Structured: structured}
	}
	t, err := d.r.tasks.Read(ctx, a.Handle)
	if err != nil {
		return d.toolError(name, err)
	}
	if name == "task_result" {
		switch {
		case t.Result != nil:
			return t.Result
		case t.Failure != nil:
			return tasks.ToolError("%s", t.Failure.Message)
		case t.Status.State == adapters.Cancelled:
			return tasks.ToolError("%s", t.Message())
		}
	}
	return handleStatus(t)
}

// handleQuestion is an open question as task_status shows it.
type handleQuestion struct {
	Key     string          `json:"key"`
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema"`
}

// handleStatus is task_status's answer: the status as of when it was read (lastUpdatedAt, as in
// the task dialects) and, while the task waits on input, its questions and how to answer them.
func handleStatus(t *tasks.Task) *tasks.Result {
	status := legacyStatus(t)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", status, t.Message())
	var qs []handleQuestion
	if t.Status.State == adapters.InputRequired {
		for _, q := range t.Questions() {
			qs = append(qs, handleQuestion{Key: q.Key, Message: q.Message, Schema: q.Schema})
			fmt.Fprintf(&b, "\nQuestion %q: %s\n  The answer is an object of this JSON Schema: %s", q.Key, q.Message, q.Schema)
		}
		fmt.Fprintf(&b, "\nAsk the user, then call task_answer with {\"handle\": %q, \"answers\": {%q: {...}}}, or list the keys the user said no to under \"decline\".", t.ID, qs[0].Key)
	}
	structured, _ := json.Marshal(struct {
		Status        string           `json:"status"`
		StatusMessage string           `json:"statusMessage"`
		LastUpdatedAt string           `json:"lastUpdatedAt"`
		Questions     []handleQuestion `json:"questions,omitempty"`
	}{status, t.Message(), timestamp(t.UpdatedAt()), qs})
	return &tasks.Result{Text: b.String(), Structured: structured}
}

// answer serves task_answer: accepted answers and declined keys go to the task's open questions;
// what answers nothing open is reported, not delivered.
func (d handles) answer(ctx context.Context, handle string, answers map[string]map[string]any, decline []string) *tasks.Result {
	if len(answers) == 0 && len(decline) == 0 {
		return tasks.ToolError(`Invalid arguments for task_answer: give "answers" (by question key) or "decline" (question keys)`)
	}
	given := map[string]tasks.Answer{}
	for key, content := range answers {
		raw, _ := json.Marshal(content)
		given[key] = tasks.Answer{Action: adapters.ActionAccept, Content: raw}
	}
	for _, key := range decline {
		if _, both := answers[key]; both {
			return tasks.ToolError("Invalid arguments for task_answer: %q is both answered and declined", key)
		}
		given[key] = tasks.Answer{Action: adapters.ActionDecline}
	}
	t, err := d.r.tasks.Open(ctx, handle)
	if err != nil {
		return d.toolError("task_answer", err)
	}
	delivered, err := d.r.tasks.Answer(ctx, t, tasks.Given(given))
	if err != nil {
		return d.toolError("task_answer", err)
	}
	notOpen := []string{} // an empty list, not null, in the structured result
	for key := range given {
		if !slices.Contains(delivered, key) {
			notOpen = append(notOpen, key)
		}
	}
	slices.Sort(notOpen)
	text := "Answer delivered"
	switch {
	case len(delivered) == 0:
		text = "Nothing delivered: no open question has the key " + strings.Join(notOpen, ", ")
		if t.Status.State == adapters.InputRequired {
			text += fmt.Sprintf(" (%s)", t.Message())
		}
		return tasks.ToolError("%s. Call task_status to see what the task waits on.", text)
	case len(notOpen) > 0:
		text = fmt.Sprintf("Delivered the answers to %s; ignored %s, which no open question has", strings.Join(delivered, ", "), strings.Join(notOpen, ", "))
	}
	structured, _ := json.Marshal(map[string]any{"delivered": delivered, "ignored": notOpen})
	return &tasks.Result{Text: text + ". Call task_status or task_result to follow the task.", Structured: structured}
}
