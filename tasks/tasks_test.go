package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// The task service, exercised against the in-memory engine with no MCP in sight.

const tools = `
engines:
  mem: {memory: {retention: 1h}}
  down: {memory: {unavailable: true}}
tools:
  - name: echo
    description: Waits, then echoes the text.
    engine: mem
    job: {program: echo}
    inputSchema:
      type: object
      properties: {seconds: {type: number, minimum: 0}, text: {type: string}}
      required: [seconds, text]
  - name: ask
    description: Asks, then echoes the answer.
    engine: mem
    job: {program: ask}
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
  - name: confirmed_echo
    description: Asks before it starts.
    engine: mem
    job: {program: echo}
    input: '{seconds: 0, text: .go.reason}'
    inputSchema: {type: object}
    ask:
      - key: go
        message: Really?
        schema: {type: object, properties: {reason: {type: string}}, required: [reason]}
  - name: sync_echo
    description: Echoes the text, and may not run as a task.
    engine: mem
    job: {program: echo}
    taskSupport: forbidden
    inputSchema: {type: object}
  - name: unreachable
    description: Its engine is down.
    engine: down
    job: {program: echo}
    taskSupport: forbidden
    inputSchema: {type: object}
`

// counting passes every call to the real engine and counts starts and answers, to show what a
// refused request did not reach.
type counting struct {
	adapters.Conn
	starts, answers, describes atomic.Int64
}

func (c *counting) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	c.describes.Add(1)
	return c.Conn.Describe(ctx, t, r)
}

func (c *counting) Start(ctx context.Context, t adapters.Target, r adapters.StartRequest) (adapters.Ref, error) {
	c.starts.Add(1)
	return c.Conn.Start(ctx, t, r)
}

func (c *counting) Answer(ctx context.Context, t adapters.Target, r adapters.Ref, key string, a adapters.Answer) error {
	c.answers.Add(1)
	return c.Conn.Answer(ctx, t, r, key, a)
}

// observed counts what an Observer is told.
type observed struct{ started, ended atomic.Int64 }

func (o *observed) Started(context.Context, string)               { o.started.Add(1) }
func (o *observed) Ended(context.Context, string, adapters.State) { o.ended.Add(1) }

type env struct {
	svc      *tasks.Service
	set      *mapping.Set
	mem      *counting
	observed *observed
	tokens   token.Codec
}

func newEnv(t *testing.T) *env {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]adapters.Conn{}
	for name, block := range set.Engines {
		e, err := block.Config.Open(t.Context(), adapters.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		engines[name] = e
	}
	mem := &counting{Conn: engines["mem"]}
	engines["mem"] = mem
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	sealed, _ := token.NewSealed(keys)
	o := &observed{}
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: sealed, Observer: o})
	if err != nil {
		t.Fatal(err)
	}
	return &env{svc: svc, set: set, mem: mem, observed: o, tokens: sealed}
}

func (e *env) tool(t *testing.T, name string) *mapping.Tool {
	t.Helper()
	tool, ok := e.set.Tool(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	return tool
}

func (e *env) start(t *testing.T, ctx context.Context, tool string, args string) *tasks.Task {
	t.Helper()
	task, err := e.svc.Start(ctx, tasks.StartRequest{Tool: e.tool(t, tool), Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Start %s: %v", tool, err)
	}
	return task
}

// await reads the task until its status is want.
func (e *env) await(t *testing.T, ctx context.Context, id string, want adapters.State) *tasks.Task {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		task, err := e.svc.Read(ctx, id)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if task.Status.State == want {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %v, want %v", task.Status.State, want)
		}
	}
}

func wantError(t *testing.T, what string, err error, kind tasks.Kind, message string) {
	t.Helper()
	var te *tasks.Error
	if !errors.As(err, &te) || te.Kind != kind || te.Message != message {
		t.Fatalf("%s: %v, want kind %d %q", what, err, kind, message)
	}
}

func as(principal string) context.Context {
	return tasks.WithPrincipal(context.Background(), principal)
}

func TestStartReadResult(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	task := e.start(t, ctx, "echo", `{"seconds": 0, "text": "hello"}`)
	if task.ID == "" || task.Status.State != adapters.Working || task.Message() != "Started." {
		t.Fatalf("a started task: %+v", task)
	}
	done := e.await(t, ctx, task.ID, adapters.Succeeded)
	want := &tasks.Result{Text: `{"text":"hello"}`, Structured: json.RawMessage(`{"text":"hello"}`)}
	if !reflect.DeepEqual(done.Result, want) || done.Failure != nil || done.Failed() || done.Ref() != task.Ref() {
		t.Fatalf("the ended task: %+v, want result %+v", done, want)
	}
	if started, ended := e.observed.started.Load(), e.observed.ended.Load(); started != 1 || ended != 1 {
		t.Fatalf("the observer was told of %d starts and %d ends, want 1 and 1", started, ended)
	}
}

func TestStartRefusesBadArgumentsAndStartsNothing(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.Start(context.Background(), tasks.StartRequest{Tool: e.tool(t, "echo"), Args: json.RawMessage(`{"seconds": -1, "text": "x"}`)})
	wantError(t, "negative seconds", err, tasks.Refused, `Invalid arguments for echo: argument "seconds": must be at least 0`)
	if n := e.mem.starts.Load(); n != 0 {
		t.Fatalf("%d starts reached the engine", n)
	}
}

func TestIDsOpenOnlyForTheirCaller(t *testing.T) {
	e := newEnv(t)
	task := e.start(t, as("alice"), "echo", `{"seconds": 0, "text": "mine"}`)
	if _, err := e.svc.Read(as("alice"), task.ID); err != nil {
		t.Fatalf("alice reads her task: %v", err)
	}
	for what, id := range map[string]string{"bob with alice's id": task.ID, "a forged id": "tg1.k1.forged", "no id at all": ""} {
		_, err := e.svc.Read(as("bob"), id)
		switch kind := tasks.KindOf(err); {
		case id == "" && kind == tasks.Invalid:
		case id != "" && kind == tasks.NotFound:
		default:
			t.Errorf("%s: %v", what, err)
		}
	}
	expired := e.tokens.Issue(token.Claims{Tool: "echo", Ref: task.Ref(), Caller: "x", Created: time.Now().Add(-time.Hour), TTL: time.Minute})
	if _, err := e.svc.Read(as("alice"), expired); tasks.KindOf(err) != tasks.Expired {
		t.Fatalf("an expired id: %v", err)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	task := e.start(t, ctx, "echo", `{"seconds": 60, "text": "never"}`)
	if err := e.svc.Cancel(ctx, task, "a test"); err != nil {
		t.Fatal(err)
	}
	done := e.await(t, ctx, task.ID, adapters.Cancelled)
	if done.Message() != "Cancelled (CANCELLED)." || done.Result != nil {
		t.Fatalf("the cancelled task: %+v", done)
	}
	wantError(t, "a second cancel", e.svc.Cancel(ctx, task, "a test"), tasks.Ended, "Failed to cancel the task: the task had already ended")
}

func TestAnswerChecksBeforeTheEngineSeesIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	task := e.start(t, ctx, "ask", `{"message": "Ship it?"}`)
	asking := e.await(t, ctx, task.ID, adapters.InputRequired)
	if asking.Message() != `waiting for an answer to "confirm": Ship it?` {
		t.Fatalf("the status message: %q", asking.Message())
	}
	if qs := asking.Questions(); len(qs) != 1 || qs[0].Key != "confirm" || qs[0].Message != "Ship it?" {
		t.Fatalf("the questions: %+v", qs)
	}
	_, err := e.svc.Answer(ctx, asking, tasks.Given(map[string]tasks.Answer{"confirm": {Action: "accept", Content: json.RawMessage(`{"confirm": "yes"}`)}}))
	wantError(t, "an answer that does not fit", err, tasks.Invalid, `the answer to "confirm" does not fit its schema: answer field "confirm": has type string, want boolean`)
	_, err = e.svc.Answer(ctx, asking, tasks.Given(map[string]tasks.Answer{"confirm": {Action: "maybe"}}))
	wantError(t, "an unknown action", err, tasks.Invalid, `the response to "confirm": action "maybe" is not accept, decline or cancel`)
	delivered, err := e.svc.Answer(ctx, asking, tasks.Given(map[string]tasks.Answer{"never-asked": {Action: "accept", Content: json.RawMessage(`{}`)}}))
	if err != nil || len(delivered) != 0 || e.mem.answers.Load() != 0 {
		t.Fatalf("an answer to nothing open: %v, %v, %d answers reached the engine", delivered, err, e.mem.answers.Load())
	}
	delivered, err = e.svc.Answer(ctx, asking, tasks.Given(map[string]tasks.Answer{"confirm": {Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}}))
	if err != nil || !reflect.DeepEqual(delivered, []string{"confirm"}) {
		t.Fatalf("the answer: %v, %v", delivered, err)
	}
	if done := e.await(t, ctx, task.ID, adapters.Succeeded); string(done.Result.Structured) != `{"confirm":true}` {
		t.Fatalf("after the answer: %+v", done.Result)
	}
}

func TestIdempotencyKeys(t *testing.T) {
	e := newEnv(t)
	ctx := as("alice")
	start := func(key, text string) (*tasks.Task, error) {
		return e.svc.Start(ctx, tasks.StartRequest{Tool: e.tool(t, "echo"), Args: json.RawMessage(`{"seconds": 60, "text": "` + text + `"}`), Key: key})
	}
	first, err := start("k-1", "once")
	if err != nil {
		t.Fatal(err)
	}
	again, err := start("k-1", "once")
	if err != nil || again.Ref() != first.Ref() {
		t.Fatalf("the same key again: %v, %v; want the first execution %v", again, err, first.Ref())
	}
	_, err = start("k-1", "other")
	wantError(t, "the key with other arguments", err, tasks.Conflict, "Failed to start echo: this idempotency key was already used with other arguments")

	byKey, err := e.svc.ReadKeyed(ctx, "k-1")
	if err != nil || byKey.Ref() != first.Ref() || byKey.Status.State != adapters.Working {
		t.Fatalf("read by the key: %+v, %v", byKey, err)
	}
	if _, err := e.svc.ReadKeyed(as("bob"), "k-1"); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("bob reads alice's key: %v", err)
	}
	if _, err := e.svc.ReadKeyed(ctx, "no-such-key"); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("an unknown key: %v", err)
	}
}

func TestList(t *testing.T) {
	e := newEnv(t)
	mine := e.start(t, as("alice"), "echo", `{"seconds": 60, "text": "a"}`)
	e.start(t, as("bob"), "echo", `{"seconds": 60, "text": "b"}`)
	listed, next, err := e.svc.List(as("alice"), "")
	// echo and confirmed_echo both run the echo program: only echo, which started it, lists it.
	if err != nil || next != "" || len(listed) != 1 || listed[0].Ref() != mine.Ref() || listed[0].Tool.Name != "echo" {
		t.Fatalf("alice's tasks: %v, %q, %v; want her one task, under echo", listed, next, err)
	}
	if again, err := e.svc.Read(as("alice"), listed[0].ID); err != nil || again.Ref() != mine.Ref() {
		t.Fatalf("a listed id reads: %v", err)
	}
	_, _, err = e.svc.List(as("alice"), "not-a-cursor")
	wantError(t, "a made-up cursor", err, tasks.Invalid, "Failed to list tasks: the cursor is not one tasks/list gave")
}

func TestQuestionsBeforeTheStart(t *testing.T) {
	e := newEnv(t)
	ctx := as("alice")
	tool := e.tool(t, "confirmed_echo")
	args := json.RawMessage(`{}`)
	g, err := e.svc.Gather(tool, tasks.Given(nil))
	if err != nil || len(g.Open) != 1 || g.Open[0].Key != "go" {
		t.Fatalf("no answers yet: %+v, %v", g, err)
	}
	state := e.svc.RequestState(ctx, tool, args, "")
	if task, err := e.svc.OpenRequestState(ctx, tool, json.RawMessage(` { } `), state); err != nil || task != "" {
		t.Fatalf("the state, with the same arguments spaced otherwise: %q, %v", task, err)
	}
	_, err = e.svc.OpenRequestState(ctx, tool, json.RawMessage(`{"other": 1}`), state)
	wantError(t, "other arguments", err, tasks.Invalid, "requestState belongs to another call: repeat the arguments of the call that was asked, or call confirmed_echo again without inputResponses")
	_, err = e.svc.OpenRequestState(as("bob"), tool, args, state)
	wantError(t, "another caller", err, tasks.Invalid, "requestState belongs to another call: repeat the arguments of the call that was asked, or call confirmed_echo again without inputResponses")

	_, err = e.svc.Gather(tool, tasks.Given(map[string]tasks.Answer{"go": {Action: "decline"}}))
	wantError(t, "a declined question", err, tasks.Refused, `confirmed_echo did not start: the question "go" was declined (Really?)`)
	g, err = e.svc.Gather(tool, tasks.Given(map[string]tasks.Answer{"go": {Action: "accept", Content: json.RawMessage(`{"reason": "ready"}`)}}))
	if err != nil || len(g.Open) != 0 {
		t.Fatalf("answered: %+v, %v", g, err)
	}
	task, err := e.svc.Start(ctx, tasks.StartRequest{Tool: tool, Args: args, Answers: g.Answers})
	if err != nil {
		t.Fatal(err)
	}
	if done := e.await(t, ctx, task.ID, adapters.Succeeded); done.Result.Text != `{"text":"ready"}` {
		t.Fatalf("started with the answer: %+v", done.Result)
	}
}

func TestWaitHandsQuestionsToTheAsker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	task := e.start(t, ctx, "ask", `{"message": "Wait?"}`)
	asked := 0
	err := e.svc.Wait(ctx, task, func(_ context.Context, t *tasks.Task) (bool, error) {
		asked++
		return true, nil
	})
	if !errors.Is(err, tasks.ErrAsking) || asked != 1 || task.Status.State != adapters.InputRequired {
		t.Fatalf("a wait whose asker stops: %v after %d questions, %v", err, asked, task.Status.State)
	}
	err = e.svc.Wait(ctx, task, func(ctx context.Context, t *tasks.Task) (bool, error) {
		_, err := e.svc.Answer(ctx, t, tasks.Given(map[string]tasks.Answer{"confirm": {Action: "decline"}}))
		return false, err
	})
	if err != nil || !task.Ended() || task.Result == nil || !task.Result.IsError || !strings.Contains(task.Result.Text, "taskgate.Declined") {
		t.Fatalf("a wait whose asker answers: %v, %+v", err, task.Result)
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	long := e.start(t, ctx, "echo", `{"seconds": 60, "text": "x"}`)
	if err := e.svc.Wait(short, long, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait past its deadline: %v", err)
	}
}

func TestEngineDownIsUnavailable(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.Start(context.Background(), tasks.StartRequest{Tool: e.tool(t, "unreachable"), Args: json.RawMessage(`{}`)})
	var te *tasks.Error
	if !errors.As(err, &te) || te.Kind != tasks.Unavailable || te.Message != "Failed to start unreachable" || !errors.Is(err, adapters.ErrUnavailable) {
		t.Fatalf("a start on an engine that is down: %v", err)
	}
}

func TestRunWaitsForTheOutcome(t *testing.T) {
	e := newEnv(t)
	task, err := e.svc.Run(context.Background(), tasks.StartRequest{Tool: e.tool(t, "sync_echo"), Args: json.RawMessage(`{"seconds": 0, "text": "now"}`)})
	if err != nil || !task.Ended() || task.Result.Text != `{"text":"now"}` || task.ID != "" || task.Ref() == (adapters.Ref{}) {
		t.Fatalf("Run: %+v, %v", task, err)
	}
}

// TestEngineCallsAreChargedAfterTheFirst: a request pays for its first engine call when it is
// admitted; a key looked up across the tools that may run as tasks pays for every further call.
func TestEngineCallsAreChargedAfterTheFirst(t *testing.T) {
	e := newEnv(t)
	var paid atomic.Int64
	ctx := tasks.Charging(context.Background(), tasks.NewPayer(func() { paid.Add(1) }))
	if _, err := e.svc.ReadKeyed(ctx, "no-such-key"); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("an unknown key: %v", err)
	}
	// Three tools may run as tasks, two of them on one target: their lookups of one key are one
	// engine call when they meet in the coalescing layer, two when they do not.
	calls := e.mem.describes.Load()
	if n := paid.Load(); calls < 2 || n != calls-1 {
		t.Fatalf("%d engine calls paid for, want %d (all but the first of %d)", n, calls-1, calls)
	}
	if _, err := e.svc.ReadKeyed(ctx, "no-such-key"); tasks.KindOf(err) != tasks.NotFound || paid.Load() != calls-1 || e.mem.describes.Load() != calls {
		t.Fatalf("the same unknown key again: %v, %d paid, want it known and free", err, paid.Load())
	}
}

// TestAKeyIsReadThroughTheToolItNamed: a key that a replica started or found an execution with is
// read through that tool alone, not asked of every tool that may run as a task.
func TestAKeyIsReadThroughTheToolItNamed(t *testing.T) {
	e := newEnv(t)
	ctx := as("alice")
	started, err := e.svc.Start(ctx, tasks.StartRequest{Tool: e.tool(t, "echo"), Args: json.RawMessage(`{"seconds": 60, "text": "k"}`), Key: "k-1"})
	if err != nil {
		t.Fatal(err)
	}
	before := e.mem.describes.Load()
	for range 3 {
		if byKey, err := e.svc.ReadKeyed(ctx, "k-1"); err != nil || byKey.Ref() != started.Ref() {
			t.Fatalf("read by the key: %+v, %v", byKey, err)
		}
	}
	if n := e.mem.describes.Load() - before; n > 1 {
		t.Errorf("%d engine reads for three reads by a key just started with; want one at most (its reading is fresh)", n)
	}
}

// TestKnowsNoMCP: the task service imports neither go-sdk nor any JSON-RPC package.
func TestKnowsNoMCP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "modelcontextprotocol") || strings.Contains(dep, "jsonrpc") || strings.HasSuffix(dep, "/mcpserver") {
			t.Errorf("package tasks depends on %s", dep)
		}
	}
}

// TestResultsThatBreakTheirSchemaFail: an output that is not what the tool's outputSchema
// promises ends the task failed, saying which field is at fault.
func TestResultsThatBreakTheirSchemaFail(t *testing.T) {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines:
  mem: {memory: {}}
tools:
  - name: echo_count
    description: Promises a number, echoes a text.
    engine: mem
    job: {program: echo}
    inputSchema: {type: object}
    outputSchema: {type: object, properties: {text: {type: number}}, required: [text]}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.Engines["mem"].Config.Open(t.Context(), adapters.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	sealed, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": e}, Tokens: sealed})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("echo_count")
	task, err := svc.Start(context.Background(), tasks.StartRequest{Tool: tool, Args: json.RawMessage(`{"seconds": 0, "text": "three"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for !task.Ended() {
		if task, err = svc.Read(context.Background(), task.ID); err != nil {
			t.Fatal(err)
		}
	}
	const want = `echo_count succeeded, but its output could not be turned into the tool result: tool "echo_count": the result does not fit its outputSchema: result field "text": has type string, want number`
	if task.Failure == nil || task.Failure.Message != want || task.Result != nil {
		t.Fatalf("the task: failure %+v, result %+v; want the failure %q", task.Failure, task.Result, want)
	}
}
