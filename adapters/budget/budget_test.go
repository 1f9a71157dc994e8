package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/pace"
)

// fixed answers every read with one state, or throttles it, and counts the reads: a unit-test
// stand-in for the accounting only (mcpserver's tests and the bench's fleet figure run budgets
// against real engines, through a proxy that throttles).
type fixed struct {
	adapters.Conn
	state                   adapters.State
	throttle                atomic.Bool
	readCalls, outcomeCalls int
	reads                   atomic.Int64
}

func (f *fixed) Check(context.Context, adapters.Target) (adapters.TargetInfo, error) {
	return adapters.TargetInfo{ReadCalls: f.readCalls, OutcomeCalls: f.outcomeCalls}, nil
}

func (f *fixed) Describe(context.Context, adapters.Target, adapters.Ref) (adapters.Status, error) {
	f.reads.Add(1)
	if f.throttle.Load() {
		return adapters.Status{}, fmt.Errorf("%w: rate exceeded", adapters.ErrThrottled)
	}
	return adapters.Status{State: f.state, Started: time.Now()}, nil
}

func (f *fixed) Outcome(context.Context, adapters.Target, adapters.Ref) (adapters.Outcome, error) {
	f.reads.Add(1)
	return adapters.Outcome{State: adapters.Succeeded}, nil
}

var tg = adapters.Target{Name: "t"}

// budgeted is an engine over inner whose calls go through the hook of a budget of b.
type budgeted struct {
	*adapters.Engine
	*Budget
}

func newBudgeted(inner adapters.Conn, b adapters.Budget) budgeted {
	bud := New(b, adapters.Budget{})
	return budgeted{adapters.NewEngine(inner, adapters.EngineOptions{Hooks: []adapters.Hook{bud.Hook}}), bud}
}

func ref(i int) adapters.Ref { return adapters.Ref{ID: fmt.Sprint(i)} }

func TestReadsSpendTokens(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 3})
	ctx := context.Background()
	for i := range 3 {
		if _, err := e.Describe(ctx, tg, ref(i), pace.Pace{}); err != nil {
			t.Fatalf("read %d of a burst of 3: %v", i+1, err)
		}
	}
	_, err := e.Describe(ctx, tg, ref(3), pace.Pace{})
	var th *adapters.Throttle
	if !errors.As(err, &th) || th.Cause != nil || th.RetryAfter < 50*time.Millisecond || th.RetryAfter > 300*time.Millisecond {
		t.Fatalf("a fourth read at once: %v, want a refusal that says to retry in about 100ms (a token at 10/s)", err)
	}
	const want = "engine throttling: taskgate's read budget for the engine is spent for now; retry in "
	if err.Error()[:len(want)] != want {
		t.Errorf("refusal %q, want it to start %q", err, want)
	}
	if n := inner.reads.Load(); n != 3 {
		t.Errorf("the engine was read %d times, want 3: a refused read reaches no engine", n)
	}
	var early *adapters.Throttle
	if _, err := e.Describe(ctx, tg, ref(3), pace.Pace{}); !errors.As(err, &early) || early.RetryAfter > th.RetryAfter {
		t.Errorf("the refused read again before its retry-after: %v, want refused until the same time", err)
	}
	if _, err := e.Describe(ctx, tg, ref(4), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Errorf("another execution's read while the first waits for its token: %v, want refused", err)
	}
	time.Sleep(th.RetryAfter)
	if _, err := e.Describe(ctx, tg, ref(3), pace.Pace{}); err != nil {
		t.Errorf("a read after the retry-after: %v, want it made with the token it was given", err)
	}
	if s := e.Stats(); s.Spent != 4 || s.Refused != 2 || s.Throttled != 0 {
		t.Errorf("stats %+v, want 4 tokens spent and 2 reads refused", s)
	}
}

// A read of a target whose reads make two engine calls spends two tokens, and so does an outcome
// that makes three.
func TestReadsCostTheirEngineCalls(t *testing.T) {
	inner := &fixed{state: adapters.Working, readCalls: 2, outcomeCalls: 3}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 1, Burst: 7})
	ctx := context.Background()
	e.Check(ctx, tg)
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	e.Describe(ctx, tg, ref(1), pace.Pace{})
	e.Outcome(ctx, tg, ref(2))
	if _, err := e.Describe(ctx, tg, ref(3), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Errorf("a read of two calls after 7 tokens spent of a burst of 7: %v, want refused", err)
	}
	if s := e.Stats(); s.Spent != 7 {
		t.Errorf("spent %d tokens, want 7", s.Spent)
	}
}

// An outcome is never refused: with no token left it waits for the next one, before any other
// read, and reads are made only once their tokens are there.
func TestOutcomesTakeTheNextToken(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx := context.Background()
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	t0 := time.Now()
	if _, err := e.Outcome(ctx, tg, ref(1)); err != nil {
		t.Fatalf("an outcome with no token left: %v, want it read", err)
	}
	if took := time.Since(t0); took < 80*time.Millisecond {
		t.Errorf("an outcome with no token left was read after %s, want it to wait for the next token (100ms)", took)
	}
	if _, err := e.Describe(ctx, tg, ref(2), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Errorf("a read right after the outcome took the token: %v, want refused", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Outcome(canceled, tg, ref(3)); !errors.Is(err, context.Canceled) || inner.reads.Load() != 2 {
		t.Errorf("an outcome whose caller left while it waited: %v after %d engine reads, want context.Canceled and no read", err, inner.reads.Load())
	}
}

// A read the engine throttles cuts the rate to 70%, once a second at most, down to a tenth of the
// budget; each second without one gives a tenth of the budget back.
func TestEngineThrottlingCutsTheRate(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 100, Burst: 100})
	ctx := context.Background()
	inner.throttle.Store(true)
	_, err := e.Describe(ctx, tg, ref(0), pace.Pace{})
	var th *adapters.Throttle
	if !errors.As(err, &th) || th.Cause == nil || !errors.Is(err, adapters.ErrThrottled) {
		t.Fatalf("a read the engine throttled: %v, want the engine's throttle with a retry-after", err)
	}
	if r := e.Stats().Rate; math.Abs(r-70) > 1 {
		t.Errorf("rate after one throttle: %.1f, want 70", r)
	}
	e.tokens, e.made = 100, 100 // the second throttle comes from the engine, not from the buckets
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	if r := e.Stats().Rate; math.Abs(r-70) > 1 {
		t.Errorf("rate after a second throttle within a second: %.1f, want still 70", r)
	}
	for range 7 {
		e.cut, e.tokens, e.made = time.Time{}, 100, 100
		e.Describe(ctx, tg, ref(0), pace.Pace{})
	}
	if r := e.Stats().Rate; math.Abs(r-10) > 1 {
		t.Errorf("rate after many throttles: %.1f, want the floor, a tenth of the budget (10)", r)
	}
	inner.throttle.Store(false)
	e.mu.Lock()
	e.cut = time.Now().Add(-time.Second)
	e.last = time.Now().Add(-2 * time.Second)
	e.mu.Unlock()
	if r := e.Stats().Rate; math.Abs(r-30) > 1 {
		t.Errorf("rate two seconds after the last throttle: %.1f, want 10 + 2 x 10 = 30", r)
	}
	if s := e.Stats(); s.Throttled != 9 {
		t.Errorf("throttles counted %d, want 9", s.Throttled)
	}
}

// What running tasks ask of the engine at their curves, against the rate, is the stretch of
// their readings; ended tasks ask nothing.
func TestStretchIsTheLoad(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 100})
	ctx, p := context.Background(), pace.Pace{Created: time.Now(), Curve: pace.CurveFunc(func(time.Duration) time.Duration { return time.Second })}
	for i := range 9 {
		e.Describe(ctx, tg, ref(i), p)
	}
	if s := e.Stretch(); s != 1 {
		t.Errorf("9 tasks at 1/s against a budget of 10/s: stretch %.2f, want 1", s)
	}
	for i := 9; i < 36; i++ {
		e.Describe(ctx, tg, ref(i), p)
	}
	if s := e.Stretch(); math.Abs(s-4) > 0.01 {
		t.Errorf("36 tasks at 1/s against 90%% of 10/s: stretch %.2f, want 4", s)
	}
	inner.state = adapters.Succeeded
	for i := range 27 {
		e.Describe(ctx, tg, ref(i), p)
	}
	if s, n := e.Stretch(), e.Stats().Running; s != 1 || n != 9 {
		t.Errorf("after 27 of them ended: stretch %.2f over %d running, want 1 over 9", s, n)
	}
}

// Reads refused together are told to come back spread out, not all at once.
func TestRefusedReadsAreSpread(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx := context.Background()
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	lo, hi := time.Hour, time.Duration(0)
	for i := range 50 {
		_, err := e.Describe(ctx, tg, ref(i), pace.Pace{})
		var th *adapters.Throttle
		if !errors.As(err, &th) {
			t.Fatalf("read %d: %v, want refused", i, err)
		}
		lo, hi = min(lo, th.RetryAfter), max(hi, th.RetryAfter)
	}
	if hi-lo < time.Second {
		t.Errorf("50 refused reads told to retry within %s..%s, want them spread over seconds (50 reads at 10/s)", lo, hi)
	}
}

// A read that comes back late for its turn is not made in the same instant as another read: no
// span of time holds more reads than its refill and one burst.
func TestALateTurnIsNotMadeWithAnotherReadsToken(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx := context.Background()
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	if _, err := e.Describe(ctx, tg, ref(1), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Fatalf("a second read at once: %v, want refused, with a turn in 100ms", err)
	}
	time.Sleep(350 * time.Millisecond) // late for its turn
	if _, err := e.Describe(ctx, tg, ref(2), pace.Pace{}); err != nil {
		t.Fatalf("a new read 350ms on: %v, want it made", err)
	}
	_, err := e.Describe(ctx, tg, ref(1), pace.Pace{})
	var th *adapters.Throttle
	if !errors.As(err, &th) || th.RetryAfter < 50*time.Millisecond {
		t.Fatalf("the late turn right after another read: %v, want refused for a token's time (100ms)", err)
	}
	time.Sleep(th.RetryAfter)
	if _, err := e.Describe(ctx, tg, ref(1), pace.Pace{}); err != nil {
		t.Errorf("the late turn a token later: %v, want it made", err)
	}
	if n := inner.reads.Load(); n != 3 {
		t.Errorf("%d engine reads, want 3", n)
	}
}

// Reads that make more engine calls than the burst are made all the same, when the buckets are
// full, and their calls are paid from the next tokens.
func TestReadsOfMoreCallsThanTheBurst(t *testing.T) {
	inner := &fixed{state: adapters.Working, readCalls: 2, outcomeCalls: 3}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Check(ctx, tg)
	if _, err := e.Describe(ctx, tg, ref(0), pace.Pace{}); err != nil {
		t.Fatalf("a read of two calls with a burst of one: %v, want it made", err)
	}
	_, err := e.Describe(ctx, tg, ref(1), pace.Pace{})
	var th *adapters.Throttle
	if !errors.As(err, &th) || th.RetryAfter < 250*time.Millisecond {
		t.Fatalf("a second read of two calls at once: %v, want its turn after its own two tokens and the first read's debt (300ms)", err)
	}
	time.Sleep(th.RetryAfter)
	if _, err := e.Describe(ctx, tg, ref(1), pace.Pace{}); err != nil {
		t.Errorf("the second read at its turn: %v, want it made", err)
	}
	if _, err := e.Outcome(ctx, tg, ref(2)); err != nil {
		t.Errorf("an outcome of three calls with a burst of one: %v, want it read", err)
	}
}

// sweeping answers every sweep with nothing, and counts the sweeps.
type sweeping struct {
	fixed
	sweeps atomic.Int64
}

func (s *sweeping) SweepGroup(t adapters.Target) string { return t.Name }

func (s *sweeping) Sweep(context.Context, adapters.SweepOptions) ([]adapters.Listed, string, error) {
	s.sweeps.Add(1)
	return nil, "", nil
}

// Sweeps spend a bucket of their own when the engine has one, and leave the reads' alone; without
// one, they spend the reads'.
func TestSweepsSpendTheirOwnBucket(t *testing.T) {
	ctx := context.Background()
	reads := adapters.Budget{ReadsPerSecond: 1, Burst: 2}
	inner := &sweeping{fixed: fixed{state: adapters.Working}}
	bud := New(reads, adapters.Budget{ReadsPerSecond: 1, Burst: 1})
	e := adapters.NewEngine(inner, adapters.EngineOptions{Hooks: []adapters.Hook{bud.Hook}})
	if _, _, err := e.Sweep(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}}); err != nil {
		t.Fatalf("a first sweep: %v", err)
	}
	begin := time.Now()
	if _, _, err := e.Sweep(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}}); err != nil {
		t.Errorf("a second sweep at once, with a sweep burst of 1: %v, want made when its token is", err)
	}
	if waited := time.Since(begin); waited < 500*time.Millisecond {
		t.Errorf("a second sweep at once waited %v, want its token's time (1s at 1/s)", waited)
	}
	for i := range 2 {
		if _, err := e.Describe(ctx, tg, ref(i), pace.Pace{}); err != nil {
			t.Errorf("read %d of a burst of 2 after the sweeps: %v, want the reads' bucket untouched", i+1, err)
		}
	}
	if n := inner.sweeps.Load(); n != 2 {
		t.Errorf("%d sweeps reached the engine, want 2", n)
	}

	shared := New(reads, adapters.Budget{})
	e = adapters.NewEngine(inner, adapters.EngineOptions{Hooks: []adapters.Hook{shared.Hook}})
	e.Sweep(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}})
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	if _, err := e.Describe(ctx, tg, ref(1), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Errorf("a second read after a sweep without a bucket of its own: %v, want refused (the sweep took a read's token)", err)
	}
}

// sampling answers every Samples with n empty objects.
type sampling struct{ fixed }

func (s *sampling) Samples(_ context.Context, _ adapters.Target, n int) ([]json.RawMessage, error) {
	return slices.Repeat([]json.RawMessage{json.RawMessage(`{}`)}, n), nil
}

// Samples, which no client waits on, wait for the tokens of every call they may make: they are
// never refused, count no refusal, and leave the bucket as a client's reads of as many calls would.
func TestSamplesWaitForTheirTokens(t *testing.T) {
	b := New(adapters.Budget{ReadsPerSecond: 10, Burst: 3}, adapters.Budget{})
	e := adapters.NewEngine(&sampling{fixed{state: adapters.Working}}, adapters.EngineOptions{Hooks: []adapters.Hook{b.Hook}})
	ctx := context.Background()
	start := time.Now()
	if _, err := e.Samples(ctx, tg, 2); err != nil { // a listing and two reads: the whole burst
		t.Fatal(err)
	}
	if _, err := e.Samples(ctx, tg, 1); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > time.Second {
		t.Errorf("samples of 5 calls with a burst of 3 at 10/s took %v, want about 200ms", waited)
	}
	if _, err := e.Describe(ctx, tg, ref(0), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Errorf("a read right after: %v, want refused: the tokens are spent", err)
	}
	if s := b.Stats(); s.Spent != 5 || s.Refused != 1 {
		t.Errorf("stats %+v, want 5 tokens spent and only the client's read refused", s)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Samples(done, tg, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("Samples with its context ended = %v", err)
	}
}

// A sweep goes before the turns booked, waiting only for its token: each listing answers for every
// task of its targets that anyone follows.
func TestSweepsGoAheadOfTurns(t *testing.T) {
	b := New(adapters.Budget{ReadsPerSecond: 10, Burst: 1}, adapters.Budget{})
	inner := &sweeping{fixed: fixed{state: adapters.Working}}
	e := adapters.NewEngine(inner, adapters.EngineOptions{Hooks: []adapters.Hook{b.Hook}})
	ctx := context.Background()
	if _, err := e.Describe(ctx, tg, ref(2), pace.Pace{}); err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 6; i++ { // turns booked for the next three tokens
		if _, err := e.Describe(ctx, tg, ref(i), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
			t.Fatalf("read %d with no token: %v, want refused with a turn", i, err)
		}
	}
	begin := time.Now()
	if _, _, err := e.Sweep(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}}); err != nil {
		t.Fatalf("a sweep ahead of three turns: %v, want made", err)
	}
	if waited := time.Since(begin); waited > 250*time.Millisecond {
		t.Errorf("the sweep ahead waited %v, want about a token's time (100ms), not the turns' (400ms)", waited)
	}
}

// Reads that go ahead are made before any turn that comes due while they wait for their tokens:
// an outcome or a sweep's listing books its tokens as it comes.
func TestReadsAheadAreMadeBeforeTurnsThatComeDue(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx := context.Background()
	e.Describe(ctx, tg, ref(0), pace.Pace{})
	_, err := e.Describe(ctx, tg, ref(1), pace.Pace{})
	var turn *adapters.Throttle
	if !errors.As(err, &turn) {
		t.Fatalf("a read with no token: %v, want refused with a turn", err)
	}
	const ahead = 4
	outcomes := make(chan time.Time, ahead)
	for i := range ahead {
		go func() {
			if _, err := e.Outcome(ctx, tg, ref(10+i)); err != nil {
				t.Errorf("outcome %d: %v", i, err)
			}
			outcomes <- time.Now()
		}()
	}
	var made time.Time
	for wait := turn.RetryAfter; made.IsZero(); { // the turn's client, back when it is told
		time.Sleep(wait)
		switch _, err := e.Describe(ctx, tg, ref(1), pace.Pace{}); {
		case err == nil:
			made = time.Now()
		case errors.As(err, &turn):
			wait = turn.RetryAfter
		default:
			t.Fatal(err)
		}
	}
	for range ahead {
		if at := <-outcomes; at.After(made) {
			t.Errorf("an outcome was made %v after the turn that came due while it waited, want before", at.Sub(made))
		}
	}
}

// While the engine throttles, outcomes keep a share of the budget that the cuts do not lower, at
// the pace they came lately, and the other reads share the rest: the ends seen are read as they
// come, and all reads together spend no more than the budget.
func TestOutcomesKeepAShareWhileThrottled(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx := context.Background()
	e.mu.Lock()
	e.asked, e.askedAt = 5, time.Now() // outcomes came at 5 a second lately
	e.mu.Unlock()
	inner.throttle.Store(true)
	if _, err := e.Describe(ctx, tg, ref(0), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Fatalf("a read the engine throttled: %v", err)
	}
	inner.throttle.Store(false)
	e.mu.Lock()
	share, rate := e.endsRate(time.Now()), e.rate
	e.mu.Unlock()
	if math.Abs(share-6.25) > 0.1 || rate > 10-share+0.01 {
		t.Fatalf("after a throttle, outcomes' share %.2f and the others' rate %.2f: want 6.25 (their pace and a quarter) and at most the rest of 10", share, rate)
	}
	begin := time.Now()
	for i := range 10 {
		if _, err := e.Outcome(ctx, tg, ref(i)); err != nil {
			t.Fatal(err)
		}
	}
	// 10 outcomes at about 6.5 a second (the share grows with them): 1.5 s; at the others' cut
	// rate, 7 a second at most, and a tenth of the budget after more throttles, 10 s.
	if took := time.Since(begin); took < 1200*time.Millisecond || took > 2*time.Second {
		t.Errorf("10 outcomes while throttled took %v, want about 1.5 s: their share", took)
	}
	e.mu.Lock()
	e.cut = time.Now().Add(-endsWindow)
	e.mu.Unlock()
	if s := e.Stats(); s.Rate > 10 {
		t.Errorf("rate %v once the share lapsed, want at most the budget", s.Rate)
	}
}

// TestTheOutcomesShareHoldsNoBurst: what the outcomes' share saved while none came is spent beside
// the others' burst, so it saves one call at most: a window right after a cut spends no more than
// the budget, the others' burst, and that one call.
func TestTheOutcomesShareHoldsNoBurst(t *testing.T) {
	inner := &fixed{state: adapters.Working}
	e := newBudgeted(inner, adapters.Budget{ReadsPerSecond: 10, Burst: 1})
	ctx := context.Background()
	e.mu.Lock()
	e.asked, e.askedAt = 8, time.Now() // outcomes came at 8 a second lately: a share of 9
	e.mu.Unlock()
	inner.throttle.Store(true)
	if _, err := e.Describe(ctx, tg, ref(0), pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
		t.Fatalf("a read the engine throttled: %v", err)
	}
	inner.throttle.Store(false)
	time.Sleep(1500 * time.Millisecond) // both buckets fill, no read spends them
	inner.reads.Store(0)
	begin := time.Now()
	runCtx, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for runCtx.Err() == nil {
				if i%2 == 0 {
					_, _ = e.Outcome(runCtx, tg, ref(i*1000+int(inner.reads.Load())))
				} else {
					_, _ = e.Describe(runCtx, tg, ref(i), pace.Pace{})
				}
			}
		})
	}
	wg.Wait()
	// In the second: the budget's 10 calls, the others' burst of 1 and the share's saved call.
	if made, most := inner.reads.Load(), int64(10*time.Since(begin).Seconds()+0.5)+1+1; made > most {
		t.Errorf("a second right after a cut made %d calls, want at most %d", made, most)
	}
}
