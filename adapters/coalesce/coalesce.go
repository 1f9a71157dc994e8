// Package coalesce wraps an adapters.Engine so that polls cost the engine less: concurrent reads of
// the same execution share one engine call, a running execution's status is reused for a short
// freshness window (so a burst of pollers costs about one call per window), and the outcome of an
// ended execution (which can never change) is kept. All of it sits in one bounded cache that is
// only ever a shortcut: a replica without it answers the same, with one more engine call.
package coalesce

import (
	"container/list"
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/taskgate/taskgate/adapters"
)

// Engine is the wrapped engine.
type Engine struct {
	adapters.Engine
	flight singleflight.Group
	ended  *lru
	fresh  time.Duration
}

// Wrap shares reads of e, reuses a running execution's status for fresh, and caches up to size
// executions.
func Wrap(e adapters.Engine, size int, fresh time.Duration) *Engine {
	return &Engine{Engine: e, ended: newLRU(size), fresh: fresh}
}

type ended struct {
	status adapters.Status
	// until is when a running status stops being fresh; zero for an ended execution's.
	until   time.Time
	outcome *adapters.Outcome
}

// usable reports whether the cached status may answer a read at now.
func (v ended) usable(now time.Time) bool {
	return v.status.State.Terminal() || now.Before(v.until)
}

func key(t adapters.Target, r adapters.Ref) string { return t.Name + "\x00" + r.ID + "\x00" + r.Run }

// Describe answers from the cache for ended executions, else shares one engine call among all
// concurrent callers. The shared call runs detached from any one caller's cancellation, so one
// impatient client cannot fail the others.
func (e *Engine) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	k := key(t, r)
	if v, ok := e.ended.get(k); ok && v.usable(time.Now()) {
		return v.status, nil
	}
	ch := e.flight.DoChan("d"+k, func() (any, error) {
		st, err := e.Engine.Describe(context.WithoutCancel(ctx), t, r)
		switch {
		case err != nil:
		case st.State.Terminal():
			e.ended.update(k, func(v *ended) { v.status, v.until = st, time.Time{} })
		case e.fresh > 0:
			e.ended.update(k, func(v *ended) { v.status, v.until = st, time.Now().Add(e.fresh) })
		}
		return st, err
	})
	return await[adapters.Status](ctx, ch)
}

// Outcome is cached once read; concurrent first reads share one call.
func (e *Engine) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	k := key(t, r)
	if v, ok := e.ended.get(k); ok && v.outcome != nil {
		return *v.outcome, nil
	}
	ch := e.flight.DoChan("o"+k, func() (any, error) {
		o, err := e.Engine.Outcome(context.WithoutCancel(ctx), t, r)
		if err == nil {
			e.ended.update(k, func(v *ended) { v.outcome = &o })
		}
		return o, err
	})
	return await[adapters.Outcome](ctx, ch)
}

// await waits for a shared call, or for this caller's ctx: an impatient caller leaves the call
// running for the others.
func await[T any](ctx context.Context, ch <-chan singleflight.Result) (T, error) {
	var zero T
	select {
	case res := <-ch:
		if res.Err != nil {
			return zero, res.Err
		}
		return res.Val.(T), nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Wait also forgets any fresh running status, so that the next read sees the end.
func (e *Engine) Wait(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	o, err := e.Engine.Wait(ctx, t, r)
	if err == nil {
		e.ended.forgetRunning(key(t, r))
	}
	return o, err
}

// Cancel also forgets any fresh running status, so that the next read sees the cancellation.
func (e *Engine) Cancel(ctx context.Context, t adapters.Target, r adapters.Ref, reason string) error {
	err := e.Engine.Cancel(ctx, t, r, reason)
	e.ended.forgetRunning(key(t, r))
	return err
}

// lru is a fixed-size least-recently-used map.
type lru struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *entry, most recent first
	items map[string]*list.Element
}

type entry struct {
	key string
	val ended
}

func newLRU(size int) *lru {
	return &lru{size: size, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(k string) (ended, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return ended{}, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).val, true
}

// forgetRunning drops k's entry unless it holds an ended execution.
func (c *lru) forgetRunning(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok && !el.Value.(*entry).val.status.State.Terminal() {
		c.order.Remove(el)
		delete(c.items, k)
	}
}

// update changes (or creates) the entry for k.
func (c *lru) update(k string, change func(*ended)) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		change(&el.Value.(*entry).val)
		c.order.MoveToFront(el)
		return
	}
	e := &entry{key: k}
	change(&e.val)
	c.items[k] = c.order.PushFront(e)
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry).key)
	}
}

// Len is the number of cached executions.
func (c *Engine) Len() int {
	c.ended.mu.Lock()
	defer c.ended.mu.Unlock()
	return c.ended.order.Len()
}
