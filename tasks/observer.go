package tasks

import (
	"context"
	"sync"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// Observer is told of the executions the service starts and sees end, for metrics (package
// observe is one). Its methods must be cheap and must not block.
type Observer interface {
	// Started is called when an execution of a tool starts (a task, or a call that waits for it).
	Started(ctx context.Context, tool string)
	// Ended is called the first time this process reads that an execution of a tool ended, with
	// how it ended. Another process (a replica) that reads the same end is told too.
	Ended(ctx context.Context, tool string, s adapters.State)
}

// Subject is what one request turned out to be about, for its log line, metrics and trace: the
// tool and its engine block, and the execution once known. A transport that wants to know puts
// one in the request's context (Track); the service fills it in.
type Subject struct {
	mu           sync.Mutex
	tool, engine string
	execution    adapters.Ref
}

// Track returns ctx with a Subject for the service to fill in.
func Track(ctx context.Context) (context.Context, *Subject) {
	ctx, r := withRequest(ctx)
	r.tracked = true
	return ctx, &r.subject
}

// Get returns the tool, its engine block and the execution the request was about, as far as known.
func (s *Subject) Get() (tool, engine string, execution adapters.Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tool, s.engine, s.execution
}

// Note records, for the request of ctx, that it is about tool and, when ref is not zero, its
// execution ref. A dialect calls it for a tool it serves before the service is involved.
func Note(ctx context.Context, tool *mapping.Tool, ref adapters.Ref) {
	r := requestOf(ctx)
	if r == nil || !r.tracked {
		return
	}
	s := &r.subject
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tool, s.engine = tool.Name, tool.Engine
	if ref != (adapters.Ref{}) {
		s.execution = ref
	}
}
