package mcpserver

import "github.com/taskgate/taskgate/adapters"

// dialect is how one request's caller speaks about tasks (docs/protocol.md): its words for a task's
// status and for ids that lead nowhere. One is chosen when the request arrives, and every answer
// about a task in that request is worded through it.
type dialect interface {
	status(t *task) string
	notFound() string
	expired() string
}

// extension is the tasks extension on 2026-07-28: a tool error is still a completed task; only a
// protocol error fails it.
type extension struct{}

func (extension) status(t *task) string {
	switch t.status.State {
	case adapters.Succeeded, adapters.Failed:
		if t.failure != nil {
			return "failed"
		}
		return "completed"
	case adapters.Cancelled:
		return "cancelled"
	case adapters.InputRequired:
		return "input_required"
	}
	return "working"
}

func (extension) notFound() string { return "Failed to retrieve task: Task not found" }
func (extension) expired() string  { return "Failed to retrieve task: Task has expired" }

// legacy is tasks on 2025-11-25, where a tool error fails the task.
type legacy struct{ extension }

func (legacy) status(t *task) string { return endedWord(t, "working", "cancelled") }

// operations is SEP-1391.
type operations struct{}

func (operations) status(t *task) string {
	if t.status.State == adapters.Submitted {
		return "submitted"
	}
	return endedWord(t, "working", "canceled")
}

func (operations) notFound() string { return "Failed to retrieve operation: Operation not found" }
func (operations) expired() string  { return "Failed to retrieve operation: Operation has expired" }

// handles is the handle tools of clients without tasks: they speak the words of 2025-11-25.
type handles struct{ legacy }

// endedWord is completed or failed for an ended task, cancelled (spelled as the dialect does) for a
// cancelled one, input_required for one that waits on an answer, and running otherwise.
func endedWord(t *task, running, cancelled string) string {
	switch t.status.State {
	case adapters.Succeeded, adapters.Failed:
		if t.failed() {
			return "failed"
		}
		return "completed"
	case adapters.Cancelled:
		return cancelled
	case adapters.InputRequired:
		return "input_required"
	}
	return running
}
