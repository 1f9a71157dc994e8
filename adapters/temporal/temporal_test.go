package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

// env is one engine and one in-process worker serving the examples on a task queue of its own.
type env struct {
	engine   driver.Conn
	queue    string
	unpolled string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e, err := temporal.New(ctx, temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	queue := "taskgate-test-" + uuid.NewString()
	w := worker.New(sdkClient(t, e), queue, worker.Options{})
	temporalexamples.Register(w)
	registerTestWorkflows(w)
	if err := w.Start(); err != nil {
		t.Fatalf("starting the worker: %v", err)
	}
	t.Cleanup(w.Stop)
	return &env{engine: e, queue: queue, unpolled: "taskgate-unpolled-" + uuid.NewString()}
}

func (v *env) target(name string) driver.Target {
	return temporal.Workflow(name, v.queue, 0)
}

type harness struct {
	t *testing.T
	*env
}

func (h *harness) Conn() driver.Conn { return h.engine }

func (h *harness) Driver() driver.Driver { return temporal.Driver{} }

// Unreachable dials the server through a proxy, then cuts the proxy: New checks that the server
// answers, so an engine for a closed port cannot be made directly.
func (h *harness) Unreachable() driver.Conn {
	addr, cut, _ := enginetest.Switch(h.t, testenv.TemporalAddress(h.t))
	e, err := temporal.New(h.t.Context(), temporal.Config{Address: addr})
	if err != nil {
		h.t.Fatal(err)
	}
	cut()
	return e
}

func (h *harness) Target(name string) driver.Target {
	switch name {
	case "echo":
		return h.target(temporalexamples.WaitAndEchoName)
	case "fail":
		return h.target(temporalexamples.WaitAndFailName)
	case "timeout":
		return temporal.Workflow(temporalexamples.WaitAndEchoName, h.queue, 2*time.Second)
	case "unpolled", "absent":
		// The timeout only keeps executions nobody will ever serve from piling up in the server.
		return temporal.Workflow(temporalexamples.WaitAndEchoName, h.unpolled, time.Minute)
	case "wrongkind":
		return temporal.Workflow(temporalexamples.WaitAndEchoName, "", 0)
	case "ask":
		return h.target(temporalexamples.AskAndEchoName)
	case "ask-two":
		return h.target(temporalexamples.AskTwoAndEchoName)
	case "steps":
		return h.target(temporalexamples.BuildReleaseName)
	}
	h.t.Fatalf("the harness has no target %q", name)
	return driver.Target{}
}

func (h *harness) Missing() driver.Ref {
	return driver.Ref{ID: "taskgate/WaitAndEcho/" + driver.CallerTag("") + "/" + uuid.NewString() + "/" + uuid.NewString()}
}

func (h *harness) Foreign() []driver.Ref { return foreignRefs() }

func foreignRefs() []driver.Ref {
	id, run := uuid.NewString(), uuid.NewString()
	return []driver.Ref{
		{ID: "taskgate/WaitAndFail/" + id + "/" + run},
		{ID: "taskgate/WaitAndEchoAgain/" + id + "/" + run},
		{ID: "taskgate/WaitAndEcho/" + id + "/x/" + run},
		{ID: "other/WaitAndEcho/" + id + "/" + run},
		{ID: "WaitAndEcho/" + id + "/" + run},
		{ID: "taskgate/WaitAndEcho/" + id},
		{ID: "taskgate/WaitAndEcho/" + id + "/not-a-uuid"},
		{ID: "taskgate/WaitAndEcho/" + id + "/" + strings.ToUpper(run)},
		{ID: "taskgate/WaitAndEcho/" + strings.ToUpper(id) + "/" + run},
		{ID: "taskgate/WaitAndEcho/not-a-uuid/" + run},
		{ID: "taskgate/WaitAndEcho/k-" + strings.Repeat("a", 31) + "/" + run},
		{ID: "taskgate/WaitAndEcho/k-" + strings.Repeat("A", 32) + "/" + run},
		{ID: "taskgate/WaitAndEcho/k-" + strings.Repeat("g", 32) + "/" + run},
		{ID: "taskgate/WaitAndEcho//" + run},
		{ID: "taskgate/WaitAndEcho/" + driver.CallerTag("") + "/" + id + "/"},
		{ID: run + "/" + run},
	}
}

func (h *harness) ShouldSkip(string) (bool, string) { return false, "" }

func (h *harness) Close() {}

func TestConformance(t *testing.T) {
	v := newEnv(t)
	enginetest.RunConformanceTests(t, func(t *testing.T) enginetest.Harness { return &harness{t: t, env: v} })
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func start(ctx context.Context, t *testing.T, e driver.Conn, tg driver.Target, in any, key string) driver.Ref {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: b, Key: key})
	if err != nil {
		t.Fatalf("Start %s: %v", tg.Name, err)
	}
	return r
}

// workflowOf reads a Ref the engine gave as its workflow id and first run id.
func workflowOf(t *testing.T, r driver.Ref) (id, run string) {
	t.Helper()
	id, run, ok := temporal.WorkflowOf(r)
	if !ok {
		t.Fatalf("%v is not a Ref of a Temporal engine", r)
	}
	return id, run
}

// latestRun is the Ref of r's workflow id's latest run chain.
func latestRun(t *testing.T, r driver.Ref) driver.Ref {
	id, _ := workflowOf(t, r)
	return driver.Ref{ID: id + "/"}
}

// lazy is a Conn that has not dialled the frontend yet: opened from a block, it makes no call.
func lazy(t *testing.T) driver.Conn {
	t.Helper()
	e, err := open(t, `{address: "127.0.0.1:1"}`, driver.Env{"TEMPORAL_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none.toml")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sdkClient is e's SDK client, through As.
func sdkClient(t *testing.T, e driver.Conn) client.Client {
	t.Helper()
	var c client.Client
	if !driver.As(e, &c) {
		t.Fatal("As(*client.Client) = false")
	}
	return c
}

// TestAs: a Conn answers its SDK client, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	e := lazy(t)
	var c client.Client
	if !driver.As(e, &c) || c == nil {
		t.Errorf("As(*client.Client) = false, or a nil client")
	}
	other := &http.Client{}
	if driver.As(e, &other) || other == nil {
		t.Errorf("As(**http.Client) = true, or it changed its target")
	}
}

// describeRun reads one run as the server reports it, bypassing the adapter.
func describeRun(ctx context.Context, t *testing.T, e driver.Conn, r driver.Ref) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	id, run := workflowOf(t, r)
	d, err := sdkClient(t, e).DescribeWorkflow(ctx, id, run)
	if err != nil {
		t.Fatal(err)
	}
	return d.RawResponse
}

func TestContinueAsNewFollowsTheChain(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.ContinueAsNewEchoName)
	r := start(ctx, t, e, tg, map[string]any{"seconds": 1, "text": "chained"}, "")

	out, err := awaitEnd(ctx, e, tg, r)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := driver.Outcome{State: driver.Succeeded, Native: "COMPLETED", Output: json.RawMessage(`{"text":"chained"}`)}
	if !reflect.DeepEqual(withoutEnd(out), want) {
		t.Errorf("Wait: %+v, want %+v", out, want)
	}
	first := describeRun(ctx, t, e, r)
	if got := first.GetWorkflowExecutionInfo().GetStatus(); got != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		t.Fatalf("the first run is %v: the workflow did not continue as new", got)
	}
	st, err := e.Describe(ctx, tg, r)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if st.State != driver.Succeeded || st.Native != "COMPLETED" {
		t.Errorf("Describe: state %v native %q, want succeeded COMPLETED", st.State, st.Native)
	}
	if began := first.GetWorkflowExecutionInfo().GetStartTime().AsTime().Truncate(time.Microsecond); !st.Started.Equal(began) {
		t.Errorf("Describe: Started %v, want the first run's start %v (to the microsecond)", st.Started, began)
	}
	again, err := e.Outcome(ctx, tg, r)
	if err != nil || !reflect.DeepEqual(withoutEnd(again), want) {
		t.Errorf("Outcome: %+v, %v; want %+v", again, err, want)
	}
	if err := e.Cancel(ctx, tg, r, "late"); !errors.Is(err, driver.ErrEnded) {
		t.Errorf("Cancel of the ended chain: %v, want ErrEnded", err)
	}
}

func TestContinueAsNewDescribesTheCurrentRun(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.ContinueAsNewEchoName)
	r := start(ctx, t, e, tg, map[string]any{"seconds": 2, "text": "cancel me"}, "")

	// Wait until the chain is in its second run, then cancel through the first run's Ref.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if describeRun(ctx, t, e, r).GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the workflow did not continue as new in time")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := e.Describe(ctx, tg, r)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if st.State != driver.Working || st.Native != "RUNNING" {
		t.Fatalf("Describe of the continued chain: state %v native %q, want working RUNNING", st.State, st.Native)
	}
	if err := e.Cancel(ctx, tg, r, "stop the second run"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	out, err := awaitEnd(ctx, e, tg, r)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := driver.Outcome{State: driver.Cancelled, Native: "CANCELED", Cause: "stop the second run"}
	if !reflect.DeepEqual(withoutEnd(out), want) {
		t.Errorf("Wait: %+v, want %+v", out, want)
	}
}

// awaitWorking polls Describe until a worker has picked the execution up: Submitted may come
// before Working, and nothing else may.
func awaitWorking(ctx context.Context, t *testing.T, e driver.Conn, tg driver.Target, r driver.Ref) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := e.Describe(ctx, tg, r)
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		switch {
		case st.State == driver.Working && st.Native == "RUNNING":
			return
		case st.State != driver.Submitted:
			t.Fatalf("Describe before Working: state %v native %q", st.State, st.Native)
		case time.Now().After(deadline):
			t.Fatalf("still submitted after 10s, though a worker polls the task queue of %s", tg.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTerminatedReadsCancelled(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.WaitAndEchoName)
	r := start(ctx, t, e, tg, map[string]any{"seconds": 60, "text": "x"}, "")
	awaitWorking(ctx, t, e, tg, r)

	id, run := workflowOf(t, r)
	if err := sdkClient(t, e).TerminateWorkflow(ctx, id, run, "operator stopped it"); err != nil {
		t.Fatal(err)
	}
	st, err := e.Describe(ctx, tg, r)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if st.State != driver.Cancelled || st.Native != "TERMINATED" {
		t.Errorf("Describe: state %v native %q, want cancelled TERMINATED", st.State, st.Native)
	}
	out, err := e.Outcome(ctx, tg, r)
	if err != nil {
		t.Fatalf("Outcome: %v", err)
	}
	want := driver.Outcome{State: driver.Cancelled, Native: "TERMINATED", Cause: "operator stopped it"}
	if !reflect.DeepEqual(withoutEnd(out), want) {
		t.Errorf("Outcome: %+v, want %+v", out, want)
	}
}

func TestSubmittedSurvivesACancelRequest(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e := v.engine
	tg := temporal.Workflow(temporalexamples.WaitAndEchoName, v.unpolled, time.Minute)
	r := start(ctx, t, e, tg, map[string]any{"seconds": 0, "text": "x"}, "")

	st, err := e.Describe(ctx, tg, r)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	want := driver.Status{State: driver.Submitted, Native: "RUNNING", Message: fmt.Sprintf("waiting for a worker on task queue %q", v.unpolled), Started: st.Started, Updated: st.Started}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Describe: %+v, want %+v", st, want)
	}
	// Every task waiting on the queue keeps this message in its reading: one copy serves them all.
	other, err := e.Describe(ctx, tg, start(ctx, t, e, tg, map[string]any{"seconds": 0, "text": "y"}, ""))
	if err != nil || unsafe.StringData(other.Message) != unsafe.StringData(st.Message) {
		t.Errorf("Describe of a second run waiting on the queue: %+v, %v; want its message the first one's, not a copy", other, err)
	}
	if err := e.Cancel(ctx, tg, r, "never mind"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	st, err = e.Describe(ctx, tg, r)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	want.Message = "cancellation requested"
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Describe after a cancel request: %+v, want %+v", st, want)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)

	t.Run("polled", func(t *testing.T) {
		// The server learns of the worker's pollers when their first poll arrives.
		deadline := time.Now().Add(10 * time.Second)
		for {
			info, err := v.engine.Check(ctx, v.target(temporalexamples.WaitAndEchoName))
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Warnings) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Check of a polled queue still warns: %q", info.Warnings)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	t.Run("unpolled", func(t *testing.T) {
		info, err := v.engine.Check(ctx, temporal.Workflow("WaitAndEcho", v.unpolled, 0))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf(`no worker polls task queue %q in namespace "default": executions of WaitAndEcho stay submitted until a worker that registers it polls that queue`, v.unpolled)}
		if !reflect.DeepEqual(info.Warnings, want) {
			t.Errorf("Check warnings: %q, want %q", info.Warnings, want)
		}
	})
	t.Run("missing namespace", func(t *testing.T) {
		addr := testenv.TemporalAddress(t)
		e, err := temporal.New(ctx, temporal.Config{Address: addr, Namespace: "no-such-namespace"})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		_, err = e.Check(ctx, v.target("WaitAndEcho"))
		want := fmt.Sprintf(`temporal: checking namespace no-such-namespace: namespace "no-such-namespace" does not exist on %s: create it (temporal operator namespace create) or fix the namespace setting: `, addr)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Check in a missing namespace: error %v, want it to start with %q", err, want)
		}
	})
	t.Run("no queue", func(t *testing.T) {
		_, err := v.engine.Check(ctx, temporal.Workflow("WaitAndEcho", "", 0))
		const want = "temporal: invalid request: target WaitAndEcho has no task queue: set the queue its workers poll"
		if err == nil || err.Error() != want || !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("Check without a queue: error %v, want %q", err, want)
		}
	})
	t.Run("another engine's target", func(t *testing.T) {
		_, err := v.engine.Check(ctx, driver.Target{Name: "echo"})
		const want = `temporal: invalid request: target "echo" is not a Temporal workflow: map it as workflow: {type: ..., taskQueue: ...}`
		if err == nil || err.Error() != want || !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("Check of a target of no workflow: error %v, want %q", err, want)
		}
	})
}

func TestNewUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := temporal.New(ctx, temporal.Config{Address: "127.0.0.1:1"})
	const want = "temporal: cannot reach the Temporal frontend at 127.0.0.1:1: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; check the address, TLS and API key, and that the server is running") {
		t.Errorf("New with nothing listening: error %v, want %q...", err, want)
	}
}

func TestOwns(t *testing.T) {
	t.Parallel()
	e := lazy(t) // Owns makes no call
	echo := temporal.Workflow("WaitAndEcho", "q", 0)
	tag := driver.CallerTag("alice") + "/"
	id, run := tag+uuid.NewString(), uuid.NewString()
	key := tag + "k-0123456789abcdef0123456789abcdef"
	tests := []struct {
		name string
		t    driver.Target
		r    driver.Ref
		want bool
	}{
		{"fresh", echo, driver.Ref{ID: "taskgate/WaitAndEcho/" + id + "/" + run}, true},
		{"keyed", echo, driver.Ref{ID: "taskgate/WaitAndEcho/" + key + "/" + run}, true},
		{"type with a slash", temporal.Workflow("a/b", "q", 0), driver.Ref{ID: "taskgate/a/b/" + id + "/" + run}, true},
		{"other type's ref under a prefix type", temporal.Workflow("a", "q", 0), driver.Ref{ID: "taskgate/a/b/" + id + "/" + run}, false},
		{"empty target name", temporal.Workflow("", "q", 0), driver.Ref{ID: "taskgate//" + id + "/" + run}, false},
		{"zero ref", echo, driver.Ref{}, false},
		{"not a workflow target", driver.Target{Name: "WaitAndEcho"}, driver.Ref{ID: "taskgate/WaitAndEcho/" + id + "/" + run}, false},
		{"another caller's", echo, driver.Ref{ID: "taskgate/WaitAndEcho/" + driver.CallerTag("bob") + "/" + uuid.NewString() + "/" + run}, false},
		{"no caller tag", echo, driver.Ref{ID: "taskgate/WaitAndEcho/" + uuid.NewString() + "/" + run}, false},
	}
	for i, r := range foreignRefs() {
		tests = append(tests, struct {
			name string
			t    driver.Target
			r    driver.Ref
			want bool
		}{fmt.Sprintf("foreign %d", i), echo, r, false})
	}
	for _, tc := range tests {
		if got := e.Owns(tc.t, tc.r, "alice"); got != tc.want {
			t.Errorf("%s: Owns(%q, %v) = %v, want %v", tc.name, tc.t.Name, tc.r, got, tc.want)
		}
	}
}

func TestStartRecordsInputAndCaller(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.WaitAndEchoName)
	in := json.RawMessage(`{ "seconds": 0, "text": "memo" }`)
	key := "memo-" + uuid.NewString()
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: in, Key: key, Caller: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	memo := map[string]string{}
	for k, p := range describeRun(ctx, t, e, r).GetWorkflowExecutionInfo().GetMemo().GetFields() {
		var s string
		if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
			t.Fatal(err)
		}
		memo[k] = s
	}
	// sha256 of the compacted input {"seconds":0,"text":"memo"}
	want := map[string]string{
		temporal.MemoInputSHA256: "593a292bc95719c524b32cc2a3ee614c9ccd5a84becf447bbafc460c2412eb36",
		temporal.MemoCaller:      "alice",
	}
	if !reflect.DeepEqual(memo, want) {
		t.Errorf("memo %v, want %v", memo, want)
	}
	wid, _ := workflowOf(t, r)
	if !strings.HasPrefix(wid, "taskgate/WaitAndEcho/"+driver.CallerTag("alice")+"/k-") {
		t.Errorf("keyed workflow id %q", wid)
	}

	// Whitespace does not change the input; another caller does not get alice's execution.
	same, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"memo"}`), Key: key, Caller: "alice"})
	if err != nil || same != r {
		t.Errorf("same key, same input, compacted: %v, %v; want %v", same, err, r)
	}
	bob, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"bob's"}`), Key: key, Caller: "bob"})
	if err != nil || bob == r {
		t.Errorf("same key, other caller: %v, %v; want an execution of bob's own", bob, err)
	}
	_, err = e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"other"}`), Key: key, Caller: "alice"})
	wantOther := "temporal: start WaitAndEcho: idempotency key already used with other input: workflow " + wid + " was started under this key with other arguments; repeat those arguments, or use a new key"
	if err == nil || err.Error() != wantOther {
		t.Errorf("same key, other input: %v, want %q", err, wantOther)
	}
}

func TestStartRejectsBadInput(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	_, err := v.engine.Start(ctx, v.target("WaitAndEcho"), driver.StartRequest{Input: json.RawMessage(`{"seconds":`)})
	const want = "temporal: invalid request: the input is not valid JSON: unexpected end of JSON input"
	if err == nil || err.Error() != want || !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("Start with broken JSON: %v, want %q", err, want)
	}
}

// TestAnInputOverTheServersLimit: the server refuses a payload over its limit (2 MiB by default)
// as invalid; the caller is told so in words that name nothing of the engine's, while the error
// keeps the server's own for the log.
func TestAnInputOverTheServersLimit(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	input, _ := json.Marshal(map[string]any{"seconds": 0, "text": strings.Repeat("x", 2560<<10)})
	_, err := v.engine.Start(ctx, v.target("WaitAndEcho"), driver.StartRequest{Input: input})
	const reason = "the request is too large: the engine takes at most 2 MiB in one payload by default"
	if !errors.Is(err, driver.ErrInvalid) || driver.ReasonOf(err, "") != reason || !strings.Contains(err.Error(), "size exceeds limit") {
		t.Errorf("Start with 2.5 MiB of input: %v, reason for the caller %q; want ErrInvalid with the server's words, and %q", err, driver.ReasonOf(err, ""), reason)
	}
}

func TestSummarizeDataset(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.SummarizeDatasetName)

	t.Run("summary", func(t *testing.T) {
		in := json.RawMessage(`{"name":"latency","values":[12,7,3,9,14,3],"stepSeconds":0.2}`)
		_, out, err := runToEnd(ctx, e, tg, driver.StartRequest{Input: in})
		if err != nil {
			t.Fatal(err)
		}
		if out.State != driver.Succeeded {
			t.Fatalf("outcome %+v, want succeeded", out)
		}
		var got map[string]any
		if err := json.Unmarshal(out.Output, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"name": "latency", "count": 6.0, "min": 3.0, "max": 14.0, "mean": 8.0, "median": 8.0,
			"summary": "## latency\n\n| count | min | max | mean | median |\n|------:|----:|----:|-----:|-------:|\n| 6 | 3 | 14 | 8 | 8 |\n",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("output %s, want %v", out.Output, want)
		}
	})
	t.Run("no values", func(t *testing.T) {
		_, out, err := runToEnd(ctx, e, tg, driver.StartRequest{Input: json.RawMessage(`{"name":"empty","values":[]}`)})
		if err != nil {
			t.Fatal(err)
		}
		want := driver.Outcome{State: driver.Failed, Native: "FAILED", Error: "Dataset.Invalid",
			Cause: `dataset "empty" has no values: pass at least one number in values`}
		if !reflect.DeepEqual(withoutEnd(out), want) {
			t.Errorf("outcome %+v, want %+v", out, want)
		}
	})
}

// withoutEnd drops the outcome's Status, which the conformance suite checks.
func withoutEnd(o driver.Outcome) driver.Outcome {
	o.Status = driver.Status{}
	return o
}
