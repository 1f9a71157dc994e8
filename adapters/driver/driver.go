// Package driver is the contract a taskgate driver implements, as gocloud.dev keeps
// blob/driver: the narrow Conn over one configured engine and the optional capabilities a Conn
// may add (Runner, Sweeper, EndSweeper, OutcomeCoster, VisibilityLagger, EventSource, Sampler,
// Accounted), the Driver that reads its part of mapping files and opens Conns, and the values
// and errors a driver returns or receives. It imports nothing of taskgate's: package adapters,
// above it, keeps the portable Engine that taskgate uses over a Conn, the hooks and the registry
// of drivers (adapters.Register), and re-exports these values for the code that uses engines.
//
// The contract is stateless by design: a Ref is the engine's own identifier and nothing else, and
// every call is answered by asking the engine. A driver may cache what can never change (the
// outcome of an ended execution) but never what can.
package driver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Target is what one tool starts, as its engine's driver decoded it from the tool's mapping.
type Target struct {
	// Name names the target in messages, metrics and cache keys, written by the driver (a workflow
	// type, a state machine ARN). Targets of one engine that start different things have different
	// Names.
	Name string
	// Spec is everything else the driver decoded (where to start, versions, timeouts), read only by
	// its own engine: an engine refuses a Target whose Spec is not one of its own with ErrInvalid.
	Spec any
}

// StartRequest is one execution to start.
type StartRequest struct {
	// Input is the engine input, a JSON value.
	Input json.RawMessage
	// Key is an idempotency key. Empty: a fresh execution every time. Set: the same key with the
	// same input yields the same execution; with other input, an error wrapping ErrKeyConflict.
	Key string
	// Caller identifies who started it, when callers are authenticated. Adapters record it where the
	// engine can later filter on it (a memo or search attribute, a name prefix), and the same Key
	// from another Caller never yields this execution. Empty when unknown.
	Caller string
	// Trace is the caller's trace context as W3C Trace Context fields ("traceparent", and
	// "tracestate" and "baggage" when set); empty when there is none. Adapters pass it to the
	// engine in the engine's own format where a start takes one, so that the execution's traces
	// join the caller's.
	Trace map[string]string
}

// Ref is one execution, named by the engine's own id in the encoding its driver chose (the text
// its FormatRef writes, or a form of it that no ParseRef accepts, for Refs that only the engine
// itself hands out, like KeyRef's).
type Ref struct {
	ID string
}

func (r Ref) String() string { return r.ID }

// ExecKey names an execution of a target, for maps and caches kept per execution. It shares the
// bytes of the target's name and of the Ref's id, where a key joined into one string would copy
// them once per execution kept, in each place that keeps one.
type ExecKey struct {
	Target, ID string
}

// KeyOf is the key of r, an execution of t.
func KeyOf(t Target, r Ref) ExecKey { return ExecKey{Target: t.Name, ID: r.ID} }

// State is an engine state reduced to what every MCP dialect can express.
type State int

const (
	// Submitted: accepted by the engine, not yet picked up by a worker (or not yet visible).
	Submitted State = iota + 1
	// Working: running.
	Working
	// Succeeded: ended with an output.
	Succeeded
	// Failed: ended with an error (failed, timed out).
	Failed
	// Cancelled: stopped on request (cancelled, terminated, aborted).
	Cancelled
)

// InputRequired: running, and waiting on the answers to Status.Inputs. Not Terminal. Its value
// follows Cancelled so that the others keep theirs.
const InputRequired State = 6

var stateNames = map[State]string{
	Submitted: "submitted", Working: "working",
	Succeeded: "succeeded", Failed: "failed", Cancelled: "cancelled",
	InputRequired: "input_required",
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return "unknown"
}

// Terminal reports whether no further change can happen.
func (s State) Terminal() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Status is one reading of an execution.
type Status struct {
	State State
	// Native is the engine's own state name, e.g. "RUNNING", "TIMED_OUT", "CONTINUED_AS_NEW".
	Native string
	// Message is a short human-readable description of the state, when the engine has one.
	Message string
	// Started is when the execution started; Updated when its state last changed as far as the
	// engine tells (the close time once ended, else the start time or latest known event).
	Started time.Time
	Updated time.Time
	// Inputs are the questions the execution waits on, oldest first, when State is InputRequired.
	Inputs []Question
	// ReadAt is when the engine was read for this status, and NextReadAt when it will be read
	// again for the next one, when a layer that reuses readings (adapters/coalesce) answered; both
	// zero otherwise (read just now, and at any time). A running status is true as of ReadAt.
	ReadAt, NextReadAt time.Time
}

// Question is one question an execution asks and waits on.
type Question struct {
	// Key is stable within the execution and unique among its open questions.
	Key     string
	Message string
	// Schema is the JSON Schema (type object) of the answer.
	Schema json.RawMessage
}

// The actions of an Answer, in the words of MCP elicitation results.
const (
	// ActionAccept: the answer is Content.
	ActionAccept = "accept"
	// ActionDecline: the person said no.
	ActionDecline = "decline"
	// ActionCancel: the person dismissed the question without choosing.
	ActionCancel = "cancel"
)

// The errors a workflow that asks through taskgate ends with, by convention, when a question is
// declined or dismissed: the Step Functions adapter fails the waiting state with them, and the
// examples' workflows fail with them.
const (
	DeclinedError  = "taskgate.Declined"
	DismissedError = "taskgate.Dismissed"
)

// Answer answers one Question.
type Answer struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string
	// Content is the answer when accepted, a JSON object (the caller has validated it against the
	// question's Schema); ignored otherwise.
	Content json.RawMessage
}

// Awaiting returns the status message of an execution that waits on qs and says nothing else
// itself.
func Awaiting(qs []Question) string {
	if len(qs) == 1 {
		return fmt.Sprintf("waiting for an answer to %q", qs[0].Key)
	}
	return fmt.Sprintf("waiting for answers to %d questions", len(qs))
}

// Check says whether an engine can deliver the answer at all: a known action and, when accepted,
// content that is a JSON object. Its error wraps ErrInvalid.
func (a Answer) Check() error {
	switch a.Action {
	case ActionAccept:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(a.Content, &obj); err != nil || obj == nil {
			return refused(`an accepted answer's content must be a JSON object, like {"confirm": true}`)
		}
	case ActionDecline, ActionCancel:
	default:
		return refused(fmt.Sprintf("answer action %q: want accept, decline or cancel", a.Action))
	}
	return nil
}

// AnswerLimit is the most an engine takes of one answer, in bytes of what the driver sends it (its
// own encoding of the answer). Engine names the engine in messages. A driver checks it before any
// engine call: an engine that took a larger answer could refuse it only after it was delivered,
// or not at all (a Temporal workflow whose worker cannot report taking it waits for good).
type AnswerLimit struct {
	Engine string
	Bytes  int
}

// Check refuses an answer of size bytes over the limit, with an error that wraps ErrInvalid and
// says the limit: to the caller (a Refusal) without naming the engine.
func (l AnswerLimit) Check(size int) error {
	if size <= l.Bytes {
		return nil
	}
	limit := fmt.Sprintf("at most %s (%d bytes)", byteSize(l.Bytes), l.Bytes)
	return Refuse(fmt.Sprintf("the answer is %s; this tool's engine takes answers of %s", byteSize(size), limit),
		fmt.Errorf("%w: the answer is %s; %s takes answers of %s", ErrInvalid, byteSize(size), l.Engine, limit))
}

// byteSize writes n bytes for people: "256 KiB", "3.2 MiB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Outcome is how an ended execution ended.
type Outcome struct {
	// State is Succeeded, Failed or Cancelled.
	State State
	// Native is the engine's final state name.
	Native string
	// Output is the execution's JSON output when it succeeded (JSON null when it had none).
	Output json.RawMessage
	// Error is the engine's error name or failure type (e.g. "States.Timeout", "Example.Failure").
	Error string
	// Cause is the failure message or cause.
	Cause string
	// Status is the ended execution's Status, as Describe reads it: a layer that reads the
	// outcome first (adapters/coalesce) answers Describe from it.
	Status Status
}

// Listed is one execution of a listing.
type Listed struct {
	Ref    Ref
	Status Status
}

// TargetInfo is what an engine tells about a target before any execution.
type TargetInfo struct {
	// SyncOnly, when set, says why executions of this target cannot be described once started, in
	// the engine's own words: serve it only through adapters.Engine.Run (the Conn is a Runner).
	SyncOnly string
	// Warnings are worth printing at startup but do not stop taskgate (e.g. no worker polls the
	// task queue yet).
	Warnings []string
	// Retention is how long the engine keeps an ended execution readable; zero when unknown or
	// unlimited.
	Retention time.Duration
	// ReadCalls is how many engine calls a read of a running execution of the target makes (Step
	// Functions: two when it reads the history too), and OutcomeCalls a read of an ended one's
	// outcome (Temporal: two, its status and its close event; fewer for an OutcomeCoster's
	// executions it says); zero means one.
	ReadCalls, OutcomeCalls int
}

// Conn is what a driver implements: one configured connection to a workflow engine, whose every
// method asks the engine (or nothing, for KeyRef and Owns). An adapters.Engine adds to it what
// every driver needs once: hooks around each call, the reuse of readings, waiting, and running. A
// Conn may also implement the optional capabilities Runner, Sweeper (and EndSweeper),
// OutcomeCoster, VisibilityLagger (every driver does), EventSource, Sampler and Accounted. All
// methods are safe for concurrent use.
type Conn interface {
	// Check verifies that a target exists and can be served, before any tool is offered.
	Check(ctx context.Context, t Target) (TargetInfo, error)
	// Start starts one execution. On an engine whose reads are eventually consistent (Step
	// Functions), Describe, Outcome and Cancel may answer ErrNotFound for a short while after it
	// returns: callers read that as not yet visible (Submitted). adapters.Engine.Wait waits through it.
	Start(ctx context.Context, t Target, req StartRequest) (Ref, error)
	// KeyRef is a Ref of the execution that Start gives for an idempotency key and caller,
	// computed without an engine call: it may be another form of the Ref that Start returns (one
	// that names the latest of its kind). It lets a client's own key be resolved with no table.
	KeyRef(t Target, key, caller string) Ref
	// Owns reports, without any engine call, whether r could be an execution of t that caller
	// started. It is the check that keeps untrusted references away from executions taskgate was
	// not asked to serve, and from other callers' executions: adapters write CallerTag(caller)
	// into the ids of the executions they start.
	Owns(t Target, r Ref, caller string) bool
	// Describe reads the current state: one engine round trip, or two where a running
	// execution's questions and progress are kept apart from its status (Step Functions reads
	// them from its history).
	Describe(ctx context.Context, t Target, r Ref) (Status, error)
	// Outcome reads how an ended execution ended. ErrNotEnded while it runs.
	Outcome(ctx context.Context, t Target, r Ref) (Outcome, error)
	// List reads one page of the executions of o.Target that o.Caller started, newest first: at
	// most o.Limit, and the page that follows ("" after the last). A page is what an earlier List
	// gave; a page it did not give is ErrInvalid. The statuses are the listing's, which may be
	// coarser than Describe's (a listing does not tell Submitted from Working).
	List(ctx context.Context, o ListOptions) ([]Listed, string, error)
	// Cancel asks the engine to stop the execution; reason says who and why. ErrEnded when it had
	// already ended.
	Cancel(ctx context.Context, t Target, r Ref, reason string) error
	// Answer delivers an answer to the open question key. ErrNotFound when no such question is open
	// (already answered, or never asked); ErrInvalid when the engine refuses the content.
	Answer(ctx context.Context, t Target, r Ref, key string, a Answer) error
	// Close releases connections.
	Close() error
}

// Runner is a Conn that has targets whose executions cannot be described once started
// (TargetInfo.SyncOnly: Step Functions' Express state machines), and runs them in one call that
// answers when the execution ends. Engine.Run calls it only for those targets; it runs the
// others as Start and Wait.
type Runner interface {
	// Run starts an execution of a SyncOnly target and returns its outcome once it ended.
	Run(ctx context.Context, t Target, req StartRequest) (Ref, Outcome, error)
}

// Sweeper is a Conn that reads the states of many executions in one engine call, from the
// engine's listing (Step Functions' ListExecutions, Temporal's visibility, an SQL view of
// invocations): a replica refreshes its running tasks a page at a time instead of one read per
// task. Where the engine lists the executions of many targets in one call (a visibility query over
// several workflow types, an SQL query over several handlers), one sweep reads them all: the
// targets of one SweepGroup. It is optional; an engine without it is read per execution.
type Sweeper interface {
	// SweepGroup names the targets whose executions one Sweep lists together: targets of one group
	// are swept in one call, those of different groups apart (Step Functions lists one state
	// machine per call: a group each). No engine call.
	SweepGroup(t Target) string
	// Sweep makes one engine call that reads one page (o.Page) of the listing of o.Refs
	// (executions of o.Targets, targets of one group, that Start returned): those of the refs that
	// the page shows, with the listing's statuses, and the page that follows ("" after the last; a
	// page is what an earlier Sweep of the same targets and refs gave, and any other is
	// ErrInvalid). It ignores o.Since. A page is the
	// driver's own unit: SweepIDs refs of an engine that is queried by id, a page of running
	// executions of one that lists them. A listing is eventually consistent and coarser than
	// Describe: a status may lag the execution by seconds, and a ref that no page shows may have
	// ended, or not be listed yet. So an end that a sweep shows, or a running execution that it no
	// longer shows, is confirmed by reading its Outcome before anyone is told.
	Sweep(ctx context.Context, o SweepOptions) ([]Listed, string, error)
}

// EndSweeper is a Sweeper whose engine also lists the executions that ended since a time
// (Temporal's visibility by close time): a replica that saw its tasks running then reads a page
// of ends per round, whatever the number of running executions. Its Sweep of at most SweepIDs
// refs looks them up by id, whatever the number running: the executions followed since the last
// round are listed so, beside the ends. It is optional.
type EndSweeper interface {
	Sweeper
	// SweepEnded makes one engine call that reads one page (o.Page) of the executions of
	// o.Targets (targets of one group) that ended after o.Since: those of o.Refs that the page
	// shows, with their ended statuses, and the page that follows (as Sweep's pages). An end may
	// show late, as in Sweep: callers ask again from a little before their last sweep, and a ref
	// that no page shows was still running as of the listing, as far as the listing knows.
	SweepEnded(ctx context.Context, o SweepOptions) ([]Listed, string, error)
}

// OutcomeCoster is a Conn whose outcome read of some executions costs fewer engine calls than its
// target's TargetInfo.OutcomeCalls: Temporal reads only the close event of a run that one of its
// listings lately showed closed, since the listing told the rest. It is optional.
type OutcomeCoster interface {
	// OutcomeCalls says how many engine calls Outcome of r would make now; 0 when as many as the
	// target's TargetInfo says. No engine call.
	OutcomeCalls(t Target, r Ref) int
}

// VisibilityLagger is a Conn that declares its engine's visibility lag: how long after Start
// returned a Describe of the execution may still answer ErrNotFound, a start the engine does not
// show yet (Step Functions' reads are eventually consistent; Temporal's describe of a workflow
// just started is not). Every driver declares it (adapters/enginetest fails one that does not);
// adapters.VisibilityLagOf reads it, for adapters.Engine.Wait, the Readings and the task service
// alike. A Conn that declares none is given adapters.DefaultVisibilityLag.
type VisibilityLagger interface {
	// VisibilityLag is how long after a start "not found" may be that start, not yet visible;
	// zero when a start is visible as soon as Start returns. No engine call.
	VisibilityLag() time.Duration
}

// EventSource is a Conn whose engine tells of its executions' changes as they happen, through an
// event source the deployment set up (Step Functions' status change events, through EventBridge,
// SNS and a queue of the replica's own). Delivery is best effort and may come late or twice: what
// a notice tells is a listing's word, which a read confirms before anyone is told, and sweeps go
// on catching what it drops. It is optional: a Conn whose block names no source answers
// ErrUnsupported.
type EventSource interface {
	// Notices receives the engine's notices until ctx ends, calling heard after each receive with
	// when it began and the executions it told of (their Ref as Start gives it, and the status the
	// notice says): an execution of the block's targets that it does not tell of had not changed
	// as of then, as far as the source knows. It returns ctx's error once ctx ends, and another
	// error when the source cannot be read and retrying will not mend it.
	Notices(ctx context.Context, heard func(at time.Time, changed []Listed)) error
}

// Sampler is a Conn that reads the inputs of the most recent executions of a target, whoever
// started them: for inferring a tool's inputSchema from what really ran (taskgate discover
// --infer) and for telling when what runs no longer fits it (drift checks). It is optional.
type Sampler interface {
	// Samples reads the inputs of at most n of the latest executions of t, newest first, each a
	// JSON value. It reads, never changes, and makes as few engine calls as the engine allows (a
	// listing, then one read per execution where the listing does not carry the input).
	Samples(ctx context.Context, t Target, n int) ([]json.RawMessage, error)
}

// Accounted is a Conn that names the quota its reads spend: an AWS account and region, a
// namespace of one Temporal frontend. Engine blocks whose engines name the same account share one
// read budget, since the quota they protect is the account's. It is optional; an engine without
// it has a budget of its own.
type Accounted interface {
	// Account names the account, the same text for every engine that spends the same quota. It
	// makes at most one engine call, at start (Step Functions asks STS which account its
	// credentials, its role's when it assumes one, are of), and never one for a read.
	Account(ctx context.Context) (string, error)
}

// Aser is a Conn that hands out the engine SDK clients it holds, for what the contract does not
// do (running a worker on the same connection, making a state machine in a test), as gocloud.dev's
// As does: As sets target, a pointer to one of the types the driver's doc lists, and reports
// whether it did. It is optional, and code that uses it is tied to that driver.
type Aser interface {
	As(target any) bool
}

// As calls c's As (Aser); false when c has none.
func As(c Conn, target any) bool {
	a, ok := c.(Aser)
	return ok && a.As(target)
}

// SweepIDs is how many executions one page of a sweep by id names (a visibility query, an SQL
// IN list).
const SweepIDs = 100

// SweepChunk returns the refs that a sweep by id reads on page (its offset into refs, "" for 0) and
// the page after it ("" after the last).
func SweepChunk(refs []Ref, page string) (chunk []Ref, next string, err error) {
	at := 0
	if page != "" {
		if at, err = strconv.Atoi(page); err != nil || at <= 0 || at >= len(refs) || strconv.Itoa(at) != page {
			return nil, "", fmt.Errorf("%w: %q is not a page of this sweep", ErrInvalid, page)
		}
	}
	end := min(at+SweepIDs, len(refs))
	if end < len(refs) {
		next = strconv.Itoa(end)
	}
	return refs[at:end], next, nil
}

// ScopedKey puts an idempotency key in the space of its caller: adapters derive their execution ids
// from it, so that two callers' same key names two executions and neither learns of the other's.
func ScopedKey(key, caller string) string {
	if caller == "" {
		return key
	}
	return caller + "\x00" + key
}

// CallerTag returns the short, id-safe form of a caller (16 characters of letters, digits, - and _)
// that adapters write into the ids of the executions they start, so that whose an execution is
// can be told from its id alone: no engine call, and nothing a caller could learn from timing.
func CallerTag(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// StartedSuffix reports whether s is what adapters write after a caller's tag in the id of an
// execution they start: a fresh UUID in its canonical lowercase form, or keyed and hexLen
// lowercase hex digits (a hash of the idempotency key). Owns checks it whole: a mere prefix is not
// enough, since anyone who may start executions on the engine could name one after a caller's tag.
func StartedSuffix(s, keyed string, hexLen int) bool {
	if h, ok := strings.CutPrefix(s, keyed); ok {
		return len(h) == hexLen && strings.Trim(h, "0123456789abcdef") == ""
	}
	return canonicalUUID(s)
}

// canonicalUUID reports whether s is a UUID in its canonical lowercase form.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Errors every driver wraps (with %w) so that callers can tell cases apart with errors.Is.
var (
	// ErrNotFound: no such execution, or past the engine's retention.
	ErrNotFound = errors.New("execution not found")
	// ErrKeyConflict: an idempotency key already names an execution with other input.
	ErrKeyConflict = errors.New("idempotency key already used with other input")
	// ErrNotEnded: the execution is still running.
	ErrNotEnded = errors.New("execution has not ended")
	// ErrEnded: the execution had already ended.
	ErrEnded = errors.New("execution has already ended")
	// ErrInvalid: the request breaks an engine limit (input size, name length); nothing was started.
	ErrInvalid = errors.New("invalid request")
	// ErrUnavailable: the engine is unreachable or throttling; retry later, nothing changed.
	ErrUnavailable = errors.New("engine unavailable")
	// ErrThrottled: the engine refused the call because its caller calls faster than the
	// engine's quota allows (Step Functions' ThrottlingException, Temporal's ResourceExhausted), or
	// a read budget in front of the engine refused it before it was made (a *Throttle). Every
	// ErrThrottled error is also ErrUnavailable: nothing changed, retry later.
	ErrThrottled error = throttled{}
	// ErrUnsupported: the engine cannot do what was asked (Sweep, Samples, Run, Notices): its
	// Conn does not implement the optional interface, or its block did not set it up. Nothing was
	// called.
	ErrUnsupported = errors.New("not supported by this engine")
)

// Refusal is an ErrInvalid error with the reason in words for the caller: a client knows a tool
// only by its name, so Reason names nothing of the engine's (its kind, workflow types, task
// queues, ARNs, addresses), while Err, the engine's whole error, goes to the operator's logs.
type Refusal struct {
	Reason string
	Err    error
}

// Refuse returns err (which wraps ErrInvalid), with reason for the caller.
func Refuse(reason string, err error) error { return &Refusal{Reason: reason, Err: err} }

func (r *Refusal) Error() string { return r.Err.Error() }

func (r *Refusal) Unwrap() error { return r.Err }

// refused is an ErrInvalid error whose words are the caller's as they are.
func refused(reason string) error { return Refuse(reason, fmt.Errorf("%w: %s", ErrInvalid, reason)) }

// ReasonOf says why err refused a request, for the caller: a Refusal's reason, else otherwise.
func ReasonOf(err error, otherwise string) string {
	var r *Refusal
	if errors.As(err, &r) && r.Reason != "" {
		return r.Reason
	}
	return otherwise
}

type throttled struct{}

func (throttled) Error() string { return "engine throttling" }

func (throttled) Is(target error) bool { return target == ErrUnavailable }

// Throttle is the ErrThrottled error of a call that says when to call again: the engine's own
// throttling error (Cause), or, when Cause is nil, a read budget's refusal to make the call.
type Throttle struct {
	RetryAfter time.Duration
	Cause      error
}

func (t *Throttle) Error() string {
	after := t.RetryAfter.Round(time.Millisecond)
	if t.Cause == nil {
		return fmt.Sprintf("%v: taskgate's read budget for the engine is spent for now; retry in %s", ErrThrottled, after)
	}
	return fmt.Sprintf("%v; retry in %s", t.Cause, after)
}

func (t *Throttle) Is(target error) bool { return target == ErrThrottled || target == ErrUnavailable }

func (t *Throttle) Unwrap() error { return t.Cause }

// RetryAfter is how long a call refused for now waits before it is made again: what its
// *Throttle says, else a second.
func RetryAfter(err error) time.Duration {
	var th *Throttle
	if errors.As(err, &th) && th.RetryAfter > 0 {
		return th.RetryAfter
	}
	return time.Second
}

// Sleep waits d, or until ctx ends (its error then): for the waits of drivers, hooks and adapters.Engine
// between reads.
func Sleep(ctx context.Context, d time.Duration) error { return SleepUntil(ctx, d, nil) }

// SleepUntil waits d, or until wake is closed (a nil wake never is), or until ctx ends (its error
// then): for the waits that a change of an execution cuts short (Notifier).
func SleepUntil(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
		return nil
	case <-t.C:
		return nil
	}
}
