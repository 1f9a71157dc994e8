// Package dialects is taskgate's task dialects (docs/protocol.md): the ways MCP clients speak of
// tasks, each of which translates a request into a call of the task service (package tasks) and
// its answer back into the caller's words. Package mcpserver carries the requests and answers
// (HTTP, stdio) and knows no dialect.
//
// A transport hands each request to the Router (router.go), which reads what its caller speaks
// (caps.go), answers tools/list and tools/call from the mapping (tools.go), and serves each task
// method through the first dialect that speaks to the caller (dialect.go; extension.go,
// legacy.go, operations.go, handles.go, wait.go). What the HTTP fast path may serve without
// go-sdk's transport is read in fast.go, and listens of tasks are served in listen.go.
package dialects

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/taskgate/taskgate/tasks"
)

// Config is what a Router serves.
type Config struct {
	// Tasks is the task service the dialects call.
	Tasks  *tasks.Service
	Logger *slog.Logger
	// NoTaskClients says how clients with no task support get async tools. Default NoTaskHandles.
	NoTaskClients NoTaskMode
	// Followed bounds the tasks that listens follow at once, and MaxListen how long one streams
	// (Listen).
	Followed  Shares
	MaxListen time.Duration
}

// Router serves what the dialects answer of the requests of any number of transports.
type Router struct {
	tasks *tasks.Service
	log   *slog.Logger
	now   func() time.Time
	// dialects serve the calls they take and, by name, their task methods; noTask is how calls of
	// clients without tasks are served.
	dialects  []dialect
	methods   map[string][]served
	noTask    NoTaskMode
	followed  Shares
	maxListen time.Duration
}

// NoTaskMode says how tools that run only as tasks are served to clients that support no kind of
// task.
type NoTaskMode string

const (
	// NoTaskHandles: the call starts the execution and returns a handle, which the handle tools
	// task_status, task_result and task_cancel take.
	NoTaskHandles NoTaskMode = "handles"
	// NoTaskWait: the call waits for the result up to the tool's timeout, with progress
	// notifications when the client asked for them.
	NoTaskWait NoTaskMode = "wait"
	// NoTaskHide: such clients do not see these tools; a call answers that a task is required.
	NoTaskHide NoTaskMode = "hide"
)

// ParseNoTaskMode reads a --no-task-clients value.
func ParseNoTaskMode(s string) (NoTaskMode, error) {
	switch m := NoTaskMode(s); m {
	case NoTaskHandles, NoTaskWait, NoTaskHide:
		return m, nil
	}
	return "", fmt.Errorf("--no-task-clients %q: want handles, wait or hide", s)
}
