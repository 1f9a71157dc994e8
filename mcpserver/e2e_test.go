package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const ext = "io.modelcontextprotocol/tasks"

// counting passes every call to the real engine and counts starts, engine reads and answers, so
// tests can show that a rejected request reached no engine.
type counting struct {
	adapters.Conn
	starts, reads, answers atomic.Int64
	// started is the Ref of the latest start.
	started atomic.Value
}

func (c *counting) Start(ctx context.Context, t adapters.Target, r adapters.StartRequest) (adapters.Ref, error) {
	c.starts.Add(1)
	ref, err := c.Conn.Start(ctx, t, r)
	if err == nil {
		c.started.Store(ref)
	}
	return ref, err
}

func (c *counting) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	c.reads.Add(1)
	return c.Conn.Describe(ctx, t, r)
}

func (c *counting) Answer(ctx context.Context, t adapters.Target, r adapters.Ref, key string, a adapters.Answer) error {
	c.answers.Add(1)
	return c.Conn.Answer(ctx, t, r, key, a)
}

type env struct {
	srv    *mcpserver.Server
	svc    *tasks.Service
	url    string
	engine adapters.Conn
	count  *counting
	tokens token.Codec
}

// ref opens one of the env's own task ids.
func (e *env) ref(t *testing.T, id string) adapters.Ref {
	t.Helper()
	c, err := e.tokens.Open(id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c.Ref
}

// workflow opens one of the env's own task ids as the workflow id and run id it names.
func (e *env) workflow(t *testing.T, id string) (workflowID, runID string) {
	t.Helper()
	workflowID, runID, ok := temporal.WorkflowOf(e.ref(t, id))
	if !ok {
		t.Fatalf("task %s names no Temporal workflow", id)
	}
	return workflowID, runID
}

var workerOnce sync.Once

func newEnv(t *testing.T, tokens token.Codec, mode ...mcpserver.NoTaskMode) *env {
	t.Helper()
	return newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		if tokens != nil {
			tc.Tokens = tokens
		}
		if len(mode) > 0 {
			c.NoTaskClients = mode[0]
		}
	})
}

// newEnvConfig serves the example and test tools on the Temporal server, with the task service's
// and the server's configs edited.
func newEnvConfig(t *testing.T, edit func(*tasks.Config, *mcpserver.Config)) *env {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	t.Setenv("TEMPORAL_ADDRESS", addr)
	set, err := mapping.Load("../examples/temporal/tools.yaml", "testdata/test-tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := temporal.New(context.Background(), temporal.Config{Address: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	workerOnce.Do(func() { // one worker for the package, on a connection of its own
		we, err := temporal.New(context.Background(), temporal.Config{Address: addr, Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		w := worker.New(testenv.As[client.Client](t, we), temporalexamples.TaskQueue, worker.Options{})
		temporalexamples.Register(w)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
	})
	c := &counting{Conn: eng}
	keys, _ := token.ParseKeys(token.NewKey("t1"))
	sealed, _ := token.NewSealed(keys)
	// Rate limits have tests of their own; the others send as fast as they like.
	tc := tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"local-temporal": c}, Tokens: sealed}
	cfg := mcpserver.Config{Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1}}
	edit(&tc, &cfg)
	srv, svc := newServer(t, tc, cfg)
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return &env{srv: srv, svc: svc, url: hs.URL, engine: eng, count: c, tokens: tc.Tokens}
}

// newServer builds the task service tc configures and a server of it, configured by c.
func newServer(t testing.TB, tc tasks.Config, c mcpserver.Config) (*mcpserver.Server, *tasks.Service) {
	t.Helper()
	svc, err := tasks.New(tc)
	if err != nil {
		t.Fatal(err)
	}
	c.Tasks = svc
	srv, err := mcpserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return srv, svc
}

func (e *env) client(extensions ...string) *rpctest.Client {
	return rpctest.Modern(rpctest.HTTP{URL: e.url}, extensions...)
}

func call(t *testing.T, c *rpctest.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	return c.Decode(t, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// waitFor polls tasks/get until the status is one of want, and returns the last task.
func waitFor(t *testing.T, c *rpctest.Client, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.Decode(t, "tasks/get", map[string]any{"taskId": id})
		for _, w := range want {
			if got["status"] == w {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %v after 30s, want %v: %v", id, got["status"], want, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestEchoCompletesWithStructuredResult(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	created := call(t, c, "wait_and_echo", map[string]any{"seconds": 2, "text": "hello"})
	if created["resultType"] != "task" || created["status"] != "working" || created["ttlMs"] != float64(86400000) || created["pollIntervalMs"] != float64(1000) {
		t.Fatalf("CreateTaskResult = %v", created)
	}
	for _, k := range []string{"taskId", "createdAt", "lastUpdatedAt"} {
		if s, _ := created[k].(string); s == "" {
			t.Fatalf("CreateTaskResult has no %s: %v", k, created)
		}
	}
	id := created["taskId"].(string)
	if !strings.HasPrefix(id, "tg1.t1.") {
		t.Fatalf("task id %q is not a sealed token", id)
	}
	got := c.Decode(t, "tasks/get", map[string]any{"taskId": id})
	if got["resultType"] != "complete" || got["status"] != "working" || got["taskId"] != id {
		t.Fatalf("first tasks/get = %v", got)
	}
	done := waitFor(t, c, id, "completed")
	res := done["result"].(map[string]any)
	if sc, _ := json.Marshal(res["structuredContent"]); string(sc) != `{"text":"hello"}` {
		t.Fatalf("structuredContent = %s, want {\"text\":\"hello\"}; task %v", sc, done)
	}
	if res["isError"] == true {
		t.Fatalf("isError on success: %v", res)
	}
}

func TestFailureIsCompletedWithIsError(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	id := call(t, c, "wait_and_fail", map[string]any{"seconds": 1, "reason": "the disk is full"})["taskId"].(string)
	done := waitFor(t, c, id, "completed", "failed")
	res := done["result"].(map[string]any)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if done["status"] != "completed" || res["isError"] != true || text != "The workflow ended FAILED with error Example.Failure: the disk is full" {
		t.Fatalf("task = %v", done)
	}
}

func TestCancelCancelsTheWorkflow(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 60, "text": "never"})["taskId"].(string)
	waitFor(t, c, id, "working")
	if got := c.Decode(t, "tasks/cancel", map[string]any{"taskId": id}); got["resultType"] != "complete" {
		t.Fatalf("tasks/cancel = %v", got)
	}
	waitFor(t, c, id, "cancelled")
	wf, run := e.workflow(t, id)
	d, err := testenv.As[client.Client](t, e.engine).DescribeWorkflow(context.Background(), wf, run)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.RawResponse.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Fatalf("Temporal status = %v, want CANCELED", st)
	}
}

// statuses are the status of each notification, in order.
func statuses(notified []map[string]any) []string {
	var out []string
	for _, n := range notified {
		out = append(out, n["status"].(string))
	}
	return out
}

// TestTemporalTaskListenedToTheEnd: a listener is told of a Temporal workflow as it runs and at
// its end, with its result.
func TestTemporalTaskListenedToTheEnd(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 2, "text": "from a workflow"})["taskId"].(string)
	notified := rpctest.ListenToEnd(t, c, id)
	got := statuses(notified)
	if len(got) < 2 || got[0] != "working" || got[len(got)-1] != "completed" {
		t.Fatalf("notified %v, want working, then completed", got)
	}
	if res := notified[len(notified)-1]["result"].(map[string]any); jsonOf(res["structuredContent"]) != `{"text":"from a workflow"}` {
		t.Fatalf("the end carries %v", res)
	}
}
