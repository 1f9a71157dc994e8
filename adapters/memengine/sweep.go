package memengine

import (
	"context"
	"fmt"

	"github.com/taskgate/taskgate/adapters/driver"
)

// SweepGroup puts every target in one group: a sweep reads by id.
func (e *Engine) SweepGroup(driver.Target) string { return "" }

// Sweep reads a page of o.Refs (driver.SweepIDs of them) as a listing shows them: their state
// without questions or messages.
func (e *Engine) Sweep(_ context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	return e.sweep(o.Targets, o.Refs, o.Page, func(*execution) bool { return true })
}

// SweepEnded reads a page of o.Refs (driver.SweepIDs of them) and shows those that ended after
// o.Since.
func (e *Engine) SweepEnded(_ context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	return e.sweep(o.Targets, o.Refs, o.Page, func(x *execution) bool { return x.state.Terminal() && x.updated.After(o.Since) })
}

// sweep reads a page of refs and shows those that show says.
func (e *Engine) sweep(ts []driver.Target, refs []driver.Ref, page string, show func(*execution) bool) ([]driver.Listed, string, error) {
	for _, t := range ts {
		if _, err := jobOf(t); err != nil {
			return nil, "", err
		}
	}
	chunk, next, err := driver.SweepChunk(refs, page)
	if err != nil {
		return nil, "", fmt.Errorf("memory: sweep: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, "", errClosed
	}
	var listed []driver.Listed
	for _, r := range chunk {
		if x, err := e.lookup(r); err == nil && show(x) {
			listed = append(listed, driver.Listed{Ref: r, Status: driver.Status{State: x.state, Native: x.native, Started: x.started, Updated: x.updated}})
		}
	}
	return listed, next, nil
}
