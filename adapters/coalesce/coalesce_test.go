package coalesce

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

// slowEngine answers Describe after a delay with a fixed state and counts calls: a unit-test
// stand-in for the sharing logic only (the engines' own tests run against real engines).
type slowEngine struct {
	adapters.Engine
	state              adapters.State
	describes, outcome atomic.Int64
}

func (s *slowEngine) Describe(ctx context.Context, _ adapters.Target, _ adapters.Ref) (adapters.Status, error) {
	s.describes.Add(1)
	time.Sleep(50 * time.Millisecond)
	return adapters.Status{State: s.state}, ctx.Err()
}

func (s *slowEngine) Outcome(context.Context, adapters.Target, adapters.Ref) (adapters.Outcome, error) {
	s.outcome.Add(1)
	return adapters.Outcome{State: s.state, Output: []byte(`{"ok":true}`)}, nil
}

func (s *slowEngine) Cancel(context.Context, adapters.Target, adapters.Ref, string) error { return nil }

func (s *slowEngine) Answer(context.Context, adapters.Target, adapters.Ref, string, adapters.Answer) error {
	return nil
}

func TestConcurrentDescribesShareOneCall(t *testing.T) {
	inner := &slowEngine{state: adapters.Working}
	e := Wrap(inner, 10, 0, nil)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := e.Describe(context.Background(), adapters.Target{Name: "t"}, adapters.Ref{ID: "x"}); err != nil || st.State != adapters.Working {
				t.Errorf("Describe = %v, %v", st, err)
			}
		}()
	}
	wg.Wait()
	if n := inner.describes.Load(); n > 2 {
		t.Fatalf("50 concurrent Describes made %d engine calls, want 1 (2 at most with scheduling)", n)
	}
	if e.Len() != 0 {
		t.Fatalf("a running execution was cached")
	}
	e.Describe(context.Background(), adapters.Target{Name: "t"}, adapters.Ref{ID: "x"})
	if n := inner.describes.Load(); n < 2 {
		t.Fatalf("a later Describe of a running execution was answered from a cache")
	}
}

func TestEndedExecutionsAreCachedAndBounded(t *testing.T) {
	inner := &slowEngine{state: adapters.Succeeded}
	e := Wrap(inner, 2, 0, nil)
	ctx, tg := context.Background(), adapters.Target{Name: "t"}
	for range 3 {
		e.Describe(ctx, tg, adapters.Ref{ID: "a"})
		e.Outcome(ctx, tg, adapters.Ref{ID: "a"})
	}
	if d, o := inner.describes.Load(), inner.outcome.Load(); d != 1 || o != 1 {
		t.Fatalf("engine calls for an ended execution read 3 times: %d describes, %d outcomes; want 1 and 1", d, o)
	}
	e.Describe(ctx, tg, adapters.Ref{ID: "b"})
	e.Describe(ctx, tg, adapters.Ref{ID: "c"})
	if e.Len() != 2 {
		t.Fatalf("cache holds %d, want its bound 2", e.Len())
	}
	e.Describe(ctx, tg, adapters.Ref{ID: "a"}) // evicted: asks the engine again
	if d := inner.describes.Load(); d != 4 {
		t.Fatalf("describes = %d, want 4 (a evicted)", d)
	}
}

func TestACancelledCallerDoesNotFailTheOthers(t *testing.T) {
	inner := &slowEngine{state: adapters.Working}
	e := Wrap(inner, 10, 0, nil)
	impatient, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := e.Describe(context.Background(), adapters.Target{}, adapters.Ref{ID: "x"}); err != nil {
			t.Errorf("patient caller: %v", err)
		}
	}()
	if _, err := e.Describe(impatient, adapters.Target{}, adapters.Ref{ID: "x"}); err != context.Canceled {
		t.Errorf("impatient caller: %v, want context.Canceled", err)
	}
	wg.Wait()
}

func TestRunningStatusIsFreshForAWindow(t *testing.T) {
	inner := &slowEngine{state: adapters.Working}
	e := Wrap(inner, 10, 300*time.Millisecond, nil)
	ctx, tg, r := context.Background(), adapters.Target{Name: "t"}, adapters.Ref{ID: "x"}
	for range 5 {
		e.Describe(ctx, tg, r)
	}
	if n := inner.describes.Load(); n != 1 {
		t.Fatalf("5 reads within the window made %d engine calls, want 1", n)
	}
	time.Sleep(300 * time.Millisecond)
	e.Describe(ctx, tg, r)
	if n := inner.describes.Load(); n != 2 {
		t.Fatalf("a read after the window made no engine call (calls %d)", n)
	}
	e.Cancel(ctx, tg, r, "test")
	e.Describe(ctx, tg, r)
	if n := inner.describes.Load(); n != 3 {
		t.Fatalf("a read after Cancel was answered from the window (calls %d)", n)
	}
	e.Answer(ctx, tg, r, "confirm", adapters.Answer{Action: adapters.ActionDecline})
	e.Describe(ctx, tg, r)
	if n := inner.describes.Load(); n != 4 {
		t.Fatalf("a read after Answer was answered from the window (calls %d)", n)
	}
}

func (s *slowEngine) Wait(context.Context, adapters.Target, adapters.Ref) (adapters.Outcome, error) {
	return adapters.Outcome{State: s.state}, nil
}

func TestReadsAreCountedByHowTheyWereServed(t *testing.T) {
	inner := &slowEngine{state: adapters.Working}
	e := Wrap(inner, 10, time.Minute, nil)
	ctx, tg := context.Background(), adapters.Target{Name: "t"}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Describe(ctx, tg, adapters.Ref{ID: "x"})
		}()
	}
	wg.Wait()
	c := e.Counts().Describe
	if c.Engine != uint64(inner.describes.Load()) || c.Engine+c.Shared+c.Fresh != 50 || c.Cached != 0 {
		t.Fatalf("50 concurrent reads of a running execution, %d engine calls: counted %+v", inner.describes.Load(), c)
	}
	inner.state = adapters.Succeeded
	e.Describe(ctx, tg, adapters.Ref{ID: "y"})
	e.Describe(ctx, tg, adapters.Ref{ID: "y"})
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
	inner := &slowEngine{state: adapters.Failed}
	var told []string
	e := Wrap(inner, 10, 0, func(_ context.Context, _ adapters.Target, r adapters.Ref, s adapters.State) {
		told = append(told, r.ID+" "+s.String())
	})
	ctx, tg := context.Background(), adapters.Target{Name: "t"}
	// Read, then its outcome, twice: told once.
	for range 2 {
		e.Describe(ctx, tg, adapters.Ref{ID: "a"})
		e.Outcome(ctx, tg, adapters.Ref{ID: "a"})
	}
	// Waited for, then read: told once, and the outcome is kept.
	e.Wait(ctx, tg, adapters.Ref{ID: "b"})
	e.Cancel(ctx, tg, adapters.Ref{ID: "b"}, "too late")
	e.Answer(ctx, tg, adapters.Ref{ID: "b"}, "q", adapters.Answer{Action: adapters.ActionDecline})
	e.Describe(ctx, tg, adapters.Ref{ID: "b"})
	e.Outcome(ctx, tg, adapters.Ref{ID: "b"})
	if want := []string{"a failed", "b failed"}; !slices.Equal(told, want) {
		t.Fatalf("told %q, want %q", told, want)
	}
	if n := inner.outcome.Load(); n != 1 {
		t.Fatalf("%d outcome calls, want 1 (b's came with Wait, and a late cancel or answer keeps it)", n)
	}
}
