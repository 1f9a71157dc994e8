// Package pace tells an engine's readings and hooks, in the context of a read, at what pace the
// task being read is polled: how old it is and its polling curve. adapters/coalesce reuses a
// reading of a running execution for the curve's interval at the task's age, adapters/budget
// learns from it what the running tasks ask of the engine, and adapters.Engine.Wait polls at it.
// Drivers ignore it.
package pace

import (
	"context"
	"time"
)

// Pace is how one task is polled.
type Pace struct {
	// Created is when the task was created: its age counts from then. Zero: from the start of
	// the execution, as read.
	Created time.Time
	// Curve is the polling interval suggested at a task's age (mapping.Tool.PollIntervalAt).
	Curve func(age time.Duration) time.Duration
	// MaxStale, when positive, bounds Interval: readings of the task are never reused for longer.
	MaxStale time.Duration
}

// Interval says how long a reading made at age stays good: the curve's interval, at most MaxStale.
func (p Pace) Interval(age time.Duration) time.Duration {
	d := p.Curve(age)
	if p.MaxStale > 0 {
		d = min(d, p.MaxStale)
	}
	return d
}

// Age returns the task's age at t, counted from Created, else from started (the execution's start).
func (p Pace) Age(t, started time.Time) time.Duration {
	if !p.Created.IsZero() {
		started = p.Created
	}
	return max(t.Sub(started), 0)
}

type key struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Pace) context.Context { return context.WithValue(ctx, key{}, p) }

// Of returns the pace ctx carries, if any.
func Of(ctx context.Context) (Pace, bool) {
	p, ok := ctx.Value(key{}).(Pace)
	return p, ok && p.Curve != nil
}
