package adapters_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/coalesce"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/adapters/pace"
)

// recorder is a hook that writes what it is told into log, under its name.
func recorder(name string, log *[]string) adapters.Hook {
	return func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		*log = append(*log, name+" "+c.Op.String())
		return ctx, func(err error) error {
			*log = append(*log, fmt.Sprintf("%s ended: %v", name, err))
			return err
		}, nil
	}
}

var echoInput = json.RawMessage(`{"seconds":0,"text":"hooked"}`)

// Hooks are told of each engine call outermost first, and of its end innermost first; a hook that
// refuses a call keeps it from the hooks after it and from the engine, and the hooks before it
// are told of the refusal; a hook's end may change the call's error.
func TestHooksWrapEveryCall(t *testing.T) {
	mem := memengine.New(memengine.Options{})
	defer mem.Close()
	echo := memengine.Job(memengine.Echo, 0)
	var log []string
	e := adapters.NewEngine(mem, adapters.EngineOptions{Hooks: []adapters.Hook{recorder("outer", &log), recorder("inner", &log)}})
	r, err := e.Start(t.Context(), echo, adapters.StartRequest{Input: echoInput}, pace.Pace{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"outer start", "inner start", "inner ended: <nil>", "outer ended: <nil>"}
	if !slices.Equal(log, want) {
		t.Errorf("a start told the hooks %q, want %q", log, want)
	}

	refusal := &adapters.Throttle{RetryAfter: time.Second}
	refuse := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		return ctx, nil, refusal
	}
	log = nil
	e = adapters.NewEngine(mem, adapters.EngineOptions{Hooks: []adapters.Hook{recorder("outer", &log), refuse, recorder("inner", &log)}})
	if _, err := e.Describe(t.Context(), echo, r, pace.Pace{}); err != refusal {
		t.Errorf("a refused Describe: error %v, want the refusal", err)
	}
	want = []string{"outer describe", "outer ended: " + refusal.Error()}
	if !slices.Equal(log, want) {
		t.Errorf("a refused call told the hooks %q, want %q", log, want)
	}

	replaced := errors.New("replaced")
	replace := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		return ctx, func(error) error { return replaced }, nil
	}
	e = adapters.NewEngine(mem, adapters.EngineOptions{Hooks: []adapters.Hook{replace}})
	if err := e.Cancel(t.Context(), echo, r, "test"); err != replaced {
		t.Errorf("Cancel through a hook that replaces its error: %v, want the hook's", err)
	}
}

// A hook sees what a call is about: the execution, the request it may add to, and the status read.
func TestHooksSeeTheCall(t *testing.T) {
	mem := memengine.New(memengine.Options{})
	defer mem.Close()
	echo := memengine.Job(memengine.Echo, 3600)
	var status adapters.Status
	var ref adapters.Ref
	see := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		if c.Request != nil {
			c.Request.Trace = map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
		}
		return ctx, func(err error) error {
			if c.Op == adapters.OpDescribe {
				status, ref = c.Status, c.Ref
			}
			return err
		}, nil
	}
	e := adapters.NewEngine(mem, adapters.EngineOptions{Hooks: []adapters.Hook{see}})
	r, err := e.Start(t.Context(), echo, adapters.StartRequest{Input: json.RawMessage(`{"seconds":3600,"text":"x"}`)}, pace.Pace{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Cancel(context.Background(), echo, r, "test")
	st, err := e.Describe(t.Context(), echo, r, pace.Pace{})
	if err != nil || ref != r || status.State != st.State || status.Started != st.Started {
		t.Errorf("the hook saw %v %+v, Describe returned %+v, %v", ref, status, st, err)
	}
}

// runner is a Conn that runs its sync-only targets itself, and counts its runs.
type runner struct {
	*memengine.Engine
	runs int
}

func (r *runner) Check(_ context.Context, t adapters.Target) (adapters.TargetInfo, error) {
	if t.Name == "express" {
		return adapters.TargetInfo{SyncOnly: "express cannot be described"}, nil
	}
	return adapters.TargetInfo{}, nil
}

func (r *runner) Run(ctx context.Context, t adapters.Target, req adapters.StartRequest) (adapters.Ref, adapters.Outcome, error) {
	r.runs++
	return adapters.Ref{ID: "ran"}, adapters.Outcome{State: adapters.Succeeded, Output: json.RawMessage(`{}`)}, nil
}

// Run is the Conn's Runner for a sync-only target only (checking the target first when it was not
// checked); any other target starts and is waited for, and so does every target of a Conn that is
// no Runner.
func TestRunUsesTheRunnerOnlyForSyncOnlyTargets(t *testing.T) {
	mem := memengine.New(memengine.Options{})
	defer mem.Close()
	conn := &runner{Engine: mem}
	e := adapters.NewEngine(conn, adapters.EngineOptions{})
	express := adapters.Target{Name: "express", Spec: memengine.Job(memengine.Echo, 0).Spec}
	if r, o, err := e.Run(t.Context(), express, adapters.StartRequest{Input: echoInput}, pace.Pace{}); err != nil || r.ID != "ran" || o.State != adapters.Succeeded || conn.runs != 1 {
		t.Errorf("Run of an unchecked sync-only target: %v %+v %v after %d runs, want the driver.Runner's", r, o, err, conn.runs)
	}
	echo := memengine.Job(memengine.Echo, 0)
	if r, o, err := e.Run(t.Context(), echo, adapters.StartRequest{Input: echoInput}, pace.Pace{}); err != nil || r.ID == "ran" || string(o.Output) != `{"text":"hooked"}` || conn.runs != 1 {
		t.Errorf("Run of a target that is not sync-only: %v %+v %v after %d runs, want a start and a wait", r, o, err, conn.runs)
	}
	plain := adapters.NewEngine(mem, adapters.EngineOptions{})
	if _, o, err := plain.Run(t.Context(), echo, adapters.StartRequest{Input: echoInput}, pace.Pace{}); err != nil || string(o.Output) != `{"text":"hooked"}` {
		t.Errorf("Run on a Conn that is no driver.Runner: %+v %v, want a start and a wait", o, err)
	}
	if !e.Supports(adapters.OpRun) || plain.Supports(adapters.OpRun) {
		t.Errorf("Supports(OpRun) = %v of a driver.Runner, %v of a Conn that is not, want true and false", e.Supports(adapters.OpRun), plain.Supports(adapters.OpRun))
	}
}

// What a Conn does not do fails with ErrUnsupported, and says so before any call.
func TestOptionalCallsAreUnsupportedWithoutTheirInterface(t *testing.T) {
	mem := memengine.New(memengine.Options{})
	defer mem.Close()
	called := false
	hook := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		called = true
		return ctx, nil, nil
	}
	plain := struct{ adapters.Conn }{mem} // the Conn alone, without the in-memory engine's Sweep and Samples
	e := adapters.NewEngine(plain, adapters.EngineOptions{Hooks: []adapters.Hook{hook}})
	echo := memengine.Job(memengine.Echo, 0)
	if e.Supports(adapters.OpSweep) || e.Supports(adapters.OpSample) || !e.Supports(adapters.OpDescribe) {
		t.Errorf("Supports of a bare Conn: sweep %v, sample %v, describe %v; want false, false, true",
			e.Supports(adapters.OpSweep), e.Supports(adapters.OpSample), e.Supports(adapters.OpDescribe))
	}
	if _, _, err := e.Sweep(t.Context(), adapters.SweepOptions{Targets: []adapters.Target{echo}}); !errors.Is(err, adapters.ErrUnsupported) {
		t.Errorf("Sweep: %v, want ErrUnsupported", err)
	}
	if _, err := e.Samples(t.Context(), echo, 3); !errors.Is(err, adapters.ErrUnsupported) {
		t.Errorf("Samples: %v, want ErrUnsupported", err)
	}
	if called {
		t.Error("an unsupported call reached the hooks")
	}
}

// Wait reads "not found" right after a start as not visible yet, on an engine that declares a
// visibility lag (enginetest's Missing checks that it ends the wait later).
func TestWaitReadsNotFoundAsNotYetVisible(t *testing.T) {
	mem := memengine.New(memengine.Options{VisibilityLag: time.Minute})
	defer mem.Close()
	echo := memengine.Job(memengine.Echo, 0)
	misses := 0
	invisible := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		if c.Op == adapters.OpDescribe && misses < 2 {
			misses++
			return ctx, nil, fmt.Errorf("%w: not visible yet", adapters.ErrNotFound)
		}
		return ctx, nil, nil
	}
	e := adapters.NewEngine(mem, adapters.EngineOptions{Hooks: []adapters.Hook{invisible}})
	r, err := e.Start(t.Context(), echo, adapters.StartRequest{Input: echoInput}, pace.Pace{})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := e.Wait(t.Context(), echo, r, pace.Pace{}); err != nil || string(o.Output) != `{"text":"hooked"}` || misses != 2 {
		t.Errorf("Wait through two reads not found: %+v %v after %d misses, want the outcome", o, err, misses)
	}
}

// Wait, and the readings under it, read "not found" by the visibility lag the driver declares: on
// an engine that shows its starts at once, not found is not found at the first read.
func TestWaitReadsNotFoundByTheDeclaredLag(t *testing.T) {
	mem := memengine.New(memengine.Options{})
	defer mem.Close()
	echo := memengine.Job(memengine.Echo, 0)
	misses := 0
	invisible := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		if c.Op == adapters.OpDescribe {
			misses++
			return ctx, nil, fmt.Errorf("%w: not visible yet", adapters.ErrNotFound)
		}
		return ctx, nil, nil
	}
	for _, readings := range []adapters.Readings{nil, coalesce.New(coalesce.Options{Size: 16, Fresh: time.Second})} {
		misses = 0
		e := adapters.NewEngine(mem, adapters.EngineOptions{Hooks: []adapters.Hook{invisible}, Readings: readings})
		if lag := e.VisibilityLag(); lag != 0 {
			t.Fatalf("the engine's visibility lag is %v, want the 0 its Conn declares", lag)
		}
		r, err := e.Start(t.Context(), echo, adapters.StartRequest{Input: echoInput}, pace.Pace{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err = e.Wait(ctx, echo, r, pace.Pace{Created: time.Now()})
		cancel()
		if !errors.Is(err, adapters.ErrNotFound) || misses != 1 {
			t.Errorf("Wait (readings %T) on an engine that declares no lag: %v after %d reads, want not found after one", readings, err, misses)
		}
	}
}

// An Engine's visibility lag is what its Conn declares, DefaultVisibilityLag when it declares
// none.
func TestVisibilityLagIsDeclared(t *testing.T) {
	mem := memengine.New(memengine.Options{VisibilityLag: 3 * time.Second})
	defer mem.Close()
	undeclared := struct{ adapters.Conn }{mem}
	for _, c := range []struct {
		name string
		conn adapters.Conn
		want time.Duration
	}{
		{"declared", mem, 3 * time.Second},
		{"undeclared", undeclared, adapters.DefaultVisibilityLag},
	} {
		if got := adapters.NewEngine(c.conn, adapters.EngineOptions{}).VisibilityLag(); got != c.want || adapters.VisibilityLagOf(c.conn) != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
