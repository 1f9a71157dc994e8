package coalesce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/pace"
)

// scripted answers reads with a state set by the test (or an error), after a delay, and counts its
// calls: a unit-test stand-in for the sharing and reuse logic only (the engines' own tests, and
// mcpserver's, run against real engines).
type scripted struct {
	adapters.Conn
	delay time.Duration

	mu      sync.Mutex
	state   adapters.State
	err     error
	started time.Time
	output  []byte // the outcome's; {"ok":true} when nil

	describes, outcome, starts atomic.Int64
}

func (s *scripted) set(st adapters.State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.err = st, err
}

func (s *scripted) Describe(ctx context.Context, _ adapters.Target, _ adapters.Ref) (adapters.Status, error) {
	s.describes.Add(1)
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return adapters.Status{}, s.err
	}
	return adapters.Status{State: s.state, Started: s.started}, ctx.Err()
}

func (s *scripted) Outcome(context.Context, adapters.Target, adapters.Ref) (adapters.Outcome, error) {
	s.outcome.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.output != nil {
		return adapters.Outcome{State: s.state, Output: s.output}, nil
	}
	return adapters.Outcome{State: s.state, Output: []byte(`{"ok":true}`)}, nil
}

func (s *scripted) Start(context.Context, adapters.Target, adapters.StartRequest) (adapters.Ref, error) {
	s.starts.Add(1)
	return adapters.Ref{ID: "started"}, nil
}

func (s *scripted) KeyRef(adapters.Target, string, string) adapters.Ref {
	return adapters.Ref{ID: "started"}
}

func (s *scripted) Check(context.Context, adapters.Target) (adapters.TargetInfo, error) {
	return adapters.TargetInfo{}, nil
}

func (s *scripted) Cancel(context.Context, adapters.Target, adapters.Ref, string) error { return nil }

func (s *scripted) Answer(context.Context, adapters.Target, adapters.Ref, string, adapters.Answer) error {
	return nil
}

var tg, ref = adapters.Target{Name: "t"}, adapters.Ref{ID: "x"}

// stack is an engine over inner that consults Readings of o, as package tasks builds it.
type stack struct {
	*adapters.Engine
	*Readings
}

func newStack(inner adapters.Conn, o Options) stack {
	r := New(o)
	return stack{adapters.NewEngine(inner, adapters.EngineOptions{Readings: r}), r}
}

func (s stack) Describe(ctx context.Context, t adapters.Target, r adapters.Ref, p pace.Pace) (adapters.Status, error) {
	return s.Engine.Describe(ctx, t, r, p)
}

func (s stack) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	return s.Engine.Outcome(ctx, t, r)
}

// every is a pace whose curve is d at every age, for a task created at created.
func every(d time.Duration, created time.Time) pace.Pace {
	return pace.Pace{Created: created, Curve: pace.CurveFunc(func(time.Duration) time.Duration { return d })}
}

func TestConcurrentDescribesShareOneCall(t *testing.T) {
	inner := &scripted{state: adapters.Working, delay: 50 * time.Millisecond}
	e := newStack(inner, Options{Size: 10})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := e.Describe(context.Background(), tg, ref, pace.Pace{}); err != nil || st.State != adapters.Working {
				t.Errorf("Describe = %v, %v", st, err)
			}
		}()
	}
	wg.Wait()
	if n := inner.describes.Load(); n > 2 {
		t.Fatalf("50 concurrent Describes made %d engine calls, want 1 (2 at most with scheduling)", n)
	}
	e.Describe(context.Background(), tg, ref, pace.Pace{})
	if n := inner.describes.Load(); n < 2 {
		t.Fatalf("a later Describe without a pace or a Fresh window was answered from the cache")
	}
}

func TestEndedExecutionsAreCachedAndBounded(t *testing.T) {
	inner := &scripted{state: adapters.Succeeded}
	e := newStack(inner, Options{Size: 2})
	ctx := context.Background()
	for range 3 {
		e.Describe(ctx, tg, adapters.Ref{ID: "a"}, pace.Pace{})
		e.Outcome(ctx, tg, adapters.Ref{ID: "a"})
	}
	if d, o := inner.describes.Load(), inner.outcome.Load(); d != 1 || o != 1 {
		t.Fatalf("engine calls for an ended execution read 3 times: %d describes, %d outcomes; want 1 and 1", d, o)
	}
	e.Describe(ctx, tg, adapters.Ref{ID: "b"}, pace.Pace{})
	e.Describe(ctx, tg, adapters.Ref{ID: "c"}, pace.Pace{})
	if e.Len() != 2 {
		t.Fatalf("cache holds %d, want its bound 2", e.Len())
	}
	e.Describe(ctx, tg, adapters.Ref{ID: "a"}, pace.Pace{}) // evicted: asks the engine again
	if d := inner.describes.Load(); d != 4 {
		t.Fatalf("describes = %d, want 4 (a evicted)", d)
	}
}

func TestCachedOutcomesAreBoundedInBytes(t *testing.T) {
	const bound = 1 << 20
	inner := &scripted{state: adapters.Succeeded, output: bytes.Repeat([]byte("x"), 300<<10)}
	e := newStack(inner, Options{Size: 100, Bytes: bound})
	ctx := context.Background()
	for i := range 10 {
		e.Outcome(ctx, tg, adapters.Ref{ID: fmt.Sprint(i)})
	}
	if e.Len() != 3 || e.Bytes() > bound || e.Bytes() < 3*300<<10 {
		t.Fatalf("ten outcomes of 300 KiB in a cache of 1 MiB: it holds %d of them, %d bytes; want 3, under 1 MiB", e.Len(), e.Bytes())
	}
	e.Outcome(ctx, tg, adapters.Ref{ID: "9"})
	if o := inner.outcome.Load(); o != 10 {
		t.Fatalf("the newest outcome was read again from the engine: %d outcome calls, want 10", o)
	}

	inner.output = bytes.Repeat([]byte("x"), bound)
	e.Outcome(ctx, tg, adapters.Ref{ID: "huge"})
	e.Outcome(ctx, tg, adapters.Ref{ID: "huge"})
	if o := inner.outcome.Load(); o != 12 || e.Len() != 3 {
		t.Fatalf("an outcome larger than the whole cache: %d outcome calls (want 12: it is not kept), %d kept (want the 3 before)", o, e.Len())
	}
}

func TestACancelledCallerDoesNotFailTheOthers(t *testing.T) {
	inner := &scripted{state: adapters.Working, delay: 50 * time.Millisecond}
	e := newStack(inner, Options{Size: 10})
	impatient, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := e.Describe(context.Background(), adapters.Target{}, ref, pace.Pace{}); err != nil {
			t.Errorf("patient caller: %v", err)
		}
	}()
	if _, err := e.Describe(impatient, adapters.Target{}, ref, pace.Pace{}); err != context.Canceled {
		t.Errorf("impatient caller: %v, want context.Canceled", err)
	}
	wg.Wait()
}

func TestRunningStatusIsFreshForAWindow(t *testing.T) {
	inner := &scripted{state: adapters.Working}
	e := newStack(inner, Options{Size: 10, Fresh: 300 * time.Millisecond})
	ctx := context.Background()
	for range 5 {
		e.Describe(ctx, tg, ref, pace.Pace{})
	}
	if n := inner.describes.Load(); n != 1 {
		t.Fatalf("5 reads within the window made %d engine calls, want 1", n)
	}
	time.Sleep(300 * time.Millisecond)
	e.Describe(ctx, tg, ref, pace.Pace{})
	if n := inner.describes.Load(); n != 2 {
		t.Fatalf("a read after the window made no engine call (calls %d)", n)
	}
	e.Cancel(ctx, tg, ref, "test")
	e.Describe(ctx, tg, ref, pace.Pace{})
	if n := inner.describes.Load(); n != 3 {
		t.Fatalf("a read after Cancel was answered from the window (calls %d)", n)
	}
	e.Answer(ctx, tg, ref, "confirm", adapters.Answer{Action: adapters.ActionDecline})
	e.Describe(ctx, tg, ref, pace.Pace{})
	if n := inner.describes.Load(); n != 4 {
		t.Fatalf("a read after Answer was answered from the window (calls %d)", n)
	}
	e = newStack(inner, Options{Size: 10, Fresh: -1})
	before := inner.describes.Load()
	for range 3 {
		e.Describe(context.Background(), tg, ref, every(time.Hour, time.Now()))
	}
	if n := inner.describes.Load() - before; n != 3 {
		t.Fatalf("with Fresh negative, 3 reads made %d engine calls, want 3", n)
	}
	inner.set(adapters.Succeeded, nil)
	e.Describe(ctx, tg, ref, pace.Pace{})
	before = inner.describes.Load()
	e.Describe(ctx, tg, ref, pace.Pace{})
	if n := inner.describes.Load() - before; n != 0 {
		t.Fatalf("with Fresh negative, a read of an ended execution made %d engine calls, want none: ends are kept", n)
	}
}

// A reading is reused for the curve's interval at the task's age, however often it is read, and
// says when it was made and when the engine will be read next.
func TestReadingsFollowTheCurve(t *testing.T) {
	inner := &scripted{state: adapters.Working}
	e := newStack(inner, Options{Size: 10})
	created := time.Now()
	ctx, p := context.Background(), every(200*time.Millisecond, created)
	first, _ := e.Describe(ctx, tg, ref, p)
	for range 20 {
		st, _ := e.Describe(ctx, tg, ref, p)
		if !st.ReadAt.Equal(first.ReadAt) || !st.NextReadAt.Equal(first.NextReadAt) {
			t.Fatalf("a reused reading: read at %v, next at %v; want %v and %v", st.ReadAt, st.NextReadAt, first.ReadAt, first.NextReadAt)
		}
	}
	if n := inner.describes.Load(); n != 1 {
		t.Fatalf("21 reads within the interval made %d engine calls, want 1", n)
	}
	if d := first.NextReadAt.Sub(first.ReadAt); d != 200*time.Millisecond {
		t.Errorf("the next read is %s after the reading, want the interval, 200ms", d)
	}
	time.Sleep(200 * time.Millisecond)
	e.Describe(ctx, tg, ref, p)
	if n := inner.describes.Load(); n != 2 {
		t.Fatalf("a read past the interval made %d engine calls in all, want 2", n)
	}
	// The curve is in the task's age: a read through an id of the same task minted an hour
	// earlier finds the reading an hour behind.
	e.Describe(context.Background(), tg, ref, every(200*time.Millisecond, created.Add(-time.Hour)))
	if n := inner.describes.Load(); n != 3 {
		t.Fatalf("a read an hour of task age later made %d engine calls in all, want 3", n)
	}
	if c := e.Counts().Describe; c.Engine != 3 || c.Fresh != 20 || c.Stale != 0 {
		t.Errorf("counted %+v, want 3 engine reads and 20 fresh answers", c)
	}
}

// Under load, a reading lasts the stretched interval, and answers past the curve's own interval
// are stale.
func TestStretchLengthensReuse(t *testing.T) {
	inner := &scripted{state: adapters.Working}
	e := newStack(inner, Options{Size: 10, Stretch: func() float64 { return 3 }})
	ctx, p := context.Background(), every(100*time.Millisecond, time.Now())
	first, _ := e.Describe(ctx, tg, ref, p)
	if d := first.NextReadAt.Sub(first.ReadAt); d != 300*time.Millisecond {
		t.Errorf("the next read is %s after the reading, want three intervals, 300ms", d)
	}
	time.Sleep(150 * time.Millisecond)
	e.Describe(ctx, tg, ref, p)
	if n, c := inner.describes.Load(), e.Counts().Describe; n != 1 || c.Stale != 1 {
		t.Errorf("a read 1.5 intervals on: %d engine calls, counted %+v; want 1 call and a stale answer", n, c)
	}
}

// A throttled read is answered from the newest reading, and the engine is not read again until the
// throttle's retry-after.
func TestThrottledReadIsAnsweredFromTheNewestReading(t *testing.T) {
	inner := &scripted{state: adapters.Working}
	e := newStack(inner, Options{Size: 10})
	ctx, p := context.Background(), every(50*time.Millisecond, time.Now())
	first, _ := e.Describe(ctx, tg, ref, p)
	throttle := &adapters.Throttle{RetryAfter: 300 * time.Millisecond, Cause: adapters.ErrThrottled}
	inner.set(adapters.Working, throttle)
	time.Sleep(60 * time.Millisecond)
	for range 10 {
		st, err := e.Describe(ctx, tg, ref, p)
		if err != nil || !st.ReadAt.Equal(first.ReadAt) {
			t.Fatalf("a throttled read: %+v, %v; want the first reading", st, err)
		}
		if left := time.Until(st.NextReadAt); left < 200*time.Millisecond {
			t.Fatalf("a throttled read says the next read is in %s, want about the retry-after", left)
		}
	}
	if n := inner.describes.Load(); n != 2 {
		t.Fatalf("11 reads, one of them throttled: %d engine calls, want 2 (none within the retry-after)", n)
	}
	if c := e.Counts().Describe; c.Stale != 10 || c.Engine != 1 {
		t.Errorf("counted %+v, want 10 stale answers and 1 engine read", c)
	}
	inner.set(adapters.Working, nil)
	time.Sleep(300 * time.Millisecond)
	if st, _ := e.Describe(ctx, tg, ref, p); !st.ReadAt.After(first.ReadAt) {
		t.Errorf("a read after the retry-after was not read from the engine")
	}
}

// A read with no reading to fall back on waits for the throttle's retry-after, within
// Options.Wait, then fails with the throttle.
func TestThrottledReadWithoutReadingWaitsThenFails(t *testing.T) {
	throttle := &adapters.Throttle{RetryAfter: 200 * time.Millisecond}
	inner := &scripted{err: throttle}
	e := newStack(inner, Options{Size: 10, Wait: 500 * time.Millisecond})
	t0 := time.Now()
	_, err := e.Describe(context.Background(), tg, ref, every(time.Second, time.Now()))
	// Calls at 0, 200 and 400ms, and none past the 500ms it may wait: it gives up when the next
	// would come past them. A machine that stalls a sleep past 400ms leaves room for two calls
	// only, so the count is two or three, and the wait more than 300ms either way.
	if calls, waited := inner.describes.Load(), time.Since(t0); !errors.Is(err, adapters.ErrThrottled) || waited <= 300*time.Millisecond || calls < 2 || calls > 3 {
		t.Errorf("Describe, always throttled for 200ms: %v after %s and %d calls; want ErrThrottled after more than 300ms and 2 or 3 calls (3 on a machine that keeps time)",
			err, waited.Round(10*time.Millisecond), calls)
	}
	inner.set(0, &adapters.Throttle{RetryAfter: time.Second})
	t0 = time.Now()
	// At once: well short of the second's retry-after, however busy the machine.
	if _, err := e.Describe(context.Background(), tg, adapters.Ref{ID: "y"}, every(time.Second, time.Now())); !errors.Is(err, adapters.ErrThrottled) || time.Since(t0) > 500*time.Millisecond {
		t.Errorf("Describe throttled for longer than Options.Wait: %v after %s; want ErrThrottled at once", err, time.Since(t0))
	}
}

// A start without a key is the first reading of its execution: submitted, as of the start.
func TestStartIsAFirstReading(t *testing.T) {
	inner := &scripted{state: adapters.Working}
	e := newStack(inner, Options{Size: 10})
	ctx, p := context.Background(), every(time.Second, time.Now())
	r, _ := e.Start(ctx, tg, adapters.StartRequest{}, p)
	st, err := e.Describe(ctx, tg, r, p)
	if err != nil || st.State != adapters.Submitted || st.ReadAt.IsZero() || inner.describes.Load() != 0 {
		t.Errorf("a read right after the start: %+v, %v, %d engine calls; want submitted, with its time, from the start", st, err, inner.describes.Load())
	}
	e = newStack(inner, Options{Size: 10})
	e.Start(ctx, tg, adapters.StartRequest{Key: "k"}, p)
	if st, _ := e.Describe(ctx, tg, adapters.Ref{ID: "started"}, p); st.State != adapters.Working || inner.describes.Load() != 1 {
		t.Errorf("a read after a keyed start (which may find an older execution) was not read from the engine: %+v", st)
	}
}

// Wait polls at the task's pace until the end, waiting through "not found" at first (a start not
// visible yet), then reads the outcome.
func TestWaitPollsAtThePace(t *testing.T) {
	inner := &scripted{err: adapters.ErrNotFound}
	e := newStack(inner, Options{Size: 10})
	ctx, p := context.Background(), every(50*time.Millisecond, time.Now())
	go func() {
		time.Sleep(100 * time.Millisecond)
		inner.set(adapters.Working, nil)
		time.Sleep(300 * time.Millisecond)
		inner.set(adapters.Succeeded, nil)
	}()
	t0 := time.Now()
	o, err := e.Wait(ctx, tg, ref, p)
	if err != nil || o.State != adapters.Succeeded {
		t.Fatalf("Wait: %+v, %v", o, err)
	}
	took := time.Since(t0)
	// Not found for 100ms at 200ms apart, then one read per 50ms for 300ms: about 8 reads.
	if n := inner.describes.Load(); n < 5 || n > 12 || took > 600*time.Millisecond {
		t.Errorf("Wait over %s made %d engine reads, want about 8 (one per 50ms of the curve)", took.Round(time.Millisecond), n)
	}
	if inner.outcome.Load() != 1 {
		t.Errorf("Wait read the outcome %d times, want once", inner.outcome.Load())
	}
}

func TestReadsAreCountedByHowTheyWereServed(t *testing.T) {
	inner := &scripted{state: adapters.Working, delay: 50 * time.Millisecond}
	e := newStack(inner, Options{Size: 10, Fresh: time.Minute})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Describe(ctx, tg, ref, pace.Pace{})
		}()
	}
	wg.Wait()
	c := e.Counts().Describe
	if c.Engine != uint64(inner.describes.Load()) || c.Engine+c.Shared+c.Fresh != 50 || c.Cached != 0 {
		t.Fatalf("50 concurrent reads of a running execution, %d engine calls: counted %+v", inner.describes.Load(), c)
	}
	inner.set(adapters.Succeeded, nil)
	e.Describe(ctx, tg, adapters.Ref{ID: "y"}, pace.Pace{})
	e.Describe(ctx, tg, adapters.Ref{ID: "y"}, pace.Pace{})
	e.Outcome(ctx, tg, adapters.Ref{ID: "y"})
	e.Outcome(ctx, tg, adapters.Ref{ID: "y"})
	got := e.Counts()
	if d := got.Describe; d.Engine != c.Engine+1 || d.Cached != 1 || d.Fresh != c.Fresh {
		t.Errorf("an ended execution read twice: %+v after %+v", d, c)
	}
	if o := got.Outcome; o != (Served{Engine: 1, Cached: 1}) {
		t.Errorf("an outcome read twice: %+v", o)
	}
}

func TestEndsAreToldOnce(t *testing.T) {
	inner := &scripted{state: adapters.Failed}
	var told []string
	e := newStack(inner, Options{Size: 10, Ended: func(_ context.Context, _ adapters.Target, r adapters.Ref, s adapters.State) {
		told = append(told, r.ID+" "+s.String())
	}})
	ctx := context.Background()
	// Read, then its outcome, twice: told once.
	for range 2 {
		e.Describe(ctx, tg, adapters.Ref{ID: "a"}, pace.Pace{})
		e.Outcome(ctx, tg, adapters.Ref{ID: "a"})
	}
	// Waited for, then read: told once, and the outcome is kept.
	e.Wait(ctx, tg, adapters.Ref{ID: "b"}, pace.Pace{})
	e.Cancel(ctx, tg, adapters.Ref{ID: "b"}, "too late")
	e.Answer(ctx, tg, adapters.Ref{ID: "b"}, "q", adapters.Answer{Action: adapters.ActionDecline})
	e.Describe(ctx, tg, adapters.Ref{ID: "b"}, pace.Pace{})
	e.Outcome(ctx, tg, adapters.Ref{ID: "b"})
	if want := []string{"a failed", "b failed"}; !slices.Equal(told, want) {
		t.Fatalf("told %q, want %q", told, want)
	}
	if n := inner.outcome.Load(); n != 2 {
		t.Fatalf("%d outcome calls, want 2 (one each: a late cancel or answer keeps it)", n)
	}
}

// A call that panics fails every read that shares it, instead of leaving them waiting.
func TestAPanickingCallFailsItsReads(t *testing.T) {
	var f flight[int]
	release := make(chan struct{})
	joined := make(chan error)
	go func() {
		for { // join once the first call is in flight
			f.mu.Lock()
			inFlight := len(f.calls) == 1
			f.mu.Unlock()
			if inFlight {
				break
			}
			time.Sleep(time.Millisecond)
		}
		_, err, own, _ := f.do(context.Background(), adapters.ExecKey{Target: "t", ID: "k"}, func() (int, error) { return 0, nil })
		if own {
			err = errors.New("the second read made a call of its own")
		}
		joined <- err
	}()
	go func() { time.Sleep(20 * time.Millisecond); close(release) }()
	_, err, own, answered := f.do(context.Background(), adapters.ExecKey{Target: "t", ID: "k"}, func() (int, error) {
		<-release
		panic("engine bug")
	})
	const want = "coalesce: the engine call panicked: engine bug"
	if err == nil || err.Error() != want || !own || !answered {
		t.Errorf("the read that made the call: %v (own %v), want %q", err, own, want)
	}
	if err := <-joined; err == nil || err.Error() != want {
		t.Errorf("the read that shared it: %v, want %q", err, want)
	}
}

// hangingEngine never answers Describe, as an engine behind a connection gone silent.
type hangingEngine struct {
	adapters.Conn
	calls atomic.Int64
}

func (h *hangingEngine) Describe(ctx context.Context, _ adapters.Target, _ adapters.Ref) (adapters.Status, error) {
	h.calls.Add(1)
	<-ctx.Done()
	return adapters.Status{}, ctx.Err()
}

// TestASharedCallEndsWithinItsBound: a shared call, detached from its callers, ends at its own
// bound when the engine never answers, and the next read asks the engine again instead of
// waiting on it. It had no bound: the soak's stalled connections (test/soak) held such calls for
// as long as the connection lived.
func TestASharedCallEndsWithinItsBound(t *testing.T) {
	defer func(d time.Duration) { sharedFor = d }(sharedFor)
	sharedFor = 200 * time.Millisecond
	inner := &hangingEngine{}
	e := newStack(inner, Options{Size: 10, Fresh: time.Minute})
	tg, r := adapters.Target{Name: "t"}, adapters.Ref{ID: "x"}
	done := make(chan error, 1)
	go func() {
		_, err := e.Describe(context.Background(), tg, r, pace.Pace{}) // a caller with no deadline of its own
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Describe the engine never answered: %v, want the bound's context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a Describe the engine never answered did not end within 10 s")
	}
	e.Describe(context.Background(), tg, r, pace.Pace{})
	if n := inner.calls.Load(); n != 2 {
		t.Errorf("the read after a call that ended at its bound made %d engine calls in all, want 2", n)
	}
}

// idsSeen is scripted that remembers the id strings its reads were made with.
type idsSeen struct {
	*scripted
	mu  sync.Mutex
	ids []*byte
}

func (s *idsSeen) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	s.mu.Lock()
	s.ids = append(s.ids, unsafe.StringData(r.ID))
	s.mu.Unlock()
	return s.scripted.Describe(ctx, t, r)
}

// A task's id is kept once: every read of it, each with its own copy of the id (from its token),
// is made with the copy its first reading kept.
func TestReadsKeepTheFirstCopyOfAnID(t *testing.T) {
	inner := &idsSeen{scripted: &scripted{state: adapters.Working}}
	e := newStack(inner, Options{Size: 10, Fresh: -1})
	var copies []string
	for range 3 {
		r := adapters.Ref{ID: strings.Clone("exec-1")}
		copies = append(copies, r.ID)
		if _, err := e.Describe(t.Context(), tg, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	inner.mu.Lock()
	defer inner.mu.Unlock()
	kept := unsafe.StringData(copies[0])
	if len(inner.ids) != 3 || slices.ContainsFunc(inner.ids, func(id *byte) bool { return id != kept }) {
		t.Errorf("three reads with three copies of an id were made with %v, want each with the first's, %p", inner.ids, kept)
	}
}
