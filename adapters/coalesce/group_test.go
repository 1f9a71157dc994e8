package coalesce

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/adapters/pace"
)

// named is t under a name of its own, the i-th.
func named(t adapters.Target, i int) adapters.Target {
	t.Name += "-" + strconv.Itoa(i)
	return t
}

// groupListings records the targets of each listing that reaches an engine.
type groupListings struct {
	*pointReads
	mu     sync.Mutex
	listed [][]string
}

func (g *groupListings) Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	var names []string
	for _, t := range o.Targets {
		names = append(names, t.Name)
	}
	g.mu.Lock()
	g.listed = append(g.listed, names)
	g.mu.Unlock()
	return g.Engine.Sweep(ctx, o)
}

// A round lists the followed executions of every target of a group in one call: its cost follows
// the groups, not the targets.
func TestARoundListsAGroupInOneCall(t *testing.T) {
	mem := &groupListings{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}}
	e, readings := sweepingOver(t, runningOnly{Conn: mem, sweeper: mem}, Options{Size: 100, Fresh: time.Hour, SweepEvery: 50 * time.Millisecond})
	ctx := context.Background()
	var want []string
	for i := range 5 {
		job := named(memengine.Job(memengine.Echo, 0), i) // five targets of one program
		want = append(want, job.Name)
		for _, r := range startRunning(t, mem.pointReads, job, 3) {
			if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	slices.Sort(want)
	deadline := time.Now().Add(5 * time.Second)
	for readings.SweepCounts().Rounds < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	if len(mem.listed) == 0 {
		t.Fatal("no listing in three rounds")
	}
	for _, names := range mem.listed {
		if !slices.Equal(names, want) {
			t.Fatalf("listings %v: want each of the five targets %v in one call", mem.listed, want)
		}
	}
	if c := readings.SweepCounts(); len(c.Groups) != 1 || c.Groups[""].Followed != 15 || c.Groups[""].ByReads {
		t.Errorf("sweep groups %+v: want one, listed, following 15 executions", c.Groups)
	}
}

// pagedListings lists a group in as many pages as asked, as a state machine that runs thousands of
// executions of others is listed.
type pagedListings struct {
	*pointReads
	pages, calls atomic.Int64
}

func (p *pagedListings) SweepGroup(t adapters.Target) string { return t.Name }

func (p *pagedListings) Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error) {
	p.calls.Add(1)
	n, _ := strconv.Atoi(o.Page)
	if n+1 < int(p.pages.Load()) {
		return nil, strconv.Itoa(n + 1), nil
	}
	listed, _, err := p.Engine.Sweep(ctx, adapters.SweepOptions{Targets: o.Targets, Refs: o.Refs})
	return listed, "", err
}

// A group whose listing takes more calls than it has executions followed is left to their own
// reads, and says so; one whose listing is cheaper is listed.
func TestAGroupCheaperReadThanListedIsLeftToReads(t *testing.T) {
	mem := &pagedListings{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}}
	mem.pages.Store(5)
	e, readings := sweepingOver(t, runningOnly{Conn: mem, sweeper: mem}, Options{Size: 100, Fresh: time.Hour, SweepEvery: 20 * time.Millisecond})
	ctx := context.Background()
	few, many := named(memengine.Job(memengine.Echo, 0), 1), named(memengine.Job(memengine.Echo, 0), 2)
	for _, job := range []adapters.Target{few, many} {
		n := 2
		if job.Name == many.Name {
			n = 8
		}
		for _, r := range startRunning(t, mem.pointReads, job, n) {
			if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for readings.SweepCounts().Rounds < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	calls := mem.calls.Load()
	rounds := readings.SweepCounts().Rounds
	for readings.SweepCounts().Rounds < rounds+5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	c := readings.SweepCounts()
	if g := c.Groups[few.Name]; !g.ByReads || g.Pages != 5 || g.Followed != 2 {
		t.Errorf("the group of 2 executions listed in 5 pages: %+v, want it left to reads", g)
	}
	if g := c.Groups[many.Name]; g.ByReads || g.Pages != 5 || g.Followed != 8 {
		t.Errorf("the group of 8 executions listed in 5 pages: %+v, want it listed", g)
	}
	if got, want := mem.calls.Load()-calls, int64(5*(c.Rounds-rounds)); got > want {
		t.Errorf("%d listing calls in %d rounds: want 5 a round at most, of the group listed alone", got, c.Rounds-rounds)
	}
}

// An end that a sweep finds of an execution that nobody waits on is read when it is next asked
// about, not before: a replica that only answers polls pays for the ends its clients ask about.
func TestAnEndNobodyWaitsOnIsReadWhenAsked(t *testing.T) {
	mem := &outcomeReads{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}}
	var told atomic.Int64
	e, readings := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: 20 * time.Millisecond,
		Ended: func(context.Context, adapters.Target, adapters.Ref, adapters.State) { told.Add(1) }})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	refs := startRunning(t, mem.pointReads, job, 5)
	for _, r := range refs {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
		if err := mem.Cancel(ctx, job, r, "test"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for readings.SweepCounts().Followed > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c := readings.SweepCounts(); c.Followed != 0 || mem.outcomes.Load() != 0 || told.Load() != 0 {
		t.Fatalf("after a sweep found 5 ends nobody waits on: %d followed, %d outcomes read, %d told; want none of each", c.Followed, mem.outcomes.Load(), told.Load())
	}
	for range 3 {
		st, err := e.Describe(ctx, job, refs[0], pace.Pace{})
		if err != nil || st.State != adapters.Cancelled {
			t.Fatalf("Describe of an end a sweep found: %+v, %v; want cancelled", st, err)
		}
	}
	if n, d := mem.outcomes.Load(), mem.describes.Load(); n != 1 || d != 5 {
		t.Errorf("three reads of one end a sweep found: %d outcomes and %d point reads in all, want 1 and the first 5", n, d)
	}
	if told.Load() != 1 {
		t.Errorf("Ended told %d times, want once", told.Load())
	}
}

// notices is an engine whose event source tells of ends as the test says.
type notices struct {
	*pointReads
	ch chan []adapters.Listed
}

func (n *notices) Notices(ctx context.Context, heard func(time.Time, []adapters.Listed)) error {
	for {
		at := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case changed := <-n.ch:
			heard(at, changed)
		case <-time.After(10 * time.Millisecond):
			heard(at, nil)
		}
	}
}

// An end that the event source tells is confirmed and told at once, without a sweep; and every
// running reading is true as of the last receive.
func TestANoticeConfirmsAnEnd(t *testing.T) {
	mem := &notices{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}, ch: make(chan []adapters.Listed)}
	e, readings := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: time.Hour})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	refs := startRunning(t, mem.pointReads, job, 2)
	for _, r := range refs {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	st, err := e.Describe(ctx, job, refs[1], pace.Pace{})
	if err != nil || time.Since(st.ReadAt) > 30*time.Millisecond {
		t.Fatalf("a running reading with notices received every 10 ms: %+v, %v; want it true as of the last receive", st, err)
	}
	changes := readings.Changes(job, refs[0])
	if err := mem.Cancel(ctx, job, refs[0], "test"); err != nil {
		t.Fatal(err)
	}
	mem.ch <- []adapters.Listed{{Ref: refs[0], Status: adapters.Status{State: adapters.Cancelled}}}
	select {
	case <-changes:
	case <-time.After(2 * time.Second):
		t.Fatal("the end a notice told was not told within 2 s")
	}
	if st, err := e.Describe(ctx, job, refs[0], pace.Pace{}); err != nil || st.State != adapters.Cancelled {
		t.Fatalf("Describe after a notice: %+v, %v; want cancelled", st, err)
	}
	if c := readings.SweepCounts(); c.Notices == 0 || c.Rounds > 0 || c.Pages > 0 {
		t.Errorf("sweep counts %+v: want notices received, and no round", c)
	}
}

// While the event source tells what changes, a group is listed once and then every
// reconcileEvery only, however often rounds come: the listings catch what the source drops.
func TestNoticesLeaveListingsToReconcile(t *testing.T) {
	mem := &notices{pointReads: &pointReads{Engine: memengine.New(memengine.Options{})}, ch: make(chan []adapters.Listed)}
	e, readings := sweepingOver(t, mem, Options{Size: 100, Fresh: time.Hour, SweepEvery: 20 * time.Millisecond})
	ctx := context.Background()
	job := memengine.Job(memengine.Echo, 0)
	for _, r := range startRunning(t, mem.pointReads, job, 3) {
		if _, err := e.Describe(ctx, job, r, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for readings.SweepCounts().Rounds < 15 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c := readings.SweepCounts(); c.Rounds < 15 || c.Pages != 1 {
		t.Errorf("sweep counts %+v with the event source telling: want one listing in 15 rounds", c)
	}
}
