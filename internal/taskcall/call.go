// Package taskcall is the interactive MCP client behind `taskgate call`: it calls one tool as a
// task on protocol 2026-07-28, shows the task's progress, answers its questions (from answers
// given up front, else on a terminal, one form field at a time), and prints the result. It
// speaks the wire through internal/mcpclient.
package taskcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// The exit statuses of a call besides 0 (success) and 2 (a usage error, the command's own).
const (
	// ExitFailed: the tool answered an error, the task failed or was cancelled, or the server
	// could not be reached.
	ExitFailed = 1
	// ExitUnanswered: a question was left without an answer, and the task goes on waiting.
	ExitUnanswered = 3
	// ExitInterrupted is what shells report for Ctrl-C (128 + SIGINT).
	ExitInterrupted = 130
)

const (
	// startGrace is how long an interrupted tools/call may still take to answer: an async tool
	// answers at once, and its task can then be cancelled instead of running on unseen.
	startGrace = 3 * time.Second
	// retryFor bounds how long polling goes on through unanswered requests (-32603, network).
	retryFor = time.Minute
)

// Call is one tool call.
type Call struct {
	Tool      string
	Arguments json.RawMessage // one JSON object (ParseArguments)
	// Answers are the responses to questions by key, from the command line (ParseAnswers).
	Answers map[string]json.RawMessage
	// Terminal is where the questions Answers leaves open are asked: a terminal, or in tests
	// lines fed to it; nil: nowhere, such a question ends the call (ExitUnanswered).
	Terminal io.Reader
	// Stdout gets the result; Stderr the progress, the questions and what went wrong.
	Stdout, Stderr io.Writer
}

// ParseArguments checks that s is one JSON object and returns it as is, numbers untouched.
func ParseArguments(s string) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			err = fmt.Errorf("%v at byte %d", err, syn.Offset)
		}
		return nil, fmt.Errorf(`--args %s is not valid JSON: %v; pass one object, quoted for the shell: --args '{"text": "hi"}'`, s, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf(`--args must be a JSON object of the tool's arguments, like '{"text": "hi"}', not %s`, s)
	}
	return json.RawMessage(s), nil
}

// Run calls the tool through c, follows its task to the end and prints the outcome; it returns
// the exit status.
func Run(ctx context.Context, c *Client, call Call) int {
	r := newRun(c, call)
	t, result, err := r.start(ctx)
	if err == nil && t.ResultType == "task" {
		result, err = r.follow(ctx, t)
	}
	if err == nil {
		err = printResult(result, r.disp, call.Stdout, call.Stderr)
	}
	r.end(err)
	return exitStatus(err)
}

// run is one call under way: the tool, where its progress shows, and who answers its questions.
type run struct {
	c     *Client
	call  Call
	disp  display
	asker *asker
}

func newRun(c *Client, call Call) *run {
	disp := newDisplay(call.Stderr, call.Tool)
	var term *prompter
	if call.Terminal != nil {
		_, isFile := call.Terminal.(*os.File) // a terminal echoes what is typed
		term = newPrompter(call.Terminal, call.Stderr, !isFile)
	}
	return &run{c: c, call: call, disp: disp, asker: newAsker(call.Answers, term, call.Stderr, disp)}
}

// errInterrupted is Ctrl-C, however far the call had gone.
var errInterrupted = errors.New("interrupted")

// endError is how a call ends short of printing a result: the last word of its progress line,
// and err, told on stderr unless told is set (what happened is there already).
type endError struct {
	state string
	err   error
	told  bool
}

func (e *endError) Error() string { return e.err.Error() }
func (e *endError) Unwrap() error { return e.err }

// failure ends the progress line in "error" and tells what format says.
func failure(format string, a ...any) *endError {
	return &endError{state: "error", err: fmt.Errorf(format, a...)}
}

// exitStatus is the exit status of a call that ended with err: a question left without an answer,
// Ctrl-C, or anything else that kept the call from its result.
func exitStatus(err error) int {
	var un *unanswered
	switch {
	case err == nil:
		return 0
	case errors.As(err, &un):
		return ExitUnanswered
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	default:
		return ExitFailed
	}
}

// end ends the progress line with err's last word and tells what err says.
func (r *run) end(err error) {
	var e *endError
	if !errors.As(err, &e) {
		return
	}
	r.disp.end(e.state)
	if !e.told {
		fmt.Fprintf(r.call.Stderr, "taskgate call: %v\n", e.err)
	}
}

// start calls the tool, answering the questions it asks before it starts, and returns what it
// answered: a task, or (its resultType not "task") the CallToolResult in result.
func (r *run) start(ctx context.Context) (t taskResult, result json.RawMessage, err error) {
	tool := r.call.Tool
	send := func(params map[string]any) (json.RawMessage, error) {
		callCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
		defer abort()
		stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(startGrace, abort) })
		defer stopGrace()
		return r.c.call(callCtx, "tools/call", params)
	}
	params := map[string]any{"name": tool, "arguments": r.call.Arguments}
	raw, err := send(params)
	if err == nil {
		raw, err = r.asker.beforeStart(ctx, raw, params, send)
	}
	var un *unanswered
	switch {
	case errors.As(err, &un):
		return t, nil, &endError{state: "input_required", err: fmt.Errorf("%w\n%s did not start.", err, tool)}
	case err != nil && ctx.Err() != nil:
		return t, nil, &endError{state: "interrupted", err: fmt.Errorf("%w before %s answered; if it started an execution, that goes on", errInterrupted, tool)}
	case err != nil:
		return t, nil, failure("calling %s: %v", tool, err)
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, nil, failure("%s answered with something other than a JSON object: %s", tool, raw)
	}
	return t, raw, nil
}

// follow shows the task's progress and answers its questions until it ends, listening where the
// server offers it and polling otherwise, and returns the result of a completed task. Ctrl-C
// cancels the task.
func (r *run) follow(ctx context.Context, t taskResult) (result json.RawMessage, err error) {
	for !t.terminal() {
		listened, err := r.listen(ctx, &t)
		if err != nil {
			return nil, err
		}
		if !listened {
			break
		}
	}
	return r.poll(ctx, t)
}

// errStopListening ends a listen whose task asks what polling asks better: a question left for
// later, asked again after a while whether or not the task changes.
var errStopListening = errors.New("polling from here")

// listen follows t on a subscriptions/listen stream, showing each notification and answering the
// questions, until the stream ends. listened is false when it told nothing: the server does not
// listen (an older one, or one that did not acknowledge the task), the stream failed, or a
// question was left for later; polling goes on from t then. A stream that ended with its task
// still running (the server shut down) is listened to again, on whichever replica answers.
func (r *run) listen(ctx context.Context, t *taskResult) (listened bool, err error) {
	listenCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	acknowledged := false
	_, rerr, lerr := r.c.c.Listen(listenCtx, map[string]any{"taskIds": []string{t.TaskID}}, func(method string, params json.RawMessage) {
		switch method {
		case "notifications/subscriptions/acknowledged":
			var ack struct{ Notifications struct{ TaskIDs []string } }
			json.Unmarshal(params, &ack)
			if acknowledged = slices.Contains(ack.Notifications.TaskIDs, t.TaskID); !acknowledged {
				stop(errStopListening)
			}
		case "notifications/tasks":
			var next taskResult
			if json.Unmarshal(params, &next) != nil || next.TaskID != t.TaskID || next.Status == "" {
				return
			}
			*t = next
			listened = true
			r.disp.show(t.Status, t.StatusMessage)
			if t.Status != "input_required" {
				return
			}
			if _, err := r.asker.answerOpen(ctx, r.c, t); err != nil || r.asker.putOff(t) {
				stop(errStopListening) // polling asks again, or ends the call with err
			}
		}
	})
	switch {
	case ctx.Err() != nil:
		r.disp.end("interrupted")
		return false, r.cancel(t.TaskID)
	case lerr != nil || rerr != nil || !acknowledged:
		return false, nil
	}
	return listened, nil
}

// poll polls t until it ends, showing its progress and answering its questions.
func (r *run) poll(ctx context.Context, t taskResult) (result json.RawMessage, err error) {
	var failingSince time.Time
	for {
		r.disp.show(t.Status, t.StatusMessage)
		if t.terminal() {
			return outcome(t)
		}
		wait := t.pollInterval()
		if t.Status == "input_required" {
			sent, err := r.asker.answerOpen(ctx, r.c, &t)
			if sent {
				wait = 0 // to show at once what the answers changed
			}
			if err != nil && ctx.Err() == nil { // interrupted while asking: the task is cancelled below
				return nil, answerFailure(t, err)
			}
		}
		select {
		case <-ctx.Done():
			r.disp.end("interrupted")
			return nil, r.cancel(t.TaskID)
		case <-time.After(wait):
		}
		getCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		raw, err := r.c.call(getCtx, "tasks/get", map[string]any{"taskId": t.TaskID})
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			continue // to the cancellation above
		case err != nil && retryable(err) && (failingSince.IsZero() || time.Since(failingSince) < retryFor):
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			t.StatusMessage = fmt.Sprintf("no answer (%v); retrying", err)
			continue
		case err != nil:
			return nil, failure("polling task %s: %v", t.TaskID, err)
		}
		failingSince = time.Time{}
		var next taskResult
		if err := json.Unmarshal(raw, &next); err != nil || next.Status == "" {
			return nil, failure("tasks/get answered with no task status: %s", raw)
		}
		t = next
	}
}

// answerFailure is how a task waiting for answers ends when err kept them from it.
func answerFailure(t taskResult, err error) error {
	var un *unanswered
	if errors.As(err, &un) {
		return &endError{state: t.Status, err: fmt.Errorf("%w\nThe task goes on, waiting for the answer: %s", err, t.TaskID)}
	}
	return failure("task %s: %v", t.TaskID, err)
}

// outcome is the result of a task that ended: its CallToolResult if it completed.
func outcome(t taskResult) (result json.RawMessage, err error) {
	switch t.Status {
	case "completed":
		return t.Result, nil
	case "failed":
		why := fmt.Sprintf("task %s failed", t.TaskID)
		if t.Error != nil {
			why += fmt.Sprintf(": %v", t.Error)
		}
		return nil, &endError{state: t.Status, err: errors.New(why)}
	default:
		return nil, &endError{state: t.Status, err: fmt.Errorf("task %s was cancelled: %s", t.TaskID, t.StatusMessage)}
	}
}

// taskResult is a task as tools/call and tasks/get return it, or (resultType not "task") a
// CallToolResult.
type taskResult struct {
	ResultType     string           `json:"resultType"`
	TaskID         string           `json:"taskId"`
	Status         string           `json:"status"`
	StatusMessage  string           `json:"statusMessage"`
	PollIntervalMs *int64           `json:"pollIntervalMs"`
	Result         json.RawMessage  `json:"result"`
	Error          *mcpclient.Error `json:"error"`
	InputRequests  inputRequests    `json:"inputRequests"`
}

func (t *taskResult) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// pollInterval is the server's suggestion, which grows with the task's age, never under 100ms
// (the shortest a mapping may suggest); 1s when the server suggests none.
func (t *taskResult) pollInterval() time.Duration {
	d := time.Second
	if t.PollIntervalMs != nil {
		d = time.Duration(*t.PollIntervalMs) * time.Millisecond
	}
	return max(d, 100*time.Millisecond)
}

// retryable reports whether polling may go on after err: a server error (-32603, an engine that
// did not answer) or no answer at all, but not a refusal of the request.
func retryable(err error) bool {
	var re *mcpclient.Error
	var se *mcpclient.StatusError
	switch {
	case errors.As(err, &re):
		return re.Code == -32603
	case errors.As(err, &se):
		return se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests
	}
	return true
}

// cancel is what Ctrl-C does to a running task. The call's context is gone by then.
func (r *run) cancel(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.c.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); err != nil {
		return &endError{state: "interrupted", err: fmt.Errorf("%w, but cancelling task %s failed: %v", errInterrupted, id, err)}
	}
	fmt.Fprintln(r.call.Stderr, "cancelled", id)
	return &endError{state: "interrupted", err: errInterrupted, told: true}
}

// errToolFailed is a CallToolResult with isError, printed on stderr.
var errToolFailed = errors.New("the tool answered an error")

// printResult prints a CallToolResult: on stdout, or on stderr with errToolFailed when isError.
func printResult(raw json.RawMessage, disp display, stdout, stderr io.Writer) error {
	var r struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MimeType string `json:"mimeType"`
			URI      string `json:"uri"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return failure("the result is not a CallToolResult (%v): %s", err, raw)
	}
	w := stdout
	var err error
	disp.end("completed")
	if r.IsError {
		w, err = stderr, &endError{state: "completed", err: errToolFailed, told: true}
	}
	var structured bytes.Buffer
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		json.Indent(&structured, r.StructuredContent, "", "  ")
	}
	for _, c := range r.Content {
		switch {
		case c.Type == "text" && structured.Len() > 0 && sameJSON(c.Text, r.StructuredContent):
			// The structured content as text, for clients that read only text: shown once, below.
		case c.Type == "text":
			fmt.Fprintln(w, strings.TrimSuffix(c.Text, "\n"))
		default:
			fmt.Fprintf(w, "[%s content %s%s not shown]\n", c.Type, c.MimeType, c.URI)
		}
	}
	if structured.Len() > 0 {
		fmt.Fprintln(w, structured.String())
	}
	return err
}

func sameJSON(text string, structured json.RawMessage) bool {
	var a, b bytes.Buffer
	return json.Compact(&a, []byte(text)) == nil && json.Compact(&b, structured) == nil && bytes.Equal(a.Bytes(), b.Bytes())
}

// Client speaks protocol 2026-07-28 over stateless Streamable HTTP, declaring the tasks
// extension on every request.
type Client struct {
	url    string
	badURL error // what url.Parse says of url, reported by every call
	c      *mcpclient.Client
}

// NewClient returns a client of the MCP endpoint that sends header (credentials, say) with every
// request and names itself "taskgate call" at version.
func NewClient(endpoint string, header http.Header, version string) *Client {
	c := mcpclient.Modern(mcpclient.HTTP{URL: endpoint, Header: header}, "io.modelcontextprotocol/tasks")
	c.Name, c.Version = "taskgate call", version
	_, err := neturl.Parse(endpoint)
	return &Client{url: endpoint, badURL: err, c: c}
}

// call sends one request (its Mcp-Name is the tool called or the task id); a JSON-RPC error is
// returned as a *mcpclient.Error.
func (c *Client) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	if c.badURL != nil {
		return nil, fmt.Errorf("--url %s: %w", c.url, c.badURL)
	}
	res, rerr, err := c.c.Call(ctx, method, params)
	var se *mcpclient.StatusError
	switch {
	case errors.As(err, &se) && se.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("%w; pass it with --header 'Authorization: Bearer KEY', or for scripts in $%s", err, HeadersEnv)
	case err != nil:
		return nil, err
	case rerr != nil:
		return nil, rerr
	}
	return res, nil
}
