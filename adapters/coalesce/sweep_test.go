package coalesce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/adapters/pace"
)

// pointReads counts the Describe calls that reach an engine, and throttles them all when told to.
type pointReads struct {
	*memengine.Engine
	describes, outcomes atomic.Int64
	throttle            atomic.Bool
}

func (p *pointReads) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	p.outcomes.Add(1)
	return p.Engine.Outcome(ctx, t, r)
}

func (p *pointReads) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	p.describes.Add(1)
	if p.throttle.Load() {
		return adapters.Status{}, &adapters.Throttle{RetryAfter: 5 * time.Second}
	}
	return p.Engine.Describe(ctx, t, r)
}

// sweeping is an Engine over memengine whose Readings sweep every 100 ms, the Readings, and the
// engine under them.
func sweeping(t *testing.T, o Options) (*adapters.Engine, *Readings, *pointReads) {
	t.Helper()
	mem := &pointReads{Engine: memengine.New(memengine.Options{})}
	o.SweepEvery = 100 * time.Millisecond
	e, readings := sweepingOver(t, mem, o)
	return e, readings, mem
}

// sweepingOver is an Engine over conn whose Readings, made with o, sweep, and the Readings.
func sweepingOver(t *testing.T, conn adapters.Conn, o Options) (*adapters.Engine, *Readings) {
	t.Helper()
	readings := New(o)
	e := adapters.NewEngine(conn, adapters.EngineOptions{Readings: readings})
	readings.Sweeps(e)
	t.Cleanup(readings.Close)
	return e, readings
}

func startRunning(t *testing.T, mem *pointReads, job adapters.Target, n int) []adapters.Ref {
	t.Helper()
	refs := make([]adapters.Ref, n)
	for i := range refs {
		r, err := mem.Start(context.Background(), job, adapters.StartRequest{Input: json.RawMessage(`{"seconds":60}`)})
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = r
	}
	return refs
}

func TestSweepsKeepReadingsFreshAPageAtATime(t *testing.T) {
	ended := make(chan adapters.State, 10)
	e, readings, mem := sweeping(t, Options{Size: 1000, Fresh: time.Hour, Ended: func(_ context.Context, _ adapters.Target, _ adapters.Ref, s adapters.State) { ended <- s }})
	job := memengine.Job(memengine.Echo, 0)
	refs := startRunning(t, mem, job, 150)
	ctx := context.Background()
	for _, r := range refs {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	read := time.Now()
	time.Sleep(600 * time.Millisecond)
	if n := mem.describes.Load(); n != 150 {
		t.Fatalf("%d point reads for 150 executions read once each and then swept; want 150", n)
	}
	c := readings.SweepCounts()
	if c.Followed != 150 || c.Rounds < 3 || c.Pages < 2*(c.Rounds-1) || c.Confirms != 0 {
		t.Fatalf("sweep counts %+v: want 150 followed, two pages (150 refs of 100 a page) for each of at least three rounds, no confirmation", c)
	}
	st, err := e.Describe(ctx, job, refs[7], pace.Pace{})
	if err != nil || st.State != adapters.Working || !st.ReadAt.After(read.Add(300*time.Millisecond)) {
		t.Fatalf("Describe after sweeps: %+v, %v; want working, true as of a sweep after the first read", st, err)
	}

	changed := readings.Changes(job, refs[42])
	if err := mem.Cancel(ctx, job, refs[42], "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(2 * time.Second):
		t.Fatal("the end of a swept execution was not noticed within 2 s")
	}
	if s := <-ended; s != adapters.Cancelled {
		t.Fatalf("Ended told %v, want cancelled", s)
	}
	if st, err := e.Describe(ctx, job, refs[42], pace.Pace{}); err != nil || st.State != adapters.Cancelled {
		t.Fatalf("Describe after the end was swept: %+v, %v", st, err)
	}
	for deadline := time.Now().Add(2 * time.Second); readings.SweepCounts().Followed != 149 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the next round forgets it
	}
	if c := readings.SweepCounts(); c.Confirms != 1 || c.Followed != 149 {
		t.Fatalf("sweep counts %+v after one end: want one confirmation and 149 followed", c)
	}
}

func TestAReadWithNoReadingIsAnsweredByTheNextSweep(t *testing.T) {
	e, _, mem := sweeping(t, Options{Size: 100, Fresh: time.Hour, Wait: 3 * time.Second})
	job := memengine.Job(memengine.Echo, 0)
	r := startRunning(t, mem, job, 1)[0]
	mem.throttle.Store(true)
	begin := time.Now()
	st, err := e.Describe(context.Background(), job, r, pace.Pace{})
	if err != nil || st.State != adapters.Working {
		t.Fatalf("Describe with every point read throttled: %+v, %v; want working, from a sweep", st, err)
	}
	if took := time.Since(begin); took > time.Second {
		t.Fatalf("a read with no reading took %v; want the next sweep's, well under a second", took)
	}
}

// A read with no reading, whose point reads are all throttled, of an execution that the listing
// does not show running (it ended, or it never was: an id may name nothing) is not confirmed by a
// sweep, which reads no outcome of an execution it never saw running: its reader's own read tells,
// once the engine answers it again.
func TestAnExecutionNeverSeenRunningIsNotConfirmed(t *testing.T) {
	e, readings, mem := sweeping(t, Options{Size: 100, Fresh: time.Hour, Wait: time.Second})
	job := memengine.Job(memengine.Echo, 0)
	r := startRunning(t, mem, job, 1)[0]
	if err := mem.Cancel(context.Background(), job, r, "test"); err != nil {
		t.Fatal(err)
	}
	mem.throttle.Store(true)
	for _, ref := range []adapters.Ref{r, {ID: "made-up"}} {
		if st, err := e.Describe(context.Background(), job, ref, pace.Pace{}); !errors.Is(err, adapters.ErrThrottled) {
			t.Fatalf("Describe of %s with every point read throttled: %+v, %v; want the throttle, after its wait", ref.ID, st, err)
		}
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c := readings.SweepCounts()
		if c.Confirms != 0 || mem.outcomes.Load() != 0 {
			t.Fatalf("sweep counts %+v and %d outcome reads; want none confirmed", c, mem.outcomes.Load())
		}
		if c.Followed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweep counts %+v: still followed 2 s after the listings showed them not running", c)
		}
	}
	mem.throttle.Store(false)
	if st, err := e.Describe(context.Background(), job, r, pace.Pace{}); err != nil || st.State != adapters.Cancelled {
		t.Fatalf("Describe once the engine answers: %+v, %v; want cancelled", st, err)
	}
}

func TestSweepsForgetWhatNobodyAsksAbout(t *testing.T) {
	e, readings, mem := sweeping(t, Options{Size: 100, Fresh: time.Hour, Interest: 200 * time.Millisecond})
	job := memengine.Job(memengine.Echo, 0)
	for _, r := range startRunning(t, mem, job, 3) {
		if _, err := e.Describe(context.Background(), job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	pages := readings.SweepCounts().Pages
	time.Sleep(300 * time.Millisecond)
	if c := readings.SweepCounts(); c.Followed != 0 || c.Pages != pages {
		t.Fatalf("sweep counts %+v, %d pages before: want nothing followed and no page read once nobody asks", c, pages)
	}
}

// outcomeReads counts the Outcome calls that reach an engine.
type outcomeReads struct {
	*pointReads
	outcomes atomic.Int64
}

func (o *outcomeReads) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	o.outcomes.Add(1)
	return o.pointReads.Outcome(ctx, t, r)
}

// readerKey marks the contexts of the reads in TestAnEndCostsOneRead.
type readerKey struct{}

// An end that a sweep finds costs one engine read: the outcome, which confirms it, wakes whoever
// waits, answers the reads of the task's status and result after it, and is told to Ended with
// what the sweep carried of the reader's context.
func TestAnEndCostsOneRead(t *testing.T) {
	mem := &outcomeReads{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}}
	var told atomic.Int64
	e, readings := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond,
		Carry: func(ctx context.Context) context.Context {
			return context.WithValue(context.Background(), readerKey{}, ctx.Value(readerKey{}))
		},
		Ended: func(ctx context.Context, _ adapters.Target, _ adapters.Ref, _ adapters.State) {
			if ctx.Value(readerKey{}) == "alice" {
				told.Add(1)
			}
		}})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	refs := startRunning(t, mem.pointReads, job, 20)
	var changes []<-chan struct{}
	for _, r := range refs {
		if _, err := e.Describe(context.WithValue(ctx, readerKey{}, "alice"), job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
		changes = append(changes, readings.Changes(job, r))
	}
	for _, r := range refs {
		if err := mem.Cancel(ctx, job, r, "test"); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range changes {
		select {
		case <-c:
		case <-time.After(2 * time.Second):
			t.Fatalf("the end of execution %d was not told within 2 s", i)
		}
	}
	for _, r := range refs {
		st, err := e.Describe(ctx, job, r, pace.Pace{})
		if err != nil || st.State != adapters.Cancelled || st.Started.IsZero() || st.Updated.Before(st.Started) {
			t.Fatalf("Describe after a sweep confirmed the end: %+v, %v; want cancelled, started and ended", st, err)
		}
		o, err := e.Outcome(ctx, job, r)
		if err != nil || o.State != adapters.Cancelled || !reflect.DeepEqual(o.Status, st) {
			t.Fatalf("Outcome after a sweep confirmed the end: %+v, %v; want cancelled, with the status Describe answers (%+v)", o, err, st)
		}
	}
	if d, o := mem.describes.Load(), mem.outcomes.Load(); d != 20 || o != 20 {
		t.Errorf("%d point reads and %d outcome reads for 20 executions read once, then ended; want 20 and 20", d, o)
	}
	if n := told.Load(); n != 20 {
		t.Errorf("Ended told %d ends with the reader's values, want 20", n)
	}
}

// listings counts the listings of running executions and of ends that reach an engine, and keeps
// how many refs the latest listing of the running named; its point reads are throttled when told.
type listings struct {
	*memengine.Engine
	running, ends, named atomic.Int64
	throttle             atomic.Bool
}

func (l *listings) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	if l.throttle.Load() {
		return adapters.Status{}, &adapters.Throttle{RetryAfter: 5 * time.Second}
	}
	return l.Engine.Describe(ctx, t, r)
}

func (l *listings) Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	l.running.Add(1)
	l.named.Store(int64(len(o.Refs)))
	return l.Engine.Sweep(ctx, o)
}

func (l *listings) SweepEnded(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	l.ends.Add(1)
	return l.Engine.SweepEnded(ctx, o)
}

// runningOnly is an engine that lists running executions, not ends.
type runningOnly struct {
	adapters.Conn
	sweeper driver.Sweeper
}

func (r runningOnly) SweepGroup(t adapters.Target) string { return r.sweeper.SweepGroup(t) }

func (r runningOnly) Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	return r.sweeper.Sweep(ctx, o)
}

// Where the engine lists ends, sweeps list the running executions once, then only the ends since
// the last round, and still keep the readings fresh and find the ends; where it does not, they
// list the running every round.
func TestSweepsListEndsOnceTheRunningAreKnown(t *testing.T) {
	for _, ends := range []bool{true, false} {
		mem := &listings{Engine: memengine.New(memengine.Options{})}
		var conn adapters.Conn = mem
		if !ends {
			conn = runningOnly{Conn: mem, sweeper: mem}
		}
		e, readings := sweepingOver(t, conn, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond})
		ctx := context.Background()
		job := memengine.Job(memengine.Echo, 0)
		var refs []adapters.Ref
		for range 5 {
			r, err := mem.Start(ctx, job, adapters.StartRequest{Input: json.RawMessage(`{"seconds":60}`)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
				t.Fatal(err)
			}
			refs = append(refs, r)
		}
		read := time.Now()
		time.Sleep(400 * time.Millisecond)
		running, endSweeps := mem.running.Load(), mem.ends.Load()
		if ends && (running != 1 || endSweeps < 3) || !ends && (running < 4 || endSweeps != 0) {
			t.Errorf("ends listed: %v; %d listings of the running and %d of ends in 8 rounds", ends, running, endSweeps)
		}
		if st, err := e.Describe(ctx, job, refs[1], pace.Pace{}); err != nil || st.State != adapters.Working || !st.ReadAt.After(read.Add(200*time.Millisecond)) {
			t.Errorf("ends listed: %v; Describe after sweeps: %+v, %v; want working, true as of a sweep after the first read", ends, st, err)
		}
		changed := readings.Changes(job, refs[3])
		if err := mem.Cancel(ctx, job, refs[3], "test"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(2 * time.Second):
			t.Fatalf("ends listed: %v; the end of a swept execution was not noticed within 2 s", ends)
		}
		if st, err := e.Describe(ctx, job, refs[3], pace.Pace{}); err != nil || st.State != adapters.Cancelled {
			t.Errorf("ends listed: %v; Describe after the end was swept: %+v, %v", ends, st, err)
		}
		if ends && mem.running.Load() != 1 {
			t.Errorf("%d listings of the running, want still 1", mem.running.Load())
		}
	}
}

// An execution followed once the others are known running (a first poll, on a replica that never
// read it, that the budget refused) is listed by id beside the ends: the listing of the running
// names it alone, and the poll is answered from it.
func TestANewcomerIsListedAlone(t *testing.T) {
	mem := &listings{Engine: memengine.New(memengine.Options{})}
	e, _ := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	var refs []adapters.Ref
	for range 6 {
		r, err := mem.Start(ctx, job, adapters.StartRequest{Input: json.RawMessage(`{"seconds":60}`)})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	for _, r := range refs[:5] {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if mem.running.Load() != 1 || mem.ends.Load() < 2 {
		t.Fatalf("%d listings of the running and %d of ends, want 1 and then ends only", mem.running.Load(), mem.ends.Load())
	}
	mem.throttle.Store(true)
	asked := time.Now()
	st, err := e.Describe(ctx, job, refs[5], pace.Pace{})
	if err != nil || st.State != adapters.Working || !st.ReadAt.After(asked) {
		t.Errorf("the newcomer: %+v, %v; want working, true as of a listing after it was asked about", st, err)
	}
	if mem.running.Load() != 2 || mem.named.Load() != 1 {
		t.Errorf("after a newcomer: %d listings of the running, the latest naming %d refs; want 2, naming the newcomer alone", mem.running.Load(), mem.named.Load())
	}
}

// heldOutcomes is an engine whose Outcome calls wait until release is closed, and are counted.
type heldOutcomes struct {
	*pointReads
	release  chan struct{}
	outcomes atomic.Int64
}

func (h *heldOutcomes) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	h.outcomes.Add(1)
	select {
	case <-h.release:
	case <-ctx.Done():
		return adapters.Outcome{}, ctx.Err()
	}
	return h.pointReads.Outcome(ctx, t, r)
}

// An outcome read that waits (for its budget's tokens, through the engine's throttling) holds up
// no round: the other executions' readings stay fresh meanwhile, and the end is confirmed once,
// however many rounds pass.
func TestAConfirmationHoldsUpNoRound(t *testing.T) {
	mem := &heldOutcomes{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}, release: make(chan struct{})}
	e, readings := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	refs := startRunning(t, mem.pointReads, job, 10)
	for _, r := range refs {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	ended := readings.Changes(job, refs[0])
	if err := mem.Cancel(ctx, job, refs[0], "test"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // ten rounds while the confirmation waits
	if st, err := e.Describe(ctx, job, refs[5], pace.Pace{}); err != nil || time.Since(st.ReadAt) > 200*time.Millisecond {
		t.Fatalf("a running execution while another's end waited to be confirmed: %+v, %v; want a reading of the last rounds", st, err)
	}
	if n := mem.outcomes.Load(); n != 1 {
		t.Fatalf("%d outcome reads of one end over ten rounds, want 1", n)
	}
	close(mem.release)
	select {
	case <-ended:
	case <-time.After(time.Second):
		t.Fatal("the end was not told once its outcome was read")
	}
	if st, err := e.Describe(ctx, job, refs[0], pace.Pace{}); err != nil || st.State != adapters.Cancelled {
		t.Fatalf("Describe after the confirmation: %+v, %v; want cancelled", st, err)
	}
}

// Confirmations read few outcomes at a time, that a round's listing waits for few tokens; more
// where listings spend a budget of their own (Options.ListsApart).
func TestConfirmationsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		apart bool
		want  int64
	}{{false, confirmsAtOnce}, {true, confirmsApart}} {
		mem := &heldOutcomes{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}, release: make(chan struct{})}
		e, readings := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: 20 * time.Millisecond, ListsApart: tc.apart})
		ctx := context.Background()
		job := memengine.Job(memengine.Echo, 0)
		refs := startRunning(t, mem.pointReads, job, 12)
		for _, r := range refs {
			if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
				t.Fatal(err)
			}
			readings.Changes(job, r)
			if err := mem.Cancel(ctx, job, r, "test"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(300 * time.Millisecond) // rounds enough to list every end
		if n := mem.outcomes.Load(); n != tc.want {
			t.Errorf("listings apart %v: %d outcomes read at once of 12 ends, want %d", tc.apart, n, tc.want)
		}
		close(mem.release)
	}
}

// failingListings is an engine that lists running executions only, and whose listings and first
// outcome reads fail as an engine out of reach does, when told to.
type failingListings struct {
	*memengine.Engine
	listingsFail      atomic.Bool
	failing, outcomes atomic.Int64
}

var errReset = fmt.Errorf("%w: connection reset", adapters.ErrUnavailable)

func (f *failingListings) Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	if f.listingsFail.Load() {
		return nil, "", errReset
	}
	return f.Engine.Sweep(ctx, o)
}

func (f *failingListings) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	f.outcomes.Add(1)
	if f.failing.Add(-1) >= 0 {
		f.listingsFail.Store(true) // the engine goes out of reach as the end is confirmed
		return adapters.Outcome{}, errReset
	}
	return f.Engine.Outcome(ctx, t, r)
}

// An end whose outcome the engine cannot give for now is read again until it can, without a
// listing to show it again: the listing that told it is enough.
func TestAConfirmationIsTriedAgain(t *testing.T) {
	mem := &failingListings{Engine: memengine.New(memengine.Options{})}
	e, readings := sweepingOver(t, runningOnly{Conn: mem, sweeper: mem}, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	refs := startRunning(t, &pointReads{Engine: mem.Engine}, job, 3)
	for _, r := range refs {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // listed running
	mem.failing.Store(2)
	ended := readings.Changes(job, refs[0])
	if err := mem.Cancel(ctx, job, refs[0], "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(4 * time.Second):
		t.Fatal("an end whose outcome failed twice, with no listing since, was not told within 4 s")
	}
	if n := mem.outcomes.Load(); n != 3 {
		t.Errorf("%d outcome reads, want 3: two failed, one told the end", n)
	}
}

// Watchers of executions the cache no longer holds, whose waiters may have left, do not pile up:
// they are woken and forgotten as the watchers double; those of cached executions stay.
func TestWatchersOfUncachedExecutionsArePruned(t *testing.T) {
	readings := New(Options{Size: 10, Fresh: time.Hour})
	job := memengine.Job(memengine.Echo, 0)
	kept := adapters.Ref{ID: "kept"}
	readings.Started(context.Background(), job, kept, adapters.StartRequest{}, pace.Pace{})
	keptChanges := readings.Changes(job, kept)
	first := readings.Changes(job, adapters.Ref{ID: "gone-0"})
	for i := 1; i < 10*minWatchers; i++ {
		readings.Changes(job, adapters.Ref{ID: fmt.Sprint("gone-", i)})
	}
	if n := len(readings.watchers); n > 2*minWatchers {
		t.Errorf("%d watchers after 10,240 of uncached executions, want at most %d", n, 2*minWatchers)
	}
	select {
	case <-first:
	default:
		t.Error("the first uncached execution's watcher was not woken when pruned")
	}
	select {
	case <-keptChanges:
		t.Error("the watcher of a cached execution was woken, with no change")
	default:
	}
}

// gatedSweeps lists every execution asked about as running, records the targets it lists, and
// holds its first listing until the gate opens, as a listing that waits for a read budget's token.
type gatedSweeps struct {
	*pointReads
	gate, held chan struct{}
	mu         sync.Mutex
	listed     []string
}

// SweepGroup makes a group of each target, as Step Functions does of each state machine.
func (g *gatedSweeps) SweepGroup(t adapters.Target) string { return t.Name }

func (g *gatedSweeps) Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	g.mu.Lock()
	g.listed = append(g.listed, o.Targets[0].Name)
	first := len(g.listed) == 1
	g.mu.Unlock()
	if first {
		close(g.held)
		<-g.gate
	}
	listed := make([]adapters.Listed, len(o.Refs))
	for i, r := range o.Refs {
		listed[i] = adapters.Listed{Ref: r, Status: adapters.Status{State: adapters.Working}}
	}
	return listed, "", nil
}

// A read with nothing to answer with has its target's group listed next, before the other groups
// of the round under way: it waits for the listing in flight and its own, not for a whole round's.
func TestAReadWithNothingToAnswerIsListedNext(t *testing.T) {
	mem := &pointReads{Engine: memengine.New(memengine.Options{})}
	g := &gatedSweeps{pointReads: mem, gate: make(chan struct{}), held: make(chan struct{})}
	e, readings := sweepingOver(t, g, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond, Wait: 5 * time.Second})
	ctx := context.Background()
	var targets []adapters.Target
	for _, program := range []string{memengine.Echo, memengine.Fail, memengine.Ask, memengine.AskTwo, memengine.Steps} {
		targets = append(targets, memengine.Job(program, 0))
		readings.follow(ctx, targets[len(targets)-1], adapters.Ref{ID: "followed"}, pace.Pace{}, false, true)
	}
	<-g.held
	g.mu.Lock()
	first := g.listed[0]
	g.mu.Unlock()
	want := targets[len(targets)-1]
	if want.Name == first {
		want = targets[0]
	}
	mem.throttle.Store(true)
	answered := make(chan error, 1)
	go func() {
		st, err := e.Describe(ctx, want, adapters.Ref{ID: "unread"}, pace.Pace{})
		if err == nil && st.State != adapters.Working {
			err = fmt.Errorf("state %v, want working", st.State)
		}
		answered <- err
	}()
	for asked := false; !asked; time.Sleep(time.Millisecond) {
		readings.sweeps.mu.Lock()
		asked = readings.sweeps.wanted[want.Name]
		readings.sweeps.mu.Unlock()
	}
	close(g.gate)
	if err := <-answered; err != nil {
		t.Fatalf("Describe of an execution with no reading, its point reads throttled: %v; want it answered by the sweep", err)
	}
	g.mu.Lock()
	listed := slices.Clone(g.listed)
	g.mu.Unlock()
	if listed[1] != want.Name {
		t.Errorf("listings %v after a read of %s found nothing to answer with while %s was listed: want %s next", listed, want.Name, first, want.Name)
	}
}

// A reading that found no execution answers the reads that follow for as long as a running
// reading would: an id that names nothing, asked about again and again, costs one engine read.
func TestNotFoundIsAReadingToo(t *testing.T) {
	e, _, mem := sweeping(t, Options{Size: 100, Fresh: time.Hour})
	job := memengine.Job(memengine.Echo, 0)
	for range 5 {
		if _, err := e.Describe(context.Background(), job, adapters.Ref{ID: "names-nothing"}, pace.Pace{}); !errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("Describe of an execution that does not exist: %v, want not found", err)
		}
	}
	if n := mem.describes.Load(); n != 1 {
		t.Fatalf("%d engine reads for five reads of one missing execution, want 1", n)
	}
}
