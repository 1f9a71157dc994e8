// Package budget is a read budget for an adapters.Engine (an adapters.Hook), so that taskgate never
// reads an engine faster than it is given, whatever its clients do:
//
//   - every read of an execution (Describe, Outcome, List) spends tokens of a bucket that refills
//     at the budget's rate, up to its burst: as many as the read makes engine calls
//     (adapters.TargetInfo.ReadCalls, OutcomeCalls). A read of an execution with no token left is
//     refused before it reaches the engine, and given the next tokens after every read refused
//     before it: its *adapters.Throttle says when they will be there, and the read of that
//     execution is made when it comes back then. So reads refused together come back spread out,
//     in the order they were refused. An outcome is never refused: it goes ahead of them, and
//     waits only for its tokens (it is read once per task, and it ends the task's reads). Reads
//     are made only once their tokens are there, so that no span of time holds more reads than
//     its refill and one burst.
//   - a read the engine throttles (adapters.ErrThrottled) cuts the rate to 70%, at most once a
//     second (multiplicative decrease, by the factor of the AWS SDKs' adaptive retry mode); every
//     second without one gives back a tenth of the budget (additive increase), never above it,
//     never below a tenth of it.
//   - for endsWindow after a cut, outcomes keep a share of the budget of their own, which the cuts
//     do not lower: as many calls a second as outcomes asked for lately (and a quarter more), at
//     least a tenth of the budget and at most nine tenths; the other reads share the rest, cut as
//     above. An end is read once and stops its task's reads, and its clients wait for it: while
//     the engine refuses reads, the ends seen keep being read at the pace they come, and the
//     reads together still spend no more than the budget.
//   - the reads of running tasks carry their polling pace (adapters/pace): Stretch says by how
//     much their readings must last longer than their curves for what they ask of the engine to
//     fit the rate, for adapters/coalesce to reuse them that long, and for clients to be told.
//
// It keeps, per running execution read lately, its polling interval, and nothing else.
package budget

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
)

const (
	// cutTo is what a throttle leaves of the rate.
	cutTo = 0.7
	// plannedShare is the share of the rate that the running tasks' readings are planned to
	// spend: the rest absorbs outcomes, starts of new tasks and the jitter of clients.
	plannedShare = 0.9
	// cutEvery is the least time between two cuts of the rate.
	cutEvery = time.Second
	// forgetAfter is how long a running execution's interval counts after its last read, beyond
	// twice its stretched interval.
	forgetAfter = 10 * time.Second
	// endsWindow is how long after a cut outcomes keep a share of their own, and over about how
	// long their pace is measured.
	endsWindow = 10 * time.Second
	// endsHeadroom is how much more than their recent pace outcomes are given while shared.
	endsHeadroom = 1.25
)

// Budget is one engine's read budget: its Hook spends it.
type Budget struct {
	budget adapters.Budget

	mu   sync.Mutex
	rate float64 // tokens per second now, between budget/10 and budget
	// tokens are the bucket that reads take their turns from (a read refused for want of them
	// takes them ahead: its turn), and made the bucket that reads are made from, when they are
	// made, so that a read that comes late for its turn is not made with another's tokens. Both
	// refill at the rate, up to the burst.
	tokens, made float64
	last         time.Time // when tokens were last refilled
	cut          time.Time // when the rate was last cut
	// slots are, by execution, when the tokens of a read refused for want of them will be there
	// (they are taken already).
	slots map[adapters.ExecKey]time.Time
	// want is, by execution, the read rate its polling curve asks for (1/interval) and when it
	// was last read; wanted is their sum.
	want   map[adapters.ExecKey]want
	wanted float64
	pruned time.Time

	// ends are the tokens of the outcomes' own share while it holds (see endsRate); asked is the
	// outcome calls a second asked for lately, decaying over endsWindow, as of askedAt.
	ends, asked float64
	askedAt     time.Time

	spent, refusals, throttles atomic.Uint64
	// lastRefusal is when a read was last refused for want of tokens (unix nanoseconds).
	lastRefusal atomic.Int64

	// sweeps is the budget that sweeps and samples spend: its own, or this one.
	sweeps *Budget
}

type want struct {
	perSecond float64
	seen      time.Time
}

// New returns a budget of reads, which must not be unlimited. Sweeps and samples spend a bucket
// of their own, with the same throttling, when sweeps is not unlimited (an engine that throttles
// its listing apart from its reads: adapters.DriverInfo.SweepBudget), else the reads'.
func New(reads, sweeps adapters.Budget) *Budget {
	e := newBudget(reads)
	e.sweeps = e
	if !sweeps.Unlimited() {
		e.sweeps = newBudget(sweeps)
	}
	return e
}

func newBudget(b adapters.Budget) *Budget {
	now := time.Now()
	return &Budget{budget: b, rate: b.ReadsPerSecond, tokens: float64(b.Burst), made: float64(b.Burst), last: now,
		slots: map[adapters.ExecKey]time.Time{}, want: map[adapters.ExecKey]want{}, pruned: now}
}

// Stats is what a budget did since New: its reads' bucket (a sweep bucket of its own is left
// out).
type Stats struct {
	// Budget is the configured budget; Rate the reads per second allowed now (less after the
	// engine throttled).
	Budget adapters.Budget
	Rate   float64
	// Spent are the tokens spent (engine calls made by reads); Refused the reads refused for
	// want of a token; Throttled the reads the engine throttled.
	Spent, Refused, Throttled uint64
	// Stretch is the load (see Budget.Stretch); Running the running executions it counts.
	Stretch float64
	Running int
}

// Stats reads the counters and the present rate and load.
func (e *Budget) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refill(time.Now())
	return Stats{Budget: e.budget, Rate: e.rate, Spent: e.spent.Load(), Refused: e.refusals.Load(), Throttled: e.throttles.Load(),
		Stretch: e.stretchLocked(), Running: len(e.want)}
}

// ListsApart reports whether sweeps and samples spend a bucket of their own.
func (e *Budget) ListsApart() bool { return e.sweeps != e }

// Stretch is by how much the running executions read lately must keep their readings longer than
// their polling curves say, for the reads they ask for to fit the rate: at least 1.
func (e *Budget) Stretch() float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stretchLocked()
}

func (e *Budget) stretchLocked() float64 {
	now := time.Now()
	if now.Sub(e.pruned) >= time.Second {
		e.prune(now)
	}
	return max(1, e.wanted/(e.rate*plannedShare))
}

// prune forgets the executions not read for twice their stretched interval and more, and the
// slots their reads did not come back for.
func (e *Budget) prune(now time.Time) {
	e.pruned = now
	for k, slot := range e.slots {
		if now.Sub(slot) > forgetAfter {
			delete(e.slots, k)
		}
	}
	stretch := max(1, e.wanted/(e.rate*plannedShare))
	e.wanted = 0
	for k, w := range e.want {
		if now.Sub(w.seen) > time.Duration(2*stretch/w.perSecond*float64(time.Second))+forgetAfter {
			delete(e.want, k)
			continue
		}
		e.wanted += w.perSecond
	}
}

// refill adds the tokens of the time since the last refill and, a second after the last cut,
// gives back a tenth of the budget per second, up to what the outcomes' share leaves.
func (e *Budget) refill(now time.Time) {
	dt := now.Sub(e.last).Seconds()
	if dt <= 0 {
		return
	}
	if now.Sub(e.cut) >= cutEvery {
		e.rate = min(e.ceiling(now), e.rate+e.budget.ReadsPerSecond/10*dt)
	}
	e.tokens = min(float64(e.budget.Burst), e.tokens+e.rate*dt)
	e.made = min(float64(e.budget.Burst), e.made+e.rate*dt)
	if e.shared(now) {
		e.ends = min(endsBurst, e.ends+e.endsRate(now)*dt)
	}
	e.last = now
}

// shared reports whether outcomes have a share of their own at now: the engine throttled lately.
func (e *Budget) shared(now time.Time) bool { return !e.cut.IsZero() && now.Sub(e.cut) < endsWindow }

// endsRate is the outcomes' share while it holds: their recent pace and a quarter, at least a
// tenth of the budget, at most nine tenths.
func (e *Budget) endsRate(now time.Time) float64 {
	b := e.budget.ReadsPerSecond
	return min(max(e.askedBy(now)*endsHeadroom, b/10), b*9/10)
}

// endsBurst is how many tokens the outcomes' share holds at most: one call. What it holds is spent
// beside the main bucket's burst, so any more would let a window after a cut spend more than the
// budget; an outcome of more calls waits for the rest.
const endsBurst = 1

// ceiling is the most the other reads' rate may be at now: the budget, less the outcomes' share
// while it holds.
func (e *Budget) ceiling(now time.Time) float64 {
	if e.shared(now) {
		return max(e.budget.ReadsPerSecond/10, e.budget.ReadsPerSecond-e.endsRate(now))
	}
	return e.budget.ReadsPerSecond
}

// askedBy is the outcome calls a second asked for lately, as of now.
func (e *Budget) askedBy(now time.Time) float64 {
	return e.asked * math.Exp(-now.Sub(e.askedAt).Seconds()/endsWindow.Seconds())
}

// ask counts an outcome read of n calls in the outcomes' pace.
func (e *Budget) ask(now time.Time, n int) {
	e.asked = e.askedBy(now) + float64(n)/endsWindow.Seconds()
	e.askedAt = now
}

// holds reports whether the bucket b (tokens or made) holds n tokens: or, for a read that makes
// more calls than the burst, as many as it can hold (the rest is paid from the next refills).
func (e *Budget) holds(b float64, n int) bool { return b >= float64(min(n, e.budget.Burst)) }

// until is how long until the bucket b holds n tokens (see holds).
func (e *Budget) until(b float64, n int) time.Duration {
	return time.Duration(max(0, float64(min(n, e.budget.Burst))-b) / e.rate * float64(time.Second))
}

// take takes a turn of n tokens for a read of the execution k (zero for other reads), and the read's
// n tokens when it is made now. A read that finds too few is refused with how long to wait: an
// execution's read is given its turn then (a slot), another read is not; a first read (an
// outcome, a sweep's listing) goes ahead of the turns given (they wait its tokens' time more),
// and waits only for its tokens to be made (makeRead).
func (e *Budget) take(k adapters.ExecKey, n int, first bool) (ok bool, wait time.Duration, ahead bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	e.refill(now)
	if slot, booked := e.slots[k]; booked {
		switch {
		case now.Before(slot):
			return false, slot.Sub(now), false
		case !e.holds(e.made, n):
			return false, e.until(e.made, n), false
		}
		delete(e.slots, k)
		e.made -= float64(n)
		e.spent.Add(uint64(n))
		return true, 0, false
	}
	if e.holds(e.tokens, n) && e.holds(e.made, n) {
		e.tokens -= float64(n)
		e.made -= float64(n)
		e.spent.Add(uint64(n))
		return true, 0, false
	}
	if k == (adapters.ExecKey{}) && !first {
		e.refused(now)
		return false, max(e.until(e.tokens, n), e.until(e.made, n)), false
	}
	e.tokens -= float64(n)
	if first {
		return true, 0, true
	}
	wait = max(e.until(e.tokens, 0), e.until(e.made, n))
	e.slots[k] = now.Add(wait)
	e.refused(now)
	return false, wait, false
}

// refused counts a read refused at now for want of tokens.
func (e *Budget) refused(now time.Time) {
	e.refusals.Add(1)
	e.lastRefusal.Store(now.UnixNano())
}

// contendedFor is how long after a refusal the budget counts as contended: long enough that a
// reader held to its share does not take the whole budget again the moment the others are served.
const contendedFor = 5 * time.Second

// Contended reports whether the budget refused a read for want of tokens lately: whoever reads
// more than a fair share of it then takes reads from the others.
func (e *Budget) Contended() bool {
	return time.Since(time.Unix(0, e.lastRefusal.Load())) < contendedFor
}

// Release gives back the turn that a refused read of the execution k was given, n tokens, for
// the next turns: the read will not come back for it (its caller is over its share).
func (e *Budget) Release(k adapters.ExecKey, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, booked := e.slots[k]; booked {
		delete(e.slots, k)
		e.tokens = min(float64(e.budget.Burst), e.tokens+float64(n))
	}
}

// Rate is the reads a second the budget allows now (less than its budget after the engine
// throttled).
func (e *Budget) Rate() float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rate
}

// makeRead takes n tokens of the made bucket for a read that went ahead of the turns (an
// outcome, a sweep's listing) and waits until they are there (see holds). It takes them as it
// comes, so that the reads that went ahead are made in their order and before any turn that comes
// due while they wait (it finds the bucket short). A read given up gives its tokens back.
func (e *Budget) makeRead(ctx context.Context, n int) error {
	e.mu.Lock()
	e.refill(time.Now())
	wait := e.until(e.made, n)
	e.made -= float64(n)
	e.mu.Unlock()
	if err := driver.Sleep(ctx, wait); err != nil {
		e.mu.Lock()
		e.made += float64(n)
		e.mu.Unlock()
		return err
	}
	e.spent.Add(uint64(n))
	return nil
}

// spend waits until the bucket holds n tokens and spends them: for reads that no client waits on
// (a drift check's samples), which take no turn ahead of anyone and count no refusal.
func (e *Budget) spend(ctx context.Context, n int) error {
	for {
		e.mu.Lock()
		e.refill(time.Now())
		if e.holds(e.tokens, n) && e.holds(e.made, n) {
			e.tokens -= float64(n)
			e.made -= float64(n)
			e.spent.Add(uint64(n))
			e.mu.Unlock()
			return nil
		}
		wait := max(e.until(e.tokens, n), e.until(e.made, n))
		e.mu.Unlock()
		if err := driver.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// throttled cuts the rate after the engine throttled a read, at most once a second, and says
// when to retry.
func (e *Budget) throttled(err error) error {
	e.throttles.Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	e.refill(now)
	if now.Sub(e.cut) >= cutEvery {
		if !e.shared(now) {
			e.ends = 0
		}
		e.cut = now
		e.rate = max(e.budget.ReadsPerSecond/10, min(e.rate*cutTo, e.ceiling(now)))
		e.tokens, e.made = min(e.tokens, 0), min(e.made, 0)
	}
	return &adapters.Throttle{RetryAfter: time.Duration((1 + rand.Float64()) / e.rate * float64(time.Second)), Cause: err}
}

// admit spends n tokens for a read of the execution k (zero for other reads), and returns once they
// are there, or refuses the read (first: never refused).
func (e *Budget) admit(ctx context.Context, k adapters.ExecKey, n int, first bool) error {
	ok, wait, ahead := e.take(k, n, first)
	if !ok {
		return &adapters.Throttle{RetryAfter: wait}
	}
	if ahead {
		return e.makeRead(ctx, n)
	}
	return nil
}

// admitOutcome spends n tokens for an outcome read, and returns once they are there: of the
// outcomes' own share while it holds, else ahead of every turn (admit).
func (e *Budget) admitOutcome(ctx context.Context, n int) error {
	e.mu.Lock()
	now := time.Now()
	e.refill(now)
	e.ask(now, n)
	if !e.shared(now) {
		e.mu.Unlock()
		return e.admit(ctx, adapters.ExecKey{}, n, true)
	}
	wait := time.Duration(max(0, float64(n)-e.ends) / e.endsRate(now) * float64(time.Second))
	e.ends -= float64(n)
	e.mu.Unlock()
	if err := driver.Sleep(ctx, wait); err != nil {
		e.mu.Lock()
		e.ends += float64(n)
		e.mu.Unlock()
		return err
	}
	e.spent.Add(uint64(n))
	return nil
}

// ended is the end of a read that was made: an engine's throttle cuts the rate.
func (e *Budget) ended(err error) error {
	if errors.Is(err, adapters.ErrThrottled) {
		return e.throttled(err)
	}
	return err
}

// Hook spends the budget on the reads of an adapters.Engine: a Describe spends the tokens of its
// engine calls (adapters.Call.Calls), or is given its turn when refused, and tells what its
// execution's pace asks of the engine; an Outcome takes the next tokens before any other read; a
// List spends a token per page; a Sweep a token of the sweeps' bucket (see New), ahead of every
// turn, since each listing answers for every task of its targets that anyone follows; and a
// Samples waits for the tokens of all the calls it may make there (no client waits on it). Other
// calls pass.
func (e *Budget) Hook(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
	switch c.Op {
	case adapters.OpDescribe:
		k := driver.KeyOf(c.Target, c.Ref)
		if err := e.admit(ctx, k, c.Calls, false); err != nil {
			e.describedAs(c.Pace, k, adapters.Status{}, err)
			return ctx, nil, err
		}
		return ctx, func(err error) error {
			err = e.ended(err)
			e.describedAs(c.Pace, k, c.Status, err)
			return err
		}, nil
	case adapters.OpOutcome:
		return ctx, e.ended, e.admitOutcome(ctx, c.Calls)
	case adapters.OpList:
		return ctx, e.ended, e.admit(ctx, adapters.ExecKey{}, 1, false)
	case adapters.OpSweep:
		return ctx, e.sweeps.ended, e.sweeps.admit(ctx, adapters.ExecKey{}, 1, true)
	case adapters.OpSample:
		return ctx, e.sweeps.ended, e.sweeps.spend(ctx, c.Calls)
	}
	return ctx, nil, nil
}

// describedAs learns from a Describe of the execution k, for a task of pace p, what it asks of the
// engine.
func (e *Budget) describedAs(p pace.Pace, k adapters.ExecKey, st adapters.Status, err error) {
	switch {
	case err == nil:
		e.learn(p, k, st)
	case errors.Is(err, adapters.ErrThrottled):
		// Still running as far as anyone knows: it asks for reads all the same.
		e.learn(p, k, adapters.Status{State: adapters.Working})
	}
}

// learn records the read rate a running execution's curve asks for, or forgets an ended one. The
// task's age counts from its creation, else from the execution's start as read; with neither, the
// age of an hour is assumed (the curve's longest interval, with the defaults).
func (e *Budget) learn(p pace.Pace, k adapters.ExecKey, st adapters.Status) {
	paced := p.Paced()
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	old, had := e.want[k]
	if had {
		e.wanted -= old.perSecond
	}
	if st.State.Terminal() || !paced {
		delete(e.want, k)
		return
	}
	age := time.Hour
	if !p.Created.IsZero() || !st.Started.IsZero() {
		age = p.Age(now, st.Started)
	}
	w := want{perSecond: 1 / max(p.Interval(age).Seconds(), 0.001), seen: now}
	// Assigned in place, the map keeps the key it has: the id of the read that first learnt it,
	// which the readings follow the execution by too, not a copy of it from every poll's token.
	e.want[k] = w
	e.wanted += w.perSecond
}
