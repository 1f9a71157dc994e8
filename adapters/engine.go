package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
)

// Engine is one engine as taskgate uses it: a driver's Conn under what every engine needs once,
// whatever the driver. Its calls pass through the hooks (EngineOptions.Hooks: instrumentation,
// read budgets, the charge of each call to its caller); its reads of executions through a store
// of readings (EngineOptions.Readings: adapters/coalesce), which may answer without a call; it
// waits for executions by polling them (Wait), and runs them as Start and Wait unless the target
// can only Run. All methods are safe for concurrent use.
type Engine struct {
	conn     Conn
	hooks    []Hook
	readings Readings
	// lag is the engine's visibility lag (VisibilityLag).
	lag time.Duration
	// infos are the targets' TargetInfo by target name, from Check.
	infos sync.Map
}

// EngineOptions say what an Engine adds to its Conn.
type EngineOptions struct {
	// Hooks are told of every engine call, outermost first: each sees the calls that the hooks
	// before it let through.
	Hooks []Hook
	// Readings, when set, is consulted by every Describe and Outcome before the engine is read.
	Readings Readings
}

// NewEngine returns the Engine over c.
func NewEngine(c Conn, o EngineOptions) *Engine {
	return &Engine{conn: c, hooks: o.Hooks, readings: o.Readings, lag: VisibilityLagOf(c)}
}

// VisibilityLagOf is the visibility lag c declares (VisibilityLagger), DefaultVisibilityLag when
// it declares none: what the Engine over c and the Readings of its engine read.
func VisibilityLagOf(c Conn) time.Duration {
	if l, ok := c.(driver.VisibilityLagger); ok {
		return max(l.VisibilityLag(), 0)
	}
	return DefaultVisibilityLag
}

// VisibilityLag is how long after its start "not found" may be a start that the engine does not
// show yet (VisibilityLagOf its Conn). Wait reads "not found" so for that long after it
// began, the Readings keep no such reading of a task younger, and the task service reads such a
// task as still starting.
func (e *Engine) VisibilityLag() time.Duration { return e.lag }

// Conn is the driver's connection under e: for what only its driver knows (its own client).
func (e *Engine) Conn() Conn { return e.conn }

// Op is the kind of one engine call.
type Op uint8

// The engine calls, one per method of Conn and its optional interfaces that reaches the engine.
const (
	OpCheck Op = iota
	OpStart
	OpDescribe
	OpOutcome
	OpList
	OpSweep
	OpSample
	OpCancel
	OpAnswer
	OpRun
	// NumOps is the number of Ops, for tables indexed by Op.
	NumOps int = iota
)

var opNames = [NumOps]string{"check", "start", "describe", "outcome", "list", "sweep", "sample", "cancel", "answer", "run"}

func (o Op) String() string {
	if int(o) < NumOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", o)
}

// Call is one engine call as hooks see it.
type Call struct {
	Op     Op
	Target Target
	// Ref is the execution the call is about (Describe, Outcome, Cancel, Answer); zero otherwise.
	Ref Ref
	// Calls is how many engine calls the driver makes for it: the target's TargetInfo.ReadCalls
	// for a Describe, OutcomeCalls for an Outcome, once Check told them; else 1.
	Calls int
	// Request is the request of a Start or a Run; a hook may add to it before the call (the
	// instrumentation writes the trace context into its Trace).
	Request *StartRequest
	// Status is what a Describe read, set before the hooks are told that it ended without error.
	Status Status
	// Pace is the pace of the task a Describe or a Start is for (zero: unpaced).
	Pace pace.Pace
}

// Hook is told of an engine call before it is made. It returns the context the call is made with
// (and the later hooks are told with), and may refuse the call with an error, which the call then
// ends with: the hooks after it, and the engine, are not called (a read budget refuses a read
// with a *Throttle). Otherwise done, when not nil, is told how the call ended, after the hooks
// after it were, and returns the error the call ends with: err, or what the hook makes of it (a
// read budget gives an engine's throttle its own retry-after).
type Hook func(ctx context.Context, c *Call) (_ context.Context, done func(err error) error, refused error)

// Readings is what an Engine consults before it reads an execution (adapters/coalesce): it may
// answer from what earlier reads told, or call read, which makes the engine call through the
// hooks. It is told what changes an execution, so that it never answers with what is no longer
// true.
type Readings interface {
	// Describe answers a Describe of r for a task of pace p, or calls read, which makes the
	// engine call for the Ref it is given: r, or the copy of its id the Readings keep.
	Describe(ctx context.Context, t Target, r Ref, p pace.Pace, read func(context.Context, Ref) (Status, error)) (Status, error)
	Outcome(ctx context.Context, t Target, r Ref, read func(context.Context) (Outcome, error)) (Outcome, error)
	// Started is told of an execution that Start just started for req, for a task of pace p,
	// under each Ref that names it (a keyed start's Ref, and its KeyRef).
	Started(ctx context.Context, t Target, r Ref, req StartRequest, p pace.Pace)
	// Changed is told that a Cancel or an Answer was asked of the execution, however it went.
	Changed(t Target, r Ref)
	// Ran is told of an execution that a Runner ran to its end, which no read saw.
	Ran(ctx context.Context, t Target, r Ref, s State)
}

// hooked makes the call c with do, through the hooks.
func (e *Engine) hooked(ctx context.Context, c *Call, do func(context.Context) error) error {
	var small [4]func(error) error
	dones := small[:0]
	var err error
	for _, h := range e.hooks {
		var done func(error) error
		if ctx, done, err = h(ctx, c); err != nil {
			break
		}
		dones = append(dones, done)
	}
	if err == nil {
		err = do(ctx)
	}
	for i := len(dones) - 1; i >= 0; i-- {
		if dones[i] != nil {
			err = dones[i](err)
		}
	}
	return err
}

// readCalls is how many engine calls the driver makes for a read of a running execution of t, and
// outcomeCalls for a read of r's outcome.
func (e *Engine) readCalls(t Target) int {
	return max(e.info(t).ReadCalls, 1)
}

func (e *Engine) outcomeCalls(t Target, r Ref) int {
	if c, ok := e.conn.(driver.OutcomeCoster); ok {
		if n := c.OutcomeCalls(t, r); n > 0 {
			return n
		}
	}
	return max(e.info(t).OutcomeCalls, 1)
}

// info is what Check told of t; zero before it did.
func (e *Engine) info(t Target) TargetInfo {
	v, _ := e.infos.Load(t.Name)
	info, _ := v.(TargetInfo)
	return info
}

// Check verifies that a target exists and can be served (Conn.Check), and remembers what it tells
// of the target: how many engine calls its reads make, and whether it can only Run.
func (e *Engine) Check(ctx context.Context, t Target) (info TargetInfo, err error) {
	err = e.hooked(ctx, &Call{Op: OpCheck, Target: t, Calls: 1}, func(ctx context.Context) (err error) {
		info, err = e.conn.Check(ctx, t)
		return err
	})
	if err == nil {
		e.infos.Store(t.Name, info)
	}
	return info, err
}

// Start starts one execution (Conn.Start) for a task of pace p, which is the first reading of it.
func (e *Engine) Start(ctx context.Context, t Target, req StartRequest, p pace.Pace) (r Ref, err error) {
	err = e.hooked(ctx, &Call{Op: OpStart, Target: t, Calls: 1, Request: &req, Pace: p}, func(ctx context.Context) (err error) {
		r, err = e.conn.Start(ctx, t, req)
		return err
	})
	if err == nil && e.readings != nil {
		e.readings.Started(ctx, t, r, req, p)
		if req.Key != "" {
			if kr := e.conn.KeyRef(t, req.Key, req.Caller); kr != r { // the same execution, by its key
				e.readings.Started(ctx, t, kr, req, p)
			}
		}
	}
	return r, err
}

// KeyRef is Conn.KeyRef: no engine call.
func (e *Engine) KeyRef(t Target, key, caller string) Ref { return e.conn.KeyRef(t, key, caller) }

// Owns is Conn.Owns: no engine call.
func (e *Engine) Owns(t Target, r Ref, caller string) bool { return e.conn.Owns(t, r, caller) }

// Describe reads the current state (Conn.Describe) for a task of pace p, or what the readings
// answer instead: then Status.ReadAt says when it was read, and NextReadAt when it will be next.
func (e *Engine) Describe(ctx context.Context, t Target, r Ref, p pace.Pace) (Status, error) {
	if e.readings == nil {
		return e.describe(ctx, t, r, p)
	}
	return e.readings.Describe(ctx, t, r, p, func(ctx context.Context, r Ref) (Status, error) { return e.describe(ctx, t, r, p) })
}

func (e *Engine) describe(ctx context.Context, t Target, r Ref, p pace.Pace) (Status, error) {
	c := &Call{Op: OpDescribe, Target: t, Ref: r, Calls: e.readCalls(t), Pace: p}
	err := e.hooked(ctx, c, func(ctx context.Context) (err error) {
		c.Status, err = e.conn.Describe(ctx, t, r)
		return err
	})
	return c.Status, err
}

// Outcome reads how an ended execution ended (Conn.Outcome), or what the readings kept of it.
func (e *Engine) Outcome(ctx context.Context, t Target, r Ref) (Outcome, error) {
	if e.readings == nil {
		return e.outcome(ctx, t, r)
	}
	return e.readings.Outcome(ctx, t, r, func(ctx context.Context) (Outcome, error) { return e.outcome(ctx, t, r) })
}

func (e *Engine) outcome(ctx context.Context, t Target, r Ref) (o Outcome, err error) {
	err = e.hooked(ctx, &Call{Op: OpOutcome, Target: t, Ref: r, Calls: e.outcomeCalls(t, r)}, func(ctx context.Context) (err error) {
		o, err = e.conn.Outcome(ctx, t, r)
		return err
	})
	return o, err
}

// DefaultVisibilityLag is the visibility lag of a Conn that declares none (VisibilityLagger): the
// longest of the engines here, Step Functions' eventually consistent reads after a start.
const DefaultVisibilityLag = 10 * time.Second

// unpaced is how often Wait reads an execution when neither the readings nor the read's pace
// say when.
const unpaced = 100 * time.Millisecond

// Wait polls Describe at the task's pace (the readings' NextReadAt, else p's) until
// the execution ends, then reads its outcome. Throttled reads and, within the engine's
// VisibilityLag of its beginning, "not found" (a start the engine does not show yet) do not end
// it; ctx does.
func (e *Engine) Wait(ctx context.Context, t Target, r Ref, p pace.Pace) (Outcome, error) {
	young := time.Now().Add(e.lag)
	for {
		st, err := e.Describe(ctx, t, r, p)
		next := time.Second
		switch {
		case err == nil && st.State.Terminal():
			return e.Outcome(ctx, t, r)
		case err == nil && !st.NextReadAt.IsZero():
			next = time.Until(st.NextReadAt)
		case err == nil:
			next = pacedAt(p, st)
		case errors.Is(err, ErrNotFound) && time.Now().Before(young):
			next = 200 * time.Millisecond
		case errors.Is(err, ErrUnavailable) && ctx.Err() == nil:
			next = driver.RetryAfter(err)
		default:
			return Outcome{}, err
		}
		if err := driver.SleepUntil(ctx, max(next, 10*time.Millisecond), e.Changes(t, r)); err != nil {
			return Outcome{}, err
		}
	}
}

// Notifier is Readings that tell when what they know of an execution changes (adapters/coalesce,
// whose sweeps learn of ends without any read of the execution's own).
type Notifier interface {
	// Changes returns a channel that is closed at the next change recorded of the execution: a
	// new reading, its end, a cancel or an answer asked.
	Changes(t Target, r Ref) <-chan struct{}
}

// Changes returns a channel that is closed at the next change the readings record of the
// execution, when they tell (Notifier); nil otherwise, which never closes: wait on it beside a
// timer.
func (e *Engine) Changes(t Target, r Ref) <-chan struct{} {
	if n, ok := e.readings.(Notifier); ok {
		return n.Changes(t, r)
	}
	return nil
}

// pacedAt is when to read a running execution again, by its task's pace p when it has one.
func pacedAt(p pace.Pace, st Status) time.Duration {
	if !p.Paced() {
		return unpaced
	}
	return p.Interval(p.Age(time.Now(), st.Started))
}

// Run starts an execution and waits for its outcome: Start and Wait, so that its reads are paced
// like any other, or, for a target whose TargetInfo.SyncOnly is set, the Conn's Runner (a target
// not checked yet is checked first, when the Conn is a Runner).
func (e *Engine) Run(ctx context.Context, t Target, req StartRequest, p pace.Pace) (Ref, Outcome, error) {
	runner, ok := e.conn.(driver.Runner)
	if ok {
		sync, err := e.syncOnly(ctx, t)
		if err != nil {
			return Ref{}, Outcome{}, err
		}
		ok = sync
	}
	if !ok {
		r, err := e.Start(ctx, t, req, p)
		if err != nil {
			return r, Outcome{}, err
		}
		o, err := e.Wait(ctx, t, r, p)
		return r, o, err
	}
	var r Ref
	var o Outcome
	err := e.hooked(ctx, &Call{Op: OpRun, Target: t, Calls: 1, Request: &req}, func(ctx context.Context) (err error) {
		r, o, err = runner.Run(ctx, t, req)
		return err
	})
	if err == nil && e.readings != nil {
		e.readings.Ran(ctx, t, r, o.State)
	}
	return r, o, err
}

// syncOnly reports whether t can only Run, checking it when it was not.
func (e *Engine) syncOnly(ctx context.Context, t Target) (bool, error) {
	if v, ok := e.infos.Load(t.Name); ok {
		return v.(TargetInfo).SyncOnly != "", nil
	}
	info, err := e.Check(ctx, t)
	return info.SyncOnly != "", err
}

// List reads one page of the executions of o.Target that o.Caller started (Conn.List).
func (e *Engine) List(ctx context.Context, o ListOptions) (l []Listed, next string, err error) {
	err = e.hooked(ctx, &Call{Op: OpList, Target: o.Target, Calls: 1}, func(ctx context.Context) (err error) {
		l, next, err = e.conn.List(ctx, o)
		return err
	})
	return l, next, err
}

// Supports reports whether the Conn does op: every Op but OpSweep (a Sweeper), OpSample (a
// Sampler) and OpRun (a Runner; Run itself works on every engine).
func (e *Engine) Supports(op Op) bool {
	switch op {
	case OpSweep:
		_, ok := e.conn.(driver.Sweeper)
		return ok
	case OpSample:
		_, ok := e.conn.(driver.Sampler)
		return ok
	case OpRun:
		_, ok := e.conn.(driver.Runner)
		return ok
	}
	return int(op) < NumOps
}

// SweepGroup names the targets that one Sweep lists together (Sweeper.SweepGroup); t's own Name
// when the Conn is no Sweeper.
func (e *Engine) SweepGroup(t Target) string {
	if sw, ok := e.conn.(driver.Sweeper); ok {
		return sw.SweepGroup(t)
	}
	return t.Name
}

// Sweep reads one page of the listing of o.Refs of o.Targets (Sweeper.Sweep); an error wrapping
// ErrUnsupported when the Conn is no Sweeper.
func (e *Engine) Sweep(ctx context.Context, o SweepOptions) (l []Listed, next string, err error) {
	sw, ok := e.conn.(driver.Sweeper)
	if !ok {
		return nil, "", fmt.Errorf("sweep of %s: %w", sweepCall(e, o.Targets).Target.Name, ErrUnsupported)
	}
	err = e.hooked(ctx, sweepCall(e, o.Targets), func(ctx context.Context) (err error) {
		l, next, err = sw.Sweep(ctx, o)
		return err
	})
	return l, next, err
}

// SweepEnded reads one page of the ends of o.Refs of o.Targets since o.Since
// (EndSweeper.SweepEnded), as a sweep for the hooks; an error wrapping ErrUnsupported when the
// Conn is no EndSweeper.
func (e *Engine) SweepEnded(ctx context.Context, o SweepOptions) (l []Listed, next string, err error) {
	sw, ok := e.conn.(driver.EndSweeper)
	if !ok {
		return nil, "", fmt.Errorf("sweep of the ends of %s: %w", sweepCall(e, o.Targets).Target.Name, ErrUnsupported)
	}
	err = e.hooked(ctx, sweepCall(e, o.Targets), func(ctx context.Context) (err error) {
		l, next, err = sw.SweepEnded(ctx, o)
		return err
	})
	return l, next, err
}

// sweepCall is the Call of a sweep of ts as hooks see it: of the one target, or of a target named
// for the group when it lists several.
func sweepCall(e *Engine, ts []Target) *Call {
	c := &Call{Op: OpSweep, Calls: 1}
	switch len(ts) {
	case 0:
	case 1:
		c.Target = ts[0]
	default:
		c.Target = Target{Name: e.SweepGroup(ts[0])}
	}
	return c
}

// Notices receives the engine's notices of its executions' changes (EventSource.Notices); an error
// wrapping ErrUnsupported when the Conn is no EventSource. They make no call that hooks see: an
// event source spends no read quota.
func (e *Engine) Notices(ctx context.Context, heard func(at time.Time, changed []Listed)) error {
	n, ok := e.conn.(driver.EventSource)
	if !ok {
		return fmt.Errorf("notices: %w", ErrUnsupported)
	}
	return n.Notices(ctx, heard)
}

// Samples reads the inputs of at most n of the latest executions of t (Sampler.Samples); an error
// wrapping ErrUnsupported when the Conn is no Sampler.
func (e *Engine) Samples(ctx context.Context, t Target, n int) (inputs []json.RawMessage, err error) {
	sa, ok := e.conn.(driver.Sampler)
	if !ok {
		return nil, fmt.Errorf("samples of %s: %w", t.Name, ErrUnsupported)
	}
	// A listing, then at most a read of each execution.
	err = e.hooked(ctx, &Call{Op: OpSample, Target: t, Calls: 1 + n}, func(ctx context.Context) (err error) {
		inputs, err = sa.Samples(ctx, t, n)
		return err
	})
	return inputs, err
}

// Cancel asks the engine to stop the execution (Conn.Cancel); the readings forget what they
// read of it running.
func (e *Engine) Cancel(ctx context.Context, t Target, r Ref, reason string) error {
	err := e.hooked(ctx, &Call{Op: OpCancel, Target: t, Ref: r, Calls: 1}, func(ctx context.Context) error {
		return e.conn.Cancel(ctx, t, r, reason)
	})
	if e.readings != nil {
		e.readings.Changed(t, r)
	}
	return err
}

// Answer delivers an answer to the open question key (Conn.Answer); the readings forget what they
// read of the execution running.
func (e *Engine) Answer(ctx context.Context, t Target, r Ref, key string, a Answer) error {
	err := e.hooked(ctx, &Call{Op: OpAnswer, Target: t, Ref: r, Calls: 1}, func(ctx context.Context) error {
		return e.conn.Answer(ctx, t, r, key, a)
	})
	if e.readings != nil {
		e.readings.Changed(t, r)
	}
	return err
}

// Close closes the Conn.
func (e *Engine) Close() error { return e.conn.Close() }

// As sets target to an engine SDK client that the Conn holds, as driver.As does: the escape hatch
// to what the contract does not do, tied to one driver.
func (e *Engine) As(target any) bool { return driver.As(e.conn, target) }
