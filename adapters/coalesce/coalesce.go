// Package coalesce keeps the readings of an adapters.Engine (its adapters.Readings), so that reads
// of executions cost the engine what the tasks' polling curves say, whatever their clients do:
//
//   - concurrent reads of the same execution share one engine call;
//   - a reading of a running execution answers further reads for the polling interval at the
//     task's age (the read's adapters/pace), stretched by the load of a read budget under it
//     (Options.Stretch), so that a client polling every 100 ms costs the engine what one that
//     follows the interval costs;
//   - when the engine, or a read budget in front of it, throttles a read, the newest reading
//     answers instead, with the time it was made (Status.ReadAt); only a read with no reading to
//     fall back on waits a little (Options.Wait), then fails;
//   - a start is a first reading (Submitted, as of the start);
//   - the outcome of an ended execution, which can never change, is kept, and answers Describe;
//   - so is, for as long as a running reading would be, that an execution was not found: a client
//     that asks again and again about an id that names nothing costs the engine what one that
//     polls a running task costs (but for a task younger than its engine's visibility lag, which
//     the engine may not show yet: Options.VisibilityLag);
//   - every reading says when the engine will next be read for it (Status.NextReadAt), so that
//     adapters.Engine.Wait, which polls through all of this, costs the engine no more than a
//     client polling at the task's pace.
//
// All of it sits in one bounded cache that is only ever a shortcut: a replica without it answers
// the same, with more engine calls. It counts how it served each read (Counts), and tells the
// first time it learns that an execution ended (Options.Ended).
package coalesce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/internal/lru"
)

// Ended is told the first time the Readings learn that an execution ended, with the context of the
// call that learnt it.
type Ended func(ctx context.Context, t adapters.Target, r adapters.Ref, s adapters.State)

// Options say how Readings reuse what the engine reads.
type Options struct {
	// Size bounds the cache, in executions (0: nothing is kept, not even ended outcomes).
	Size int
	// Bytes, when positive, also bounds the bytes the cache holds: readings' messages and
	// questions, outcomes' output and errors. An execution that needs more on its own is not
	// kept: its reads all reach the engine.
	Bytes int64
	// Fresh is how long a reading of a running execution answers reads that carry no pace; and,
	// when negative, that no reading of a running execution is ever reused (every read asks the
	// engine, throttled ones included: for measuring one read).
	Fresh time.Duration
	// Stretch, when set, multiplies how long a reading is reused: the load of a read budget
	// (adapters/budget), so that each running task's readings last its fair share of the budget.
	Stretch func() float64
	// Wait bounds how long a read that has no reading to fall back on waits for a throttled
	// engine or a spent budget, before it fails with the throttle's error. Default 2s.
	Wait time.Duration
	// Ended, when set, is told the first time a read tells that an execution ended; an execution
	// that has dropped out of the cache may be told again.
	Ended Ended
	// VisibilityLag is how long after its start "not found" may be a start that the engine does
	// not show yet (adapters.VisibilityLagOf its Conn): no such reading of a task younger is kept.
	VisibilityLag time.Duration
	// ListsApart says that the engine's listings spend a budget of their own, not the reads':
	// a listing never waits for the tokens of the outcomes in flight, so confirmations are held
	// to confirmsApart at a time rather than confirmsAtOnce.
	ListsApart bool
	// SweepEvery (default 1s) and Interest (default 2 minutes) say how Sweeps sweep: the running
	// executions that reads asked about in the last Interest, every SweepEvery.
	SweepEvery, Interest time.Duration
	// Carry, when set, is what a sweep keeps of the context of the read that first followed an
	// execution, to read it with (and tell Ended with): the reader's own values, never its
	// request's, since a sweep is made for no one request. Without it, a sweep reads with none.
	Carry func(ctx context.Context) context.Context
}

// outcomeWait bounds how long an outcome read waits through throttles.
const outcomeWait = 10 * time.Second

// Readings are the adapters.Readings of one engine.
type Readings struct {
	opts               Options
	describing         flight[adapters.Status]
	outcomes           flight[adapters.Outcome]
	cache              *lru.Cache[adapters.ExecKey, entry]
	missing            *lru.Cache[adapters.ExecKey, time.Time] // until when an execution read as not found
	describes, outcome served
	sweeps             *sweeper
	watchMu            sync.Mutex
	watchers           map[adapters.ExecKey]chan struct{} // closed at the next change: Changes
	watchersKept       int                                // how many were left at the last pruneWatchers
}

var _ adapters.Readings = (*Readings)(nil)

// New returns Readings that share, reuse and keep an engine's reads as o says.
func New(o Options) *Readings {
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	cache := lru.New[adapters.ExecKey, entry](o.Size)
	if o.Bytes > 0 {
		cache = lru.NewWeighed(o.Size, o.Bytes, weigh)
	}
	return &Readings{opts: o, cache: cache, missing: lru.New[adapters.ExecKey, time.Time](o.Size / 16)}
}

// entry is what the cache knows of one execution.
type entry struct {
	// status is the newest reading; its ReadAt is zero when the entry holds no running reading.
	status adapters.Status
	// born is when the task read was created, as the read knew it: its age at the reading is
	// status.ReadAt - born.
	born time.Time
	// due is how long the reading answers reads by the task's curve; window is due stretched by
	// the load: reuse past due is stale.
	due, window time.Duration
	// hold: no engine read before then (a throttle's retry-after); the reading answers until.
	hold time.Time
	// swept is when a sweep last showed the execution running: the reading is true as of then.
	swept time.Time
	// outcome is the ended execution's outcome, once read.
	outcome *adapters.Outcome
	// endListed: a listing or a notice showed the execution ended, and no one waited to be told:
	// the next read reads its outcome.
	endListed bool
}

// entryOverhead is about what an entry costs besides its strings and slices: the entry and its
// outcome, the cache's list element and map slot.
const entryOverhead = 512

// weigh is about how many bytes the cache holds for an entry under key k: its id's (the target's
// name is its tool's, shared by all its executions).
func weigh(k adapters.ExecKey, v entry) int64 {
	n := entryOverhead + len(k.ID) + len(v.status.Native) + len(v.status.Message)
	for _, q := range v.status.Inputs {
		n += len(q.Key) + len(q.Message) + cap(q.Schema) + 64
	}
	if o := v.outcome; o != nil {
		n += len(o.Native) + cap(o.Output) + len(o.Error) + len(o.Cause)
	}
	return int64(n)
}

// endKnown reports whether the entry knows that the execution ended (and Ended was told so).
func endKnown(v entry) bool { return v.status.State.Terminal() || v.outcome != nil }

// unended reports whether an entry holds only a running reading, which may still change.
func unended(v entry) bool { return !endKnown(v) }

// elapsed is how far a running reading is behind at now: the time since it was made, or, when the
// read knows the task's age, how much the task has aged since, whichever is more (they agree for
// a task read through one id; the age is what the curve is written in).
func (v entry) elapsed(now time.Time, p pace.Pace, paced bool) time.Duration {
	wall := now.Sub(v.status.ReadAt)
	if !paced {
		return wall
	}
	return max(wall, p.Age(now, v.status.Started)-v.status.ReadAt.Sub(v.born))
}

// reusable reports whether the entry answers a read at now, and for how long more it will. The
// last fiftieth of the window does not: a client that polls at the interval it was told arrives
// give or take a few milliseconds, and must find a fresh reading, not the old one.
func (v entry) reusable(now time.Time, p pace.Pace, paced bool) (left time.Duration, ok bool) {
	switch {
	case v.status.State.Terminal():
		return 0, true
	case v.status.ReadAt.IsZero():
		return 0, false
	}
	left = v.window - v.elapsed(now, p, paced)
	if now.Before(v.hold) {
		left = max(left, v.hold.Sub(now))
	}
	return left, left > v.window/50
}

// Served counts the reads of one kind by how they were answered.
type Served struct {
	// Engine: by an engine call of the read's own. Shared: by another read's call in flight.
	// Fresh: by a running execution's reading within its polling interval. Stale: by one past
	// it, because the load stretched the interval or the engine (or the budget) throttled the
	// read. Cached: by what is kept of an ended execution.
	Engine, Shared, Fresh, Stale, Cached uint64
}

// Counts are the reads the Readings have served since New.
type Counts struct {
	Describe, Outcome Served
}

// Counts reads the counters; each only grows.
func (e *Readings) Counts() Counts {
	return Counts{Describe: e.describes.load(), Outcome: e.outcome.load()}
}

type served struct{ engine, shared, fresh, stale, cached atomic.Uint64 }

func (s *served) load() Served {
	return Served{Engine: s.engine.Load(), Shared: s.shared.Load(), Fresh: s.fresh.Load(), Stale: s.stale.Load(), Cached: s.cached.Load()}
}

// flown counts a read answered by a call in flight: its own, or another's.
func (s *served) flown(own bool) {
	if own {
		s.engine.Add(1)
	} else {
		s.shared.Add(1)
	}
}

// sharedFor bounds a shared call. It runs apart from its callers' cancellation, so without a
// bound of its own a call the engine never answers (a connection gone silent) would hold its
// goroutine, and every later read of the execution would wait on it, long after its clients
// gave up. The engines report the end of the bound as unavailable, which clients retry.
var sharedFor = 30 * time.Second

// detached is ctx without its cancellation and deadline, bounded by sharedFor instead.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), sharedFor)
}

// Describe answers from what the cache holds while it is good, else shares one engine call among
// all concurrent callers; a throttled call is answered from the newest reading. The shared call
// runs detached from any one caller's cancellation, so one impatient client cannot fail the
// others (its first caller waits for it to end, however). Status.ReadAt is when the answer was
// read, and NextReadAt when the engine will next be read for it.
func (e *Readings) Describe(ctx context.Context, t adapters.Target, r adapters.Ref, p pace.Pace, describe func(context.Context, adapters.Ref) (adapters.Status, error)) (adapters.Status, error) {
	paced := p.Paced()
	k, v, cached := e.cache.Lookup(driver.KeyOf(t, r))
	r.ID = k.ID // its first reading's copy of the id: the one kept by all
	deadline := time.Now().Add(e.opts.Wait)
	for again := false; ; again = true {
		now := time.Now()
		if until, ok := e.missing.Get(k); ok && now.Before(until) {
			e.describes.cached.Add(1)
			return adapters.Status{}, fmt.Errorf("%w: %s was not found when last read, at most %s ago", adapters.ErrNotFound, r.ID, e.opts.notFoundFor(p, paced))
		}
		if again {
			v, cached = e.cache.Get(k)
		}
		if cached && v.endListed && !endKnown(v) && e.sweeps != nil && e.confirmListed(ctx, t, r, k) {
			continue
		}
		if cached && (e.opts.Fresh >= 0 || v.status.State.Terminal()) {
			if left, ok := v.reusable(now, p, paced); ok {
				st := e.answer(v, now, left, p, paced)
				if !st.State.Terminal() {
					e.follow(ctx, t, r, p, paced, true)
				}
				return st, nil
			}
		}
		st, err, answered := e.read(ctx, t, r, k, p, paced, describe)
		if err == nil && !st.State.Terminal() {
			e.follow(ctx, t, r, p, paced, true)
		}
		if !answered || !errors.Is(err, adapters.ErrThrottled) {
			return st, err
		}
		if v, ok := e.cache.Get(k); ok && !v.status.ReadAt.IsZero() {
			now := time.Now()
			e.describes.stale.Add(1)
			v.status.ReadAt = latest(v.status.ReadAt, v.swept, e.heardAt())
			v.status.NextReadAt = latest(v.hold, now)
			e.follow(ctx, t, r, p, paced, true)
			return v.status, nil
		}
		after := driver.RetryAfter(err)
		if e.sweeps != nil {
			after = min(after, time.Until(deadline))
		} else if time.Now().Add(after).After(deadline) {
			return adapters.Status{}, err
		}
		if after <= 0 {
			return adapters.Status{}, err
		}
		if e.sweeps != nil { // the next round lists it; if it ended, the read is made again after
			e.follow(ctx, t, r, p, paced, false)
			e.hurry(t)
		}
		if driver.SleepUntil(ctx, after, e.Changes(t, r)) != nil { // or a sweep records it
			return adapters.Status{}, ctx.Err()
		}
	}
}

// confirmListed reads the outcome of the execution k that a listing showed ended, for a read of
// it, and reports whether it was read: then the cache holds the end. One that has not ended (the
// listing was behind) loses its mark; one that could not be read now keeps it, and the read is
// answered from the running reading, which is all that is known for sure.
func (e *Readings) confirmListed(ctx context.Context, t adapters.Target, r adapters.Ref, k adapters.ExecKey) bool {
	_, err := e.sweeps.engine.Outcome(ctx, t, r)
	if errors.Is(err, adapters.ErrNotEnded) || errors.Is(err, adapters.ErrNotFound) {
		e.cache.Update(k, func(v *entry) { v.endListed = false })
	}
	return err == nil
}

// answer is a cached entry as the answer to a read at now, counted.
func (e *Readings) answer(v entry, now time.Time, left time.Duration, p pace.Pace, paced bool) adapters.Status {
	switch {
	case v.status.State.Terminal():
		e.describes.cached.Add(1)
		return v.status
	case v.elapsed(now, p, paced) >= v.due:
		e.describes.stale.Add(1)
	default:
		e.describes.fresh.Add(1)
	}
	v.status.NextReadAt = now.Add(left)
	if heard := e.heardAt(); heard.After(v.swept) {
		v.swept = heard
	}
	if !v.swept.IsZero() {
		v.status.ReadAt = latest(v.status.ReadAt, v.swept)
		if next := e.nextSweep(); next.Before(v.status.NextReadAt) {
			v.status.NextReadAt = latest(next, now)
		}
	}
	return v.status
}

// read makes (or joins) the engine call of a Describe and records what it tells. answered is
// false when ctx ended first.
func (e *Readings) read(ctx context.Context, t adapters.Target, r adapters.Ref, k adapters.ExecKey, p pace.Pace, paced bool, describe func(context.Context, adapters.Ref) (adapters.Status, error)) (st adapters.Status, err error, answered bool) {
	st, err, own, answered := e.describing.do(ctx, k, func() (adapters.Status, error) {
		at := time.Now()
		callCtx, cancel := detached(ctx)
		defer cancel()
		st, err := describe(callCtx, r)
		switch {
		case err == nil && st.State.Terminal():
			e.learn(ctx, t, r, k, st.State, func(v *entry) { v.status = st })
		case err == nil:
			st.ReadAt = at
			v := e.reading(st, p, paced)
			st.NextReadAt = at.Add(v.window)
			e.cache.Update(k, func(old *entry) {
				old.status, old.born, old.due, old.window, old.hold = v.status, v.born, v.due, v.window, time.Time{}
			})
			e.changed(k)
		case errors.Is(err, adapters.ErrNotFound) && e.opts.Fresh >= 0 && !(paced && at.Sub(p.Created) < e.opts.VisibilityLag):
			e.missing.Update(k, func(until *time.Time) { *until = at.Add(e.opts.notFoundFor(p, paced)) })
		case errors.Is(err, adapters.ErrThrottled):
			hold := time.Now().Add(driver.RetryAfter(err))
			e.cache.Update(k, func(v *entry) { v.hold = hold })
		}
		return st, err
	})
	if answered && err == nil {
		e.describes.flown(own)
	}
	return st, err, answered
}

// notFoundFor is how long a reading that found no execution answers reads at pace p: as long as
// a reading of a task just started would.
func (o Options) notFoundFor(p pace.Pace, paced bool) time.Duration {
	d := max(o.Fresh, 0)
	if paced {
		d = p.Interval(0)
	}
	if o.Stretch != nil {
		d = time.Duration(float64(d) * max(o.Stretch(), 1))
	}
	return d
}

// reading is the entry of a running reading st, for a read at pace p: good for the interval at
// the task's age then, stretched by the load.
func (e *Readings) reading(st adapters.Status, p pace.Pace, paced bool) entry {
	v := entry{status: st, due: e.opts.Fresh}
	if paced {
		v.born = st.Started
		if !p.Created.IsZero() {
			v.born = p.Created
		}
		v.due = p.Interval(p.Age(st.ReadAt, st.Started))
	}
	v.window = v.due
	if e.opts.Stretch != nil {
		v.window = time.Duration(float64(v.due) * max(e.opts.Stretch(), 1))
	}
	return v
}

// latest is the latest of ts.
func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// Outcome is cached once read; concurrent first reads share one call. A read throttled (by the
// engine or a budget) is tried again after its retry-after, within outcomeWait: the outcome is
// read once, and the caller has the end in hand.
func (e *Readings) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref, read func(context.Context) (adapters.Outcome, error)) (adapters.Outcome, error) {
	k := driver.KeyOf(t, r)
	deadline := time.Now().Add(outcomeWait)
	for {
		if v, ok := e.cache.Get(k); ok && v.outcome != nil {
			e.outcome.cached.Add(1)
			return *v.outcome, nil
		}
		o, err, own, answered := e.outcomes.do(ctx, k, func() (adapters.Outcome, error) {
			callCtx, cancel := detached(ctx)
			defer cancel()
			o, err := read(callCtx)
			if err == nil {
				e.learn(ctx, t, r, k, o.State, func(v *entry) {
					v.outcome = &o
					if !v.status.State.Terminal() && o.Status.State.Terminal() { // Describe answers from it
						v.status = o.Status
					}
				})
			}
			return o, err
		})
		if answered && err == nil {
			e.outcome.flown(own)
		}
		if !answered || !errors.Is(err, adapters.ErrThrottled) || time.Now().Add(driver.RetryAfter(err)).After(deadline) {
			return o, err
		}
		if driver.Sleep(ctx, driver.RetryAfter(err)) != nil {
			return o, ctx.Err()
		}
	}
}

// learn records in the cache what is known of an ended execution, forgets any running reading it
// kept (the next read must see the end), and, the first time, tells Ended.
func (e *Readings) learn(ctx context.Context, t adapters.Target, r adapters.Ref, k adapters.ExecKey, s adapters.State, record func(*entry)) {
	first := false
	e.cache.Update(k, func(v *entry) {
		first = !endKnown(*v)
		record(v)
		if !v.status.State.Terminal() {
			v.status = adapters.Status{}
		}
		v.hold = time.Time{}
	})
	if first && e.opts.Ended != nil {
		e.opts.Ended(ctx, t, r, s)
	}
	if first {
		e.changed(k)
	}
}

// Started takes a start without an idempotency key as the first reading of the new execution:
// submitted, as of now, good for the curve's first interval. (A keyed start may have found an
// execution that is older, or ended.) Either way, the execution is no longer missing.
func (e *Readings) Started(_ context.Context, t adapters.Target, r adapters.Ref, req adapters.StartRequest, p pace.Pace) {
	e.missing.DeleteIf(driver.KeyOf(t, r), func(time.Time) bool { return true })
	if req.Key != "" || e.opts.Fresh < 0 {
		return
	}
	now := time.Now()
	v := e.reading(adapters.Status{State: adapters.Submitted, Native: "STARTED", Message: "Started.", Started: now, Updated: now, ReadAt: now}, p, p.Paced())
	e.cache.Update(driver.KeyOf(t, r), func(old *entry) {
		if !endKnown(*old) {
			*old = v
		}
	})
}

// Ran tells Ended of the end of an execution that ran without any reading.
func (e *Readings) Ran(ctx context.Context, t adapters.Target, r adapters.Ref, s adapters.State) {
	if e.opts.Ended != nil {
		e.opts.Ended(ctx, t, r, s)
	}
}

// Changed forgets any running reading of an execution that was cancelled or answered, so that the
// next read sees the cancellation, or no longer shows the question answered (what is known of an
// end stays), and wakes whoever waits on Changes.
func (e *Readings) Changed(t adapters.Target, r adapters.Ref) {
	k := driver.KeyOf(t, r)
	e.cache.DeleteIf(k, unended)
	e.changed(k)
}

// Len is the number of cached executions.
func (e *Readings) Len() int { return e.cache.Len() }

// Bytes is about how many bytes the cache holds (0 without Options.Bytes).
func (e *Readings) Bytes() int64 { return e.cache.Bytes() }
