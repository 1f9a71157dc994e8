package tasks_test

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// Tools whose tasks a listener follows: one of steps with progress, one that asks, one whose ids
// expire at once, and one of alice's only.
const watchedTools = `
engines:
  mem: {memory: {}}
tools:
  - name: release
    description: Three steps, each saying so.
    engine: mem
    job: {program: steps}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {version: {type: string}, stepSeconds: {type: number}}, required: [version, stepSeconds]}
  - name: slow_release
    description: Three steps, read by its own polls once an hour.
    engine: mem
    job: {program: steps}
    pollInterval: 1h
    inputSchema: {type: object, properties: {version: {type: string}, stepSeconds: {type: number}}, required: [version, stepSeconds]}
  - name: confirm
    description: Asks, then echoes the answer.
    engine: mem
    job: {program: ask}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
  - name: brief
    description: Its ids expire after a millisecond.
    engine: mem
    job: {program: echo}
    ttl: 1ms
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: short_lived
    description: Three long steps; its ids expire after a second.
    engine: mem
    job: {program: steps}
    ttl: 1s
    pollInterval: 100ms
    inputSchema: {type: object, properties: {version: {type: string}, stepSeconds: {type: number}}, required: [version, stepSeconds]}
  - name: admin_echo
    description: Alice's only.
    engine: mem
    job: {program: echo}
    allow: {principals: [alice]}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
`

func newWatched(t *testing.T) (*tasks.Service, *mapping.Set) {
	t.Helper()
	set, e := memTools(t, watchedTools)
	keys, _ := token.ParseKeys(token.NewKey("w1"))
	sealed, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": e}, Tokens: sealed})
	if err != nil {
		t.Fatal(err)
	}
	return svc, set
}

// collect reads updates until they end or the deadline passes.
func collect(t *testing.T, updates <-chan *tasks.Task, within time.Duration) []*tasks.Task {
	t.Helper()
	var got []*tasks.Task
	deadline := time.After(within)
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				return got
			}
			got = append(got, u)
		case <-deadline:
			t.Fatalf("the updates did not end within %s; got %d", within, len(got))
		}
	}
}

// TestWatchSendsEachChangeInOrderToTheEnd: the task as Read answers it, again at each step of its
// progress, and its end with the result; then the updates close.
func TestWatchSendsEachChangeInOrderToTheEnd(t *testing.T) {
	svc, set := newWatched(t)
	ctx := as("alice")
	release, _ := set.Tool("release")
	task, err := svc.Start(ctx, tasks.StartRequest{Tool: release, Args: json.RawMessage(`{"version": "1.2", "stepSeconds": 0.5}`)})
	if err != nil {
		t.Fatal(err)
	}
	acknowledged, updates := svc.Watch(ctx, []string{task.ID, task.ID})
	if !slices.Equal(acknowledged, []string{task.ID}) {
		t.Fatalf("acknowledged %v, want the task once", acknowledged)
	}
	var messages []string
	got := collect(t, updates, 10*time.Second)
	for _, u := range got {
		if u.ID != task.ID {
			t.Fatalf("an update of %s, want only %s", u.ID, task.ID)
		}
		messages = append(messages, u.Status.State.String()+": "+u.Message())
	}
	want := []string{"submitted: Started.", "working: step 1 of 3: compile", "working: step 2 of 3: test", "working: step 3 of 3: package", "succeeded: step 3 of 3: package"}
	// A step that began and ended between two reads (a machine stalled for longer than a step) is
	// never seen, so the updates are some of want, in order, each once, from the start to the end.
	last := -1
	for _, m := range messages {
		i := slices.Index(want, m)
		if i <= last {
			t.Fatalf("updates %q, want some of %q in order, each once", messages, want)
		}
		last = i
	}
	if messages[0] != want[0] || last != len(want)-1 {
		t.Fatalf("updates %q, want %q's first and last among them", messages, want)
	}
	if end := got[len(got)-1]; end.Result == nil || string(end.Result.Structured) != `{"status":"released","version":"1.2"}` {
		t.Fatalf("the end carries %+v, want the release's result", end.Result)
	}
}

// TestWatchSendsQuestionsAndTheAnswersEnd: input_required with its question, then the end the
// answer brings.
func TestWatchSendsQuestionsAndTheAnswersEnd(t *testing.T) {
	svc, set := newWatched(t)
	ctx := as("alice")
	confirm, _ := set.Tool("confirm")
	task, err := svc.Start(ctx, tasks.StartRequest{Tool: confirm, Args: json.RawMessage(`{"message": "Deploy?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	_, updates := svc.Watch(ctx, []string{task.ID})
	var asked *tasks.Task
	for u := range updates {
		if u.Status.State == adapters.InputRequired {
			asked = u
			break
		}
	}
	if asked == nil || len(asked.Status.Inputs) != 1 || asked.Status.Inputs[0].Message != "Deploy?" {
		t.Fatalf("the question came as %+v", asked)
	}
	opened, err := svc.Open(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	key := asked.Status.Inputs[0].Key
	if _, err := svc.Answer(ctx, opened, tasks.Given(map[string]tasks.Answer{key: {Action: "accept", Content: json.RawMessage(`{"confirm": true}`)}})); err != nil {
		t.Fatal(err)
	}
	rest := collect(t, updates, 10*time.Second)
	if len(rest) != 1 || rest[0].Status.State != adapters.Succeeded || rest[0].Result == nil || string(rest[0].Result.Structured) != `{"confirm": true}` {
		t.Fatalf("after the answer: %d updates, the first %+v (result %+v), want the one end with the answer as its result", len(rest), rest[0], rest[0].Result)
	}
}

// TestWatchLeavesOutIdsItCannotOpenAlike: another caller's id, a forged one, an expired one and
// one through a tool the caller may not use are all left out, and nothing of them is sent.
func TestWatchLeavesOutIdsItCannotOpenAlike(t *testing.T) {
	svc, set := newWatched(t)
	alice, bob := as("alice"), as("bob")
	start := func(ctx context.Context, tool, args string) *tasks.Task {
		t.Helper()
		tl, _ := set.Tool(tool)
		task, err := svc.Start(ctx, tasks.StartRequest{Tool: tl, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	alices := start(alice, "admin_echo", `{"seconds": 0.3, "text": "alice's"}`)
	alicesRelease := start(alice, "release", `{"version": "a", "stepSeconds": 0.1}`)
	expired := start(bob, "brief", `{"seconds": 0, "text": "gone"}`)
	bobs := start(bob, "release", `{"version": "b", "stepSeconds": 0.1}`)
	forged := bobs.ID[:len(bobs.ID)-4] + "AAAA"
	time.Sleep(5 * time.Millisecond) // past the brief tool's ttl
	acknowledged, updates := svc.Watch(bob, []string{alices.ID, alicesRelease.ID, forged, expired.ID, bobs.ID, "", "not-an-id"})
	if !slices.Equal(acknowledged, []string{bobs.ID}) {
		t.Fatalf("bob is acknowledged %v, want only his own task", acknowledged)
	}
	got := collect(t, updates, 10*time.Second)
	for _, u := range got {
		if u.ID != bobs.ID {
			t.Fatalf("bob was told of %s", u.ID)
		}
	}
	if len(got) == 0 || !got[len(got)-1].Ended() {
		t.Fatalf("bob's own task was not followed to its end: %d updates", len(got))
	}
}

// TestWatchEndsWithItsContext: cancelling the watch closes the updates and leaves no goroutine.
func TestWatchEndsWithItsContext(t *testing.T) {
	svc, set := newWatched(t)
	release, _ := set.Tool("release")
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(as("alice"))
	var ids []string
	for range 20 {
		task, err := svc.Start(ctx, tasks.StartRequest{Tool: release, Args: json.RawMessage(`{"version": "x", "stepSeconds": 60}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	acknowledged, updates := svc.Watch(ctx, ids)
	if len(acknowledged) != len(ids) {
		t.Fatalf("acknowledged %d of %d", len(acknowledged), len(ids))
	}
	for range ids { // each task's first update
		<-updates
	}
	cancel()
	collect(t, updates, 5*time.Second)
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before the watch:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestWatchFollowsAnExecutionOnce: two ids of one execution (the start's, the listing's) are one
// task to follow: the first is acknowledged, the other left out.
func TestWatchFollowsAnExecutionOnce(t *testing.T) {
	svc, set := newWatched(t)
	ctx := as("alice")
	release, _ := set.Tool("release")
	task, err := svc.Start(ctx, tasks.StartRequest{Tool: release, Args: json.RawMessage(`{"version": "1", "stepSeconds": 0.1}`)})
	if err != nil {
		t.Fatal(err)
	}
	listed, _, err := svc.List(ctx, "")
	if err != nil || len(listed) != 1 || listed[0].ID == task.ID {
		t.Fatalf("the listing: %v, %v; want the task once, under an id of its own", listed, err)
	}
	acknowledged, updates := svc.Watch(ctx, []string{task.ID, listed[0].ID})
	if !slices.Equal(acknowledged, []string{task.ID}) {
		t.Fatalf("acknowledged %v, want only the first id of the execution", acknowledged)
	}
	if got := collect(t, updates, 10*time.Second); len(got) == 0 || !got[len(got)-1].Ended() {
		t.Fatalf("%d updates, want the task followed to its end", len(got))
	}
}

// TestWatchEndsAtTheTTL: a task still running when its id's ttl passes is no longer followed, and
// nothing of it is sent after.
func TestWatchEndsAtTheTTL(t *testing.T) {
	svc, set := newWatched(t)
	ctx := as("alice")
	short, _ := set.Tool("short_lived")
	task, err := svc.Start(ctx, tasks.StartRequest{Tool: short, Args: json.RawMessage(`{"version": "1", "stepSeconds": 60}`)})
	if err != nil {
		t.Fatal(err)
	}
	expires := task.CreatedAt().Add(time.Second)
	_, updates := svc.Watch(ctx, []string{task.ID})
	deadline := time.After(5 * time.Second)
	for {
		select {
		case u, ok := <-updates:
			switch {
			case !ok && time.Now().Before(expires):
				t.Fatalf("the updates closed before the ttl")
			case !ok:
				return
			case u.Ended() || time.Now().After(expires):
				t.Fatalf("an update at %s (%s), past the ttl at %s", time.Now().Format(time.StampMilli), u.Status.State, expires.Format(time.StampMilli))
			}
		case <-deadline:
			t.Fatalf("the task was still followed 4 s past its ttl")
		}
	}
}

// TestConfirmationsAreChargedToTheirReader: the outcome read that confirms the end of a task a
// sweep followed is charged to the caller whose read it followed, as that caller's own read would
// have been.
func TestConfirmationsAreChargedToTheirReader(t *testing.T) {
	svc, set := newWatched(t)
	release, _ := set.Tool("slow_release") // its own reads are an hour apart: only a sweep sees the end
	var paid atomic.Int64
	ctx := tasks.Charging(as("alice"), tasks.NewPayer(func() { paid.Add(1) }))
	task, err := svc.Start(as("alice"), tasks.StartRequest{Tool: release, Args: json.RawMessage(`{"version": "1", "stepSeconds": 0.2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if read, err := svc.Read(ctx, task.ID); err != nil || read.Ended() {
		t.Fatalf("the first read: %v, %v; want the task running", read, err)
	}
	// A listener waits on the task: the sweep that sees its end confirms it at once, with what
	// it carried of the first read, and the listener's own reads are charged to no one.
	_, updates := svc.Watch(as("alice"), []string{task.ID})
	last := make(chan *tasks.Task, 1)
	go func() { // the listener reads what it is told, so that the watch goes on waiting
		var u *tasks.Task
		for u = range updates {
		}
		last <- u
	}()
	for deadline := time.Now().Add(10 * time.Second); paid.Load() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sweeps confirmed the end with nothing charged to the reader: %+v", svc.Sweeps())
		}
	}
	select {
	case u := <-last:
		if u == nil || !u.Ended() {
			t.Fatalf("the listener was told last %v, want the end", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listener was not told the end within 10 s")
	}
}
