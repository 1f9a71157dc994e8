// Package coalesce wraps an adapters.Engine so that polls cost the engine less: concurrent reads of
// the same execution share one engine call, a running execution's status is reused for a short
// freshness window (so a burst of pollers costs about one call per window), and the outcome of an
// ended execution (which can never change) is kept. All of it sits in one bounded cache that is
// only ever a shortcut: a replica without it answers the same, with one more engine call.
package coalesce

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/lru"
)

// Engine is the wrapped engine.
type Engine struct {
	adapters.Engine
	flight singleflight.Group
	ended  *lru.Cache[ended]
	fresh  time.Duration
}

// Wrap shares reads of e, reuses a running execution's status for fresh, and caches up to size
// executions.
func Wrap(e adapters.Engine, size int, fresh time.Duration) *Engine {
	return &Engine{Engine: e, ended: lru.New[ended](size), fresh: fresh}
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
	if v, ok := e.ended.Get(k); ok && v.usable(time.Now()) {
		return v.status, nil
	}
	ch := e.flight.DoChan("d"+k, func() (any, error) {
		st, err := e.Engine.Describe(context.WithoutCancel(ctx), t, r)
		switch {
		case err != nil:
		case st.State.Terminal():
			e.ended.Update(k, func(v *ended) { v.status, v.until = st, time.Time{} })
		case e.fresh > 0:
			e.ended.Update(k, func(v *ended) { v.status, v.until = st, time.Now().Add(e.fresh) })
		}
		return st, err
	})
	return await[adapters.Status](ctx, ch)
}

// Outcome is cached once read; concurrent first reads share one call.
func (e *Engine) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	k := key(t, r)
	if v, ok := e.ended.Get(k); ok && v.outcome != nil {
		return *v.outcome, nil
	}
	ch := e.flight.DoChan("o"+k, func() (any, error) {
		o, err := e.Engine.Outcome(context.WithoutCancel(ctx), t, r)
		if err == nil {
			e.ended.Update(k, func(v *ended) { v.outcome = &o })
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
		e.ended.DeleteIf(key(t, r), running)
	}
	return o, err
}

// Cancel also forgets any fresh running status, so that the next read sees the cancellation.
func (e *Engine) Cancel(ctx context.Context, t adapters.Target, r adapters.Ref, reason string) error {
	err := e.Engine.Cancel(ctx, t, r, reason)
	e.ended.DeleteIf(key(t, r), running)
	return err
}

// Answer also forgets any fresh running status, so that the next read no longer shows the
// question answered.
func (e *Engine) Answer(ctx context.Context, t adapters.Target, r adapters.Ref, q string, a adapters.Answer) error {
	err := e.Engine.Answer(ctx, t, r, q, a)
	e.ended.DeleteIf(key(t, r), running)
	return err
}

// running reports whether a cached status may still change.
func running(v ended) bool { return !v.status.State.Terminal() }

// Len is the number of cached executions.
func (c *Engine) Len() int { return c.ended.Len() }
