package memengine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Sampler = (*Engine)(nil)

// Samples reads the inputs of at most n of the latest executions of t's program, whoever
// started them, newest first.
func (e *Engine) Samples(_ context.Context, t driver.Target, n int) ([]json.RawMessage, error) {
	if n < 1 {
		return nil, fmt.Errorf("memory: %w: read the inputs of at least 1 execution, not %d", driver.ErrInvalid, n)
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	type run struct {
		id string
		x  *execution
	}
	var runs []run
	for id, x := range e.execs {
		if x.program == j.program {
			runs = append(runs, run{id, x})
		}
	}
	slices.SortFunc(runs, func(a, b run) int {
		return cmp.Or(b.x.started.Compare(a.x.started), strings.Compare(a.id, b.id))
	})
	inputs := make([]json.RawMessage, 0, min(n, len(runs)))
	for _, r := range runs[:min(n, len(runs))] {
		inputs = append(inputs, slices.Clone(r.x.input))
	}
	return inputs, nil
}
