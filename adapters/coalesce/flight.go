package coalesce

import (
	"context"
	"fmt"
	"sync"

	"github.com/taskgate/taskgate/adapters"
)

// flight shares one call per execution among concurrent callers. The first caller makes it in its own
// goroutine (a poll's engine call then costs no goroutine and no hand-off of its own); the others
// wait for it, or for their own context, leaving the call to the rest.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[adapters.ExecKey]*call[T]
}

type call[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// do makes fn's call for key, or joins the one in flight. own says whether it was this caller's;
// answered is false when ctx ended first (before the call, or while it waited for another's).
func (f *flight[T]) do(ctx context.Context, key adapters.ExecKey, fn func() (T, error)) (v T, err error, own, answered bool) {
	f.mu.Lock()
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.val, c.err, false, true
		case <-ctx.Done():
			return v, ctx.Err(), false, false
		}
	}
	if err := ctx.Err(); err != nil {
		f.mu.Unlock()
		return v, err, false, false
	}
	if f.calls == nil {
		f.calls = map[adapters.ExecKey]*call[T]{}
	}
	c := &call[T]{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			c.err = fmt.Errorf("coalesce: the engine call panicked: %v", p)
			v, err, own, answered = c.val, c.err, true, true
		}
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.val, c.err = fn()
	return c.val, c.err, true, true
}
