// Package memengine is an engine that runs its executions inside the process that opened it, for
// tests, as gocloud's mempubsub is for pub/sub. Importing it registers the "memory" engine kind:
//
//	engines:
//	  mem:
//	    memory: {retention: 1h}
//	tools:
//	  - name: echo
//	    engine: mem
//	    job: {program: echo, timeout: 30s}
//
// It knows five programs:
//   - "echo" takes {"seconds": n, "text": s}, waits n seconds and succeeds with {"text": s};
//   - "fail" takes {"seconds": n, "reason": s}, waits n seconds and fails with error
//     "Example.Failure" and cause s;
//   - "ask" takes {"message": s} and asks one question, key "confirm", with message s and
//     ConfirmSchema; accepted, it succeeds with the answer's content as output; declined, it fails
//     with error "taskgate.Declined"; dismissed (cancel), with error "taskgate.Dismissed";
//   - "ask-two" takes {} and asks two questions at once, keys "first" and "second", each with
//     ConfirmSchema; once both are accepted it succeeds with {"first": answer, "second": answer};
//     a decline or dismissal of either ends it as "ask" does;
//   - "steps" takes {"version": s, "stepSeconds": n} and runs three steps (compile, test,
//     package) of n seconds each, saying which in Status.Message, then succeeds with
//     {"version": s, "status": "released"}.
//
// A job that names another program is accepted but nothing ever runs it, as a task queue no worker
// polls: its executions stay Submitted, and Check warns. A job's timeout ends its executions
// TIMED_OUT.
//
// Samples reads the inputs of a program's latest executions, whoever started them
// (driver.Sampler).
//
// Every Open starts an empty engine: executions live as long as it, and only ended ones are
// forgotten, retention after they end. A closed engine, or one opened with unavailable: true,
// answers every call with driver.ErrUnavailable, as an engine whose server is down.
//
// It is also the smallest complete engine in taskgate: docs/adding-an-engine.md walks
// through it.
//
// Unlike the other drivers, whose New returns only the driver.Conn, it exports its Engine: tests
// embed a *Engine to change one method and keep every capability it has, which a Conn interface
// would hide.
package memengine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// The programs Start runs.
const (
	Echo   = "echo"
	Fail   = "fail"
	Ask    = "ask"
	AskTwo = "ask-two"
	Steps  = "steps"
)

// programs are the programs that run, as Check's warning names them.
const programs = "echo, fail, ask, ask-two and steps"

// Native states.
const (
	waiting   = "WAITING" // no program runs it
	running   = "RUNNING"
	succeeded = "SUCCEEDED"
	failed    = "FAILED"
	timedOut  = "TIMED_OUT"
	cancelled = "CANCELLED"
)

// programRE is what a job's program may be called; any other target is not a memory job.
var programRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Engine runs executions in memory. It is safe for concurrent use.
type Engine struct {
	retention time.Duration
	lag       time.Duration

	mu     sync.Mutex
	closed bool
	execs  map[string]*execution // by Ref.ID
}

var (
	_ driver.Conn             = (*Engine)(nil)
	_ driver.VisibilityLagger = (*Engine)(nil)
)

// Options configure an engine: what an engine block says.
type Options struct {
	// Retention is how long an ended execution stays readable; zero keeps it as long as the engine.
	Retention time.Duration
	// Unavailable makes the engine answer every call with driver.ErrUnavailable.
	Unavailable bool
	// VisibilityLag is the visibility lag the engine declares (driver.VisibilityLagger), for
	// tests of what an eventually consistent engine's starts do. The engine itself shows a start
	// at once: zero.
	VisibilityLag time.Duration
}

// New returns an empty engine.
func New(o Options) *Engine {
	return &Engine{retention: o.Retention, lag: o.VisibilityLag, closed: o.Unavailable, execs: map[string]*execution{}}
}

// VisibilityLag is Options.VisibilityLag: zero unless a test asks for more.
func (e *Engine) VisibilityLag() time.Duration { return e.lag }

// execution is one run of a program. Its fields from state on are guarded by Engine.mu.
type execution struct {
	program string
	input   []byte            // compacted
	sum     [sha256.Size]byte // of input
	started time.Time
	timers  []*time.Timer

	state   driver.State
	native  string
	updated time.Time
	outcome driver.Outcome
	// questions are the open questions, oldest first; answers the accepted ones so far.
	questions []driver.Question
	answers   map[string]json.RawMessage
	// message is what the program says it is doing.
	message string
}

var errClosed = fmt.Errorf("memory: %w: the engine is closed, or was opened unavailable", driver.ErrUnavailable)

// Close stops every execution; the engine answers nothing after it, and Wait returns.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	for _, x := range e.execs {
		for _, tm := range x.timers {
			tm.Stop()
		}
	}
	return nil
}

// jobOf reads t's Spec, which must be a memory job.
func jobOf(t driver.Target) (job, error) {
	j, ok := t.Spec.(job)
	if !ok || !programRE.MatchString(j.program) {
		return job{}, fmt.Errorf("memory: %w: target %q is not a memory job: map it as job: {program: NAME}, the name in lower-case letters, digits and -", driver.ErrInvalid, t.Name)
	}
	return j, nil
}

// Check warns about a program nothing runs.
func (e *Engine) Check(_ context.Context, t driver.Target) (driver.TargetInfo, error) {
	j, err := jobOf(t)
	if err != nil {
		return driver.TargetInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return driver.TargetInfo{}, errClosed
	}
	info := driver.TargetInfo{Retention: e.retention}
	if !known(j.program) {
		info.Warnings = []string{fmt.Sprintf("no program %q: its executions stay submitted (the memory engine runs %s)", j.program, programs)}
	}
	return info, nil
}

// Start starts one execution. With a key, the execution's id comes from the key; the same key
// with the same input gives the same execution, else driver.ErrKeyConflict; another caller's same
// key is another execution.
func (e *Engine) Start(_ context.Context, t driver.Target, req driver.StartRequest) (driver.Ref, error) {
	j, err := jobOf(t)
	if err != nil {
		return driver.Ref{}, err
	}
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, input); err != nil {
		return driver.Ref{}, driver.Refuse("the input is not valid JSON", fmt.Errorf("memory: %w: the input is not valid JSON: %w", driver.ErrInvalid, err))
	}
	id := j.program + "/" + driver.CallerTag(req.Caller) + "/" + driver.NewSuffix(req.Caller)
	if req.Key != "" {
		id = keyID(j, req.Key, req.Caller)
	}
	sum := sha256.Sum256(compact.Bytes())

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return driver.Ref{}, errClosed
	}
	if x, ok := e.execs[id]; ok {
		if x.sum != sum {
			return driver.Ref{}, fmt.Errorf("memory: %w: execution %s was started under this key with other input; repeat it, or use a new key", driver.ErrKeyConflict, id)
		}
		return driver.Ref{ID: id}, nil
	}
	now := time.Now()
	x := &execution{program: j.program, input: compact.Bytes(), sum: sum, started: now, updated: now,
		state: driver.Submitted, native: waiting}
	e.execs[id] = x
	if j.timeout > 0 {
		x.timers = append(x.timers, time.AfterFunc(j.timeout, func() {
			e.end(id, x, driver.Outcome{State: driver.Failed, Native: timedOut, Error: "memory.Timeout",
				Cause: fmt.Sprintf("the job ran past its timeout of %s", j.timeout)})
		}))
	}
	if known(j.program) {
		x.state, x.native = driver.Working, running
		e.run(id, x, compact.Bytes())
	}
	return driver.Ref{ID: id}, nil
}

func known(program string) bool {
	switch program {
	case Echo, Fail, Ask, AskTwo, Steps:
		return true
	}
	return false
}

// run starts a program's execution, under e.mu: it asks its questions, or schedules its end.
func (e *Engine) run(id string, x *execution, input []byte) {
	var in struct {
		Seconds     float64 `json:"seconds"`
		Text        string  `json:"text"`
		Reason      string  `json:"reason"`
		Message     string  `json:"message"`
		Version     string  `json:"version"`
		StepSeconds float64 `json:"stepSeconds"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		x.timers = append(x.timers, time.AfterFunc(0, func() {
			e.end(id, x, driver.Outcome{State: driver.Failed, Native: failed, Error: "Example.BadInput", Cause: err.Error()})
		}))
		return
	}
	switch x.program {
	case Ask:
		x.ask(driver.Question{Key: "confirm", Message: in.Message, Schema: ConfirmSchema})
		return
	case AskTwo:
		x.ask(driver.Question{Key: "first", Message: "first question: confirm?", Schema: ConfirmSchema},
			driver.Question{Key: "second", Message: "second question: confirm?", Schema: ConfirmSchema})
		return
	case Steps:
		e.steps(id, x, in.Version, time.Duration(in.StepSeconds*float64(time.Second)))
		return
	}
	out := driver.Outcome{State: driver.Failed, Native: failed, Error: "Example.Failure", Cause: in.Reason}
	if x.program == Echo {
		text, _ := json.Marshal(map[string]string{"text": in.Text}) // a string always encodes
		out = driver.Outcome{State: driver.Succeeded, Native: succeeded, Output: text}
	}
	wait := time.Duration(in.Seconds * float64(time.Second))
	x.timers = append(x.timers, time.AfterFunc(wait, func() { e.end(id, x, out) }))
}

// end ends the execution with o unless it has ended already (or the engine was closed).
func (e *Engine) end(id string, x *execution, o driver.Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !x.state.Terminal() && !e.closed {
		e.endLocked(id, x, o)
	}
}

// endLocked ends a running execution with o, under e.mu, and forgets it retention later.
func (e *Engine) endLocked(id string, x *execution, o driver.Outcome) {
	for _, tm := range x.timers {
		tm.Stop()
	}
	x.state, x.native, x.outcome, x.updated = o.State, o.Native, o, time.Now()
	if e.retention > 0 {
		time.AfterFunc(e.retention, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.execs[id] == x {
				delete(e.execs, id)
			}
		})
	}
}

// keyID is the execution id for an idempotency key: the key's hash, so that any key gives a
// valid id and the key itself is not visible in it.
func keyID(j job, key, caller string) string {
	return j.program + "/" + driver.CallerTag(caller) + "/" + driver.KeySuffix(key, caller, "k-", 32)
}

// KeyRef returns the Ref Start gives for key and caller; empty for a target that is no memory job.
func (e *Engine) KeyRef(t driver.Target, key, caller string) driver.Ref {
	j, err := jobOf(t)
	if err != nil {
		return driver.Ref{}
	}
	return driver.Ref{ID: keyID(j, key, caller)}
}

// Owns reports whether r is shaped like an execution Start returns for t and caller:
// "PROGRAM/TAG/UUID" or "PROGRAM/TAG/k-HASH".
func (e *Engine) Owns(t driver.Target, r driver.Ref, caller string) bool {
	j, err := jobOf(t)
	return err == nil && callersID(j, r.ID, caller)
}

// callersID reports whether id is one Start gives for j and caller (a prefix is not enough).
func callersID(j job, id, caller string) bool {
	rest, ok := strings.CutPrefix(id, j.program+"/"+driver.CallerTag(caller)+"/")
	return ok && driver.StartedSuffix(rest, "k-", 32)
}

// lookup finds an execution, under e.mu.
func (e *Engine) lookup(r driver.Ref) (*execution, error) {
	if e.closed {
		return nil, errClosed
	}
	x, ok := e.execs[r.ID]
	if !ok {
		return nil, fmt.Errorf("memory: %w: %s", driver.ErrNotFound, r)
	}
	return x, nil
}

// status is what Describe reads of x: all of it once ended.
func (x *execution) status() driver.Status {
	return driver.Status{State: x.state, Native: x.native, Message: x.message, Started: x.started, Updated: x.updated}
}

// Describe reads the execution's state.
func (e *Engine) Describe(_ context.Context, _ driver.Target, r driver.Ref) (driver.Status, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, err := e.lookup(r)
	if err != nil {
		return driver.Status{}, err
	}
	st := x.status()
	switch x.state {
	case driver.Submitted:
		st.Message = fmt.Sprintf("no program %q runs it", x.program)
	case driver.InputRequired:
		st.Message, st.Inputs = driver.Awaiting(x.questions), slices.Clone(x.questions)
	}
	return st, nil
}

// Outcome reads how the execution ended.
func (e *Engine) Outcome(_ context.Context, _ driver.Target, r driver.Ref) (driver.Outcome, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, err := e.lookup(r)
	if err != nil {
		return driver.Outcome{}, err
	}
	if !x.state.Terminal() {
		return driver.Outcome{}, fmt.Errorf("memory: %w: %s is %s", driver.ErrNotEnded, r, x.native)
	}
	o := x.outcome
	o.Status = x.status()
	return o, nil
}

// Cancel ends a running or waiting execution CANCELLED, with reason as its cause.
func (e *Engine) Cancel(_ context.Context, _ driver.Target, r driver.Ref, reason string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, err := e.lookup(r)
	if err != nil {
		return err
	}
	if x.state.Terminal() {
		return fmt.Errorf("memory: %w: %s ended %s", driver.ErrEnded, r, x.native)
	}
	e.endLocked(r.ID, x, driver.Outcome{State: driver.Cancelled, Native: cancelled, Cause: reason})
	return nil
}
