package memengine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/taskgate/taskgate/adapters/driver"
)

// List reads the caller's executions of the target, newest first; a page is the index of the
// first.
func (e *Engine) List(_ context.Context, o driver.ListOptions) ([]driver.Listed, string, error) {
	t, caller, page, limit := o.Target, o.Caller, o.Page, o.Limit
	from := 0
	if page != "" {
		var err error
		if from, err = strconv.Atoi(page); err != nil || from < 0 {
			return nil, "", fmt.Errorf("memory: %w: %q is not a page this engine gave", driver.ErrInvalid, page)
		}
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, "", errClosed
	}
	var all []driver.Listed
	for id, x := range e.execs {
		if callersID(j, id, caller) {
			all = append(all, driver.Listed{Ref: driver.Ref{ID: id}, Status: driver.Status{State: x.state, Native: x.native, Started: x.started, Updated: x.updated}})
		}
	}
	slices.SortFunc(all, func(a, b driver.Listed) int {
		return cmp.Or(b.Status.Started.Compare(a.Status.Started), strings.Compare(a.Ref.ID, b.Ref.ID))
	})
	if from >= len(all) {
		return nil, "", nil
	}
	to := min(from+max(limit, 1), len(all))
	next := ""
	if to < len(all) {
		next = strconv.Itoa(to)
	}
	return all[from:to], next, nil
}
