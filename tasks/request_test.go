package tasks_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/taskgate/taskgate/tasks"
)

// TestOneRequestKeepsItsCallerChargeAndSubject: what a transport tells the service of a request
// (its caller, what pays for its engine calls, that it wants its subject) holds together, whatever
// the order the later two are told in, and the service reads each of them.
func TestOneRequestKeepsItsCallerChargeAndSubject(t *testing.T) {
	e := newEnv(t)
	var paid atomic.Int64
	ctx, subject := tasks.Track(tasks.WithPrincipal(context.Background(), "alice"))
	ctx = tasks.Charging(ctx, tasks.NewPayer(func() { paid.Add(1) }))
	if got := tasks.Principal(ctx); got != "alice" {
		t.Fatalf("the caller after Track and Charging: %q", got)
	}
	task := e.start(t, ctx, "echo", `{"seconds": 60, "text": "x"}`)
	if tool, engine, ref := subject.Get(); tool != "echo" || engine != "mem" || ref != task.Ref() {
		t.Fatalf("the subject of a start: %q %q %v, want echo mem %v", tool, engine, ref, task.Ref())
	}
	if _, err := e.svc.Read(as("bob"), task.ID); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("alice's task read by bob: %v", err)
	}
	// The start was the request's first engine call, so every lookup of the key is paid for.
	before := e.mem.describes.Load()
	if _, err := e.svc.ReadKeyed(ctx, "no-such-key"); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("an unknown key: %v", err)
	}
	if calls, n := e.mem.describes.Load()-before, paid.Load(); calls == 0 || n != calls {
		t.Fatalf("%d engine calls after the start paid for, want all %d", n, calls)
	}
}

// TestAnotherCallerLeavesItsParentAlone: a context derived for another caller is another request;
// the one it was derived from keeps its caller and scopes.
func TestAnotherCallerLeavesItsParentAlone(t *testing.T) {
	e := newEnv(t)
	alice := tasks.WithPrincipal(context.Background(), "alice", "deploy")
	bob := tasks.WithPrincipal(alice, "bob")
	if a, b := tasks.Principal(alice), tasks.Principal(bob); a != "alice" || b != "bob" {
		t.Fatalf("the callers: %q and %q, want alice and bob", a, b)
	}
	task := e.start(t, alice, "echo", `{"seconds": 60, "text": "x"}`)
	if _, err := e.svc.Read(alice, task.ID); err != nil {
		t.Fatalf("alice reads her task after bob's context was made: %v", err)
	}
}

// TestRequestStateIsOneValue: telling the service of a request's caller, charge and subject adds
// one value to its context, not one each.
func TestRequestStateIsOneValue(t *testing.T) {
	pay := tasks.NewPayer(func() {})
	allocs := testing.AllocsPerRun(100, func() {
		ctx := tasks.WithPrincipal(context.Background(), "alice")
		ctx = tasks.Charging(ctx, pay)
		tasks.Track(ctx)
	})
	if allocs > 2 {
		t.Fatalf("%v allocations for a request's state, want 2 (the state and its context)", allocs)
	}
}
