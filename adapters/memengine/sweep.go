package memengine

import (
	"context"
	"fmt"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

// SweepGroup puts every target in one group: a sweep reads by id.
func (e *Engine) SweepGroup(adapters.Target) string { return "" }

// Sweep reads a page of refs (adapters.SweepIDs of them) as a listing shows them: their state
// without questions or messages.
func (e *Engine) Sweep(_ context.Context, ts []adapters.Target, refs []adapters.Ref, page string) ([]adapters.Listed, string, error) {
	return e.sweep(ts, refs, page, func(*execution) bool { return true })
}

// SweepEnded reads a page of refs (adapters.SweepIDs of them) and shows those that ended after
// since.
func (e *Engine) SweepEnded(_ context.Context, ts []adapters.Target, refs []adapters.Ref, since time.Time, page string) ([]adapters.Listed, string, error) {
	return e.sweep(ts, refs, page, func(x *execution) bool { return x.state.Terminal() && x.updated.After(since) })
}

// sweep reads a page of refs and shows those that show says.
func (e *Engine) sweep(ts []adapters.Target, refs []adapters.Ref, page string, show func(*execution) bool) ([]adapters.Listed, string, error) {
	for _, t := range ts {
		if _, err := jobOf(t); err != nil {
			return nil, "", err
		}
	}
	chunk, next, err := adapters.SweepChunk(refs, page)
	if err != nil {
		return nil, "", fmt.Errorf("memory: sweep: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, "", errClosed
	}
	var listed []adapters.Listed
	for _, r := range chunk {
		if x, err := e.lookup(r); err == nil && show(x) {
			listed = append(listed, adapters.Listed{Ref: r, Status: adapters.Status{State: x.state, Native: x.native, Started: x.started, Updated: x.updated}})
		}
	}
	return listed, next, nil
}
