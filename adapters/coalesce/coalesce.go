// Package coalesce wraps an adapters.Engine so that polls cost the engine less: concurrent reads of
// the same execution share one engine call, a running execution's status is reused for a short
// freshness window (so a burst of pollers costs about one call per window), and the outcome of an
// ended execution (which can never change) is kept. All of it sits in one bounded cache that is
// only ever a shortcut: a replica without it answers the same, with one more engine call.
//
// It counts how it served each read (Counts), so that the economy can be watched, and tells the
// first time it learns that an execution ended (the ended func of Wrap).
package coalesce

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/lru"
)

// Ended is told the first time an Engine learns that an execution ended, with the context of the
// call that learnt it.
type Ended func(ctx context.Context, t adapters.Target, r adapters.Ref, s adapters.State)

// Engine is the wrapped engine.
type Engine struct {
	adapters.Engine
	flight             singleflight.Group
	ended              *lru.Cache[ended]
	fresh              time.Duration
	onEnded            Ended
	describes, outcome served
}

// Wrap shares reads of e, reuses a running execution's status for fresh, and caches up to size
// executions. onEnded, when not nil, is told the first time a Describe, Outcome, Wait or Run tells
// that an execution ended; an execution that has dropped out of the cache (or every execution,
// when size is 0) may be told again.
func Wrap(e adapters.Engine, size int, fresh time.Duration, onEnded Ended) *Engine {
	return &Engine{Engine: e, ended: lru.New[ended](size), fresh: fresh, onEnded: onEnded}
}

type ended struct {
	status adapters.Status
	// until is when a running status stops being fresh; zero for an ended execution's.
	until   time.Time
	outcome *adapters.Outcome
}

// endKnown reports whether the entry knows that the execution ended (and onEnded was told so).
func endKnown(v ended) bool { return v.status.State.Terminal() || v.outcome != nil }

// usable reports whether the cached status may answer a read at now.
func (v ended) usable(now time.Time) bool {
	return v.status.State.Terminal() || now.Before(v.until)
}

func key(t adapters.Target, r adapters.Ref) string { return t.Name + "\x00" + r.ID }

// Served counts the reads of one kind by how they were answered.
type Served struct {
	// Engine: by an engine call of the read's own. Shared: by another read's call in flight.
	// Fresh: by a running status within its freshness window. Cached: by what is kept of an
	// ended execution.
	Engine, Shared, Fresh, Cached uint64
}

// Counts are the reads an Engine has served since Wrap.
type Counts struct {
	Describe, Outcome Served
}

// Counts reads the counters; each only grows.
func (e *Engine) Counts() Counts {
	return Counts{Describe: e.describes.load(), Outcome: e.outcome.load()}
}

type served struct{ engine, shared, fresh, cached atomic.Uint64 }

func (s *served) load() Served {
	return Served{Engine: s.engine.Load(), Shared: s.shared.Load(), Fresh: s.fresh.Load(), Cached: s.cached.Load()}
}

// flown counts a read answered by a call in flight: its own, or another's.
func (s *served) flown(own bool) {
	if own {
		s.engine.Add(1)
	} else {
		s.shared.Add(1)
	}
}

// Describe answers from the cache for ended executions, else shares one engine call among all
// concurrent callers. The shared call runs detached from any one caller's cancellation, so one
// impatient client cannot fail the others.
func (e *Engine) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	k := key(t, r)
	if v, ok := e.ended.Get(k); ok && v.usable(time.Now()) {
		if v.status.State.Terminal() {
			e.describes.cached.Add(1)
		} else {
			e.describes.fresh.Add(1)
		}
		return v.status, nil
	}
	own := false // set by the call this read starts, if it starts one
	ch := e.flight.DoChan("d"+k, func() (any, error) {
		own = true
		st, err := e.Engine.Describe(context.WithoutCancel(ctx), t, r)
		switch {
		case err != nil:
		case st.State.Terminal():
			e.learn(ctx, t, r, k, st.State, func(v *ended) { v.status, v.until = st, time.Time{} })
		case e.fresh > 0:
			e.ended.Update(k, func(v *ended) { v.status, v.until = st, time.Now().Add(e.fresh) })
		}
		return st, err
	})
	st, err, answered := await[adapters.Status](ctx, ch)
	if answered {
		e.describes.flown(own)
	}
	return st, err
}

// Outcome is cached once read; concurrent first reads share one call.
func (e *Engine) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	k := key(t, r)
	if v, ok := e.ended.Get(k); ok && v.outcome != nil {
		e.outcome.cached.Add(1)
		return *v.outcome, nil
	}
	own := false
	ch := e.flight.DoChan("o"+k, func() (any, error) {
		own = true
		o, err := e.Engine.Outcome(context.WithoutCancel(ctx), t, r)
		if err == nil {
			e.learn(ctx, t, r, k, o.State, func(v *ended) { v.outcome = &o })
		}
		return o, err
	})
	o, err, answered := await[adapters.Outcome](ctx, ch)
	if answered {
		e.outcome.flown(own)
	}
	return o, err
}

// learn records in the cache what is known of an ended execution, forgets any running status it
// kept (the next read must see the end), and, the first time, tells onEnded.
func (e *Engine) learn(ctx context.Context, t adapters.Target, r adapters.Ref, k string, s adapters.State, record func(*ended)) {
	first := false
	e.ended.Update(k, func(v *ended) {
		first = !endKnown(*v)
		record(v)
		if !v.status.State.Terminal() {
			v.status, v.until = adapters.Status{}, time.Time{}
		}
	})
	if first && e.onEnded != nil {
		e.onEnded(ctx, t, r, s)
	}
}

// await waits for a shared call, or for this caller's ctx: an impatient caller leaves the call
// running for the others. answered is false when ctx ended first.
func await[T any](ctx context.Context, ch <-chan singleflight.Result) (v T, err error, answered bool) {
	select {
	case res := <-ch:
		if res.Err != nil {
			return v, res.Err, true
		}
		return res.Val.(T), nil, true
	case <-ctx.Done():
		return v, ctx.Err(), false
	}
}

// Wait keeps the outcome (and so forgets any fresh running status).
func (e *Engine) Wait(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	o, err := e.Engine.Wait(ctx, t, r)
	if err == nil {
		e.learn(ctx, t, r, key(t, r), o.State, func(v *ended) { v.outcome = &o })
	}
	return o, err
}

// Run tells onEnded of the execution it ran; it keeps nothing, since nothing reads a run
// execution again.
func (e *Engine) Run(ctx context.Context, t adapters.Target, req adapters.StartRequest) (adapters.Ref, adapters.Outcome, error) {
	r, o, err := e.Engine.Run(ctx, t, req)
	if err == nil && e.onEnded != nil {
		e.onEnded(ctx, t, r, o.State)
	}
	return r, o, err
}

// Cancel also forgets any fresh running status, so that the next read sees the cancellation
// (what is known of an end stays).
func (e *Engine) Cancel(ctx context.Context, t adapters.Target, r adapters.Ref, reason string) error {
	err := e.Engine.Cancel(ctx, t, r, reason)
	e.ended.DeleteIf(key(t, r), unended)
	return err
}

// Answer also forgets any fresh running status, so that the next read no longer shows the
// question answered (what is known of an end stays).
func (e *Engine) Answer(ctx context.Context, t adapters.Target, r adapters.Ref, q string, a adapters.Answer) error {
	err := e.Engine.Answer(ctx, t, r, q, a)
	e.ended.DeleteIf(key(t, r), unended)
	return err
}

// unended reports whether an entry holds only a running status, which may still change.
func unended(v ended) bool { return !endKnown(v) }

// Len is the number of cached executions.
func (c *Engine) Len() int { return c.ended.Len() }
