// Package pace tells the engine decorators, in the context of a read, at what pace the task being
// read is polled: how old it is and its polling curve. adapters/coalesce reuses a reading of a
// running execution for the curve's interval at the task's age, and adapters/budget learns from it
// what the running tasks ask of the engine. Engines themselves ignore it.
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

// Interval is how long a reading made at age stays good: the curve's interval, at most MaxStale.
func (p Pace) Interval(age time.Duration) time.Duration {
	d := p.Curve(age)
	if p.MaxStale > 0 {
		d = min(d, p.MaxStale)
	}
	return d
}

// Age is the task's age at t, counted from Created, else from started (the execution's start).
func (p Pace) Age(t, started time.Time) time.Duration {
	if !p.Created.IsZero() {
		started = p.Created
	}
	return max(t.Sub(started), 0)
}

type key struct{}

// With is ctx carrying p.
func With(ctx context.Context, p Pace) context.Context { return context.WithValue(ctx, key{}, p) }

// Of is the pace ctx carries, if any.
func Of(ctx context.Context) (Pace, bool) {
	p, ok := ctx.Value(key{}).(Pace)
	return p, ok && p.Curve != nil
}

type awaitedKey struct{}

// Awaited marks ctx as a read that someone is waiting on and that no reading can stand in for: a
// read of an execution that has no reading to answer its polls from, or a read of a call that
// waits for its execution's end. adapters/coalesce marks them, and adapters/budget gives them
// their turns ahead of the reads that would only refresh a reading that polls are answered from
// meanwhile.
func Awaited(ctx context.Context) context.Context { return context.WithValue(ctx, awaitedKey{}, false) }

// LastLook marks ctx as the last read of a call that waits for the end before its deadline: it
// is made now, whatever reading there is and whatever turns are booked, so that a call whose
// execution has ended is not answered that it timed out for want of a read.
func LastLook(ctx context.Context) context.Context { return context.WithValue(ctx, awaitedKey{}, true) }

// IsAwaited reports whether ctx is marked by Awaited or LastLook, and whether by LastLook.
func IsAwaited(ctx context.Context) (awaited, last bool) {
	last, awaited = ctx.Value(awaitedKey{}).(bool)
	return awaited, last
}
