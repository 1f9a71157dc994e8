// Package pace says at what pace a task is polled: how old it is and its tool's polling curve.
// Whoever reads an execution for a task passes its Pace to adapters.Engine explicitly, which hands
// it to its readings and hooks: adapters/coalesce reuses a reading of a running execution for the
// curve's interval at the task's age, adapters/budget learns from it what the running tasks ask of
// the engine, and adapters.Engine.Wait polls at it. Drivers never see it.
package pace

import "time"

// Curve is how long a reading of a task made at the task's age stays fresh: the polling interval
// its tool suggests then, bounded by how stale the tool lets an answer be. One Curve serves every
// task of a tool (mapping.Tool is one), so that what follows a task keeps no copy of it.
type Curve interface {
	FreshFor(age time.Duration) time.Duration
}

// CurveFunc is a Curve of an ordinary function.
type CurveFunc func(age time.Duration) time.Duration

// FreshFor returns f(age).
func (f CurveFunc) FreshFor(age time.Duration) time.Duration { return f(age) }

// Pace is how one task is polled. The zero Pace is unpaced: no curve is known.
type Pace struct {
	// Created is when the task was created: its age counts from then. Zero: from the start of
	// the execution, as read.
	Created time.Time
	// Curve is the task's tool's; nil: unpaced.
	Curve Curve
}

// Paced reports whether p has a curve.
func (p Pace) Paced() bool { return p.Curve != nil }

// Interval says how long a reading made at age stays good, by the curve.
func (p Pace) Interval(age time.Duration) time.Duration { return p.Curve.FreshFor(age) }

// Age returns the task's age at t, counted from Created, else from started (the execution's start).
func (p Pace) Age(t, started time.Time) time.Duration {
	if !p.Created.IsZero() {
		started = p.Created
	}
	return max(t.Sub(started), 0)
}
