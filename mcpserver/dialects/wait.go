package dialects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// waiting serves calls that wait for their result, up to the tool's timeout (and, over HTTP, the
// longest a request may wait): tools that may not run as tasks, tools that may to clients that do
// not ask for a task, and, under --no-task-clients wait, the others of clients that take no task.
// A client that gives up the call (cancels it, or closes the HTTP request) cancels the execution:
// it has no other way to. Progress notifications carry the engine's status when the client asked
// for them. The workflow's questions go back to a 2026-07-28 client that declared elicitation in
// an input_required result, and its retry resumes the wait (resume); a client of an earlier
// version is asked with elicitation/create where it takes it.
type waiting struct{ r *Router }

// takes: tools that may not run as tasks, tools that may to callers no other dialect took, and,
// in the wait mode, the others.
func (d waiting) takes(_ caps, tool *mapping.Tool) bool {
	return tool.TaskSupport != mapping.TaskRequired || d.r.noTask == NoTaskWait
}

func (d waiting) call(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	w := newWait(ctx, call.tool)
	defer w.stop()
	if call.tool.TaskSupport == mapping.TaskForbidden {
		t, err := d.r.tasks.Run(w.ctx, call.request())
		return wireResult(d.waited(ctx, w, call.tool, t, err), c.modern), nil
	}
	// The execution is the caller's, as a task's is: a question it asks may be answered in another
	// request of the caller (resume).
	t, err := d.r.tasks.Start(w.ctx, call.request())
	if err != nil {
		return wireResult(d.waited(ctx, w, call.tool, nil, err), c.modern), nil
	}
	return d.await(ctx, c, w, t, call.args, nil), nil
}

func (waiting) speaks(caps) bool           { return false }
func (waiting) methods() map[string]method { return nil }
func (waiting) words() words               { return taskWords }

// resume goes on with a waiting call whose workflow asked (the task its requestState names): it
// delivers the answers the retry brings and waits again.
func (d waiting) resume(ctx context.Context, c caps, p *mcp.CallToolParamsRaw, id string) (mcp.Result, error) {
	t, err := d.r.tasks.Open(ctx, id)
	if err != nil {
		return nil, d.r.rpcError(taskWords, err)
	}
	delivered, err := d.r.tasks.Answer(ctx, t, inputResponses(p.InputResponses))
	if err != nil {
		return nil, d.r.rpcError(taskWords, err)
	}
	w := newWait(ctx, t.Tool)
	defer w.stop()
	return d.await(ctx, c, w, t, p.Arguments, delivered), nil
}

// await waits for the task a waiting call started; args are the call's arguments, answered the
// questions it answered already.
func (d waiting) await(ctx context.Context, c caps, w *wait, t *tasks.Task, args json.RawMessage, answered []string) mcp.Result {
	if c.progress != nil && c.session != nil {
		reported := *t // read apart from the wait's own reads
		go d.reportProgress(w.ctx, c, &reported)
	}
	var ask tasks.Asker
	switch {
	case c.modern && c.elicitation:
		ask = func(_ context.Context, t *tasks.Task) (bool, error) {
			// A reading taken before the engine had an answer may still show its question open
			// (a key is never asked twice).
			return slices.ContainsFunc(t.Status.Inputs, func(q adapters.Question) bool { return !slices.Contains(answered, q.Key) }), nil
		}
	case elicits(c):
		ask = d.r.elicitor(c, nil)
	}
	err := d.r.tasks.Wait(w.ctx, t, ask)
	if errors.Is(err, tasks.ErrAsking) {
		var open inputRequests
		for _, r := range openRequests(t) {
			if !slices.Contains(answered, r.key) {
				open = append(open, r)
			}
		}
		return &inputRequiredResult{InputRequests: open, RequestState: d.r.tasks.RequestState(ctx, t.Tool, args, t.ID)}
	}
	return wireResult(d.waited(ctx, w, t.Tool, t, err), c.modern)
}

// wait bounds a waiting call: by the tool's timeout and, over HTTP, by the longest a request may
// wait (bound).
type wait struct {
	ctx, bounded context.Context
	bound        time.Duration
	stop         func()
}

func newWait(ctx context.Context, tool *mapping.Tool) *wait {
	bounded, bound, stopBound := withWaitBound(ctx)
	waitCtx, stop := context.WithTimeout(bounded, tool.Timeout)
	return &wait{ctx: waitCtx, bounded: bounded, bound: bound, stop: func() { stop(); stopBound() }}
}

// withWaitBound is ctx, ended after the longest its request may wait for a workflow (bound) when
// its transport set one (HTTP).
func withWaitBound(ctx context.Context) (bounded context.Context, bound time.Duration, stop context.CancelFunc) {
	if bound = capsOf(ctx).MaxWait; bound <= 0 {
		return ctx, 0, func() {}
	}
	bounded, stop = context.WithTimeout(ctx, bound)
	return bounded, bound, stop
}

// waited is the result of a waiting call of tool that ended with err, t the task it waited on:
// nil when none started, without an id when the tool ran without being a task.
func (d waiting) waited(ctx context.Context, w *wait, tool *mapping.Tool, t *tasks.Task, err error) *tasks.Result {
	why, refused := refusal(err)
	switch {
	case err == nil && t.Failure != nil:
		return tasks.ToolError("%s", t.Failure.Message)
	case err == nil:
		return t.Result
	case refused:
		return tasks.ToolError("%s", why)
	case ctx.Err() != nil:
		if t != nil {
			d.r.tasks.Abandon(ctx, t, "the MCP client")
		}
		return tasks.ToolError("%s was cancelled: the client stopped waiting", tool.Name)
	case errors.Is(err, context.DeadlineExceeded):
		within := fmt.Sprintf("within its timeout of %s", tool.Timeout)
		if w.bounded.Err() != nil && w.bound < tool.Timeout {
			within = fmt.Sprintf("within %s, the longest this server holds a request", w.bound)
		}
		if t != nil && t.ID != "" && d.r.tasks.Describe(ctx, t) == nil && t.Status.State == adapters.InputRequired {
			return tasks.ToolError("%s did not finish %s: it is %s, and this client takes neither tasks nor elicitation to answer; the execution goes on in the engine", tool.Name, within, t.Message())
		}
		return tasks.ToolError("%s did not finish %s; the execution goes on in the engine", tool.Name, within)
	}
	var te *tasks.Error
	if !errors.As(err, &te) {
		te = &tasks.Error{Kind: tasks.Internal, Message: "Failed to run " + tool.Name, Err: err}
	}
	return tasks.ToolError("%s could not be run: the engine did not answer as expected; retry in a moment (error id %s)", tool.Name, d.r.report(te))
}

// reportProgress sends one progress notification per poll interval (growing with the call's age)
// until ctx ends.
func (d waiting) reportProgress(ctx context.Context, c caps, t *tasks.Task) {
	next := time.NewTimer(t.PollInterval())
	defer next.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
		}
		next.Reset(t.PollInterval())
		if d.r.tasks.Describe(ctx, t) != nil {
			continue
		}
		c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: c.progress, Progress: float64(n), Message: t.Message(),
		})
	}
}
