package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// proxy forwards TCP connections to a real server until it is cut.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func (p *proxy) open(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestEngineOutageIsRetryableAndChangesNothing: while the engine is unreachable, polls answer a
// retryable -32603; once it is back, the same id reads the same task.
func TestEngineOutageIsRetryableAndChangesNothing(t *testing.T) {
	e := newEnv(t, nil)
	p := &proxy{addr: "127.0.0.1:0", target: testenv.TemporalAddress(t)}
	p.open(t)
	t.Setenv("TEMPORAL_ADDRESS", p.addr)
	set, err := mapping.Load("../examples/temporal/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := temporal.New(context.Background(), temporal.Config{Address: p.addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, _ := newServer(t, tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"local-temporal": eng}, Tokens: e.tokens}, mcpserver.Config{})
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	c := rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	created := call(t, c, "wait_and_echo", map[string]any{"seconds": 4, "text": "outage"})
	id := created["taskId"].(string)
	// The start is a first reading, which answers polls for the poll interval: past it, a poll
	// must read the engine.
	time.Sleep(time.Duration(created["pollIntervalMs"].(float64)) * time.Millisecond)

	p.cut()
	_, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": id})
	var data struct {
		Retryable bool   `json:"retryable"`
		ErrorID   string `json:"errorId"`
	}
	if rerr == nil || rerr.Code != -32603 || json.Unmarshal(rerr.Data, &data) != nil || !data.Retryable || !strings.Contains(rerr.Message, data.ErrorID) {
		t.Fatalf("tasks/get while the engine is down: %v, want a retryable -32603", rerr)
	}
	t.Logf("while down: %s", rerr.Message)
	p.open(t)
	// gRPC reconnects on its own; until it has, polls keep answering retryable errors.
	for deadline := time.Now().Add(30 * time.Second); ; {
		raw, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": id})
		if rerr != nil && !strings.Contains(string(rerr.Data), `"retryable":true`) {
			t.Fatalf("after the outage: %v", rerr)
		}
		if rerr == nil && jsonOf(raw) != "" && strings.Contains(string(raw), `"status":"completed"`) {
			if !strings.Contains(string(raw), `"structuredContent":{"text":"outage"}`) {
				t.Fatalf("after the outage: %s", raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed 30s after the engine came back: %s %v", raw, rerr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// invisibleAtFirst answers "not found" for its first reads of each execution, as an eventually
// consistent engine may right after a start; all else goes to the real engine.
type invisibleAtFirst struct {
	adapters.Conn
	mu     sync.Mutex
	misses map[adapters.Ref]int
}

func (e *invisibleAtFirst) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	e.mu.Lock()
	e.misses[r]++
	n := e.misses[r]
	e.mu.Unlock()
	if n <= 2 {
		return adapters.Status{}, adapters.ErrNotFound
	}
	return e.Conn.Describe(ctx, t, r)
}

func TestNotYetVisibleReadsAsWorkingWithinTheGraceWindow(t *testing.T) {
	e := newEnv(t, nil)
	set, err := mapping.Load("../examples/temporal/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// invisibleAtFirst declares no visibility lag (it wraps the Conn's interface alone): the
	// Engine gives it adapters.DefaultVisibilityLag, the grace window here.
	slow := &invisibleAtFirst{Conn: e.engine, misses: map[adapters.Ref]int{}}
	srv, _ := newServer(t, tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"local-temporal": slow}, Tokens: e.tokens}, mcpserver.Config{})
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	c := rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 1, "text": "eventually"})["taskId"].(string)
	for i := range 2 {
		if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Fatalf("read %d while not yet visible: %v, want working", i+1, got)
		}
	}
	waitFor(t, c, id, "completed")

	// Past the grace window, "not found" is not found.
	old := e.tokens.(*token.Sealed)
	claims, _ := old.Open(id, time.Now())
	claims.Created = time.Now().Add(-time.Minute)
	claims.Ref.ID += "-gone"
	slow.misses[claims.Ref] = -100 // always not found: the engine has no such execution anyway
	_, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": old.Issue(claims)})
	wantError(t, "not found past the grace window", rerr, -32602, "Failed to retrieve task: Task not found")
}

// expressEngine reports every target as sync-only, as Step Functions does for Express state
// machines (which the emulator here cannot create), in the words of the Step Functions driver.
type expressEngine struct{ adapters.Conn }

func (expressEngine) Check(_ context.Context, t adapters.Target) (adapters.TargetInfo, error) {
	return adapters.TargetInfo{SyncOnly: t.Name + " cannot be described after it starts (an Express state machine)"}, nil
}

func TestSyncOnlyTargetsCannotBackAsyncTools(t *testing.T) {
	set, err := mapping.Parse("express.yaml", []byte(`
engines:
  aws: {stepfunctions: {region: us-east-1}}
tools:
  - name: fast_lookup
    description: An Express state machine.
    engine: aws
    stateMachine: arn:aws:states:us-east-1:123456789012:stateMachine:fast-lookup
    inputSchema: {type: object}
`))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := token.ParseKeys(token.NewKey("x"))
	tokens, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"aws": expressEngine{}}, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CheckTargets(context.Background())
	want := `tool "fast_lookup" (express.yaml:5): arn:aws:states:us-east-1:123456789012:stateMachine:fast-lookup cannot be described after it starts (an Express state machine), so it cannot back a task: set ` + "`taskSupport: forbidden`"
	if err == nil || err.Error() != want {
		t.Fatalf("CheckTargets = %v\nwant %s", err, want)
	}
}

// TestTasksCrossDialects: one task id, read through every dialect that can read it.
func TestTasksCrossDialects(t *testing.T) {
	e := newEnv(t, nil)
	modern := e.client(ext)
	id := call(t, modern, "wait_and_echo", map[string]any{"seconds": 0, "text": "shared"})["taskId"].(string)
	waitFor(t, modern, id, "completed")
	legacy := rpctest.Legacy(rpctest.HTTP{URL: e.url})
	if got := legacy.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "completed" || got["resultType"] != nil {
		t.Fatalf("2025-11-25 tasks/get of a 2026-07-28 task = %v", got)
	}
	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	if got := sep.Decode(t, "tools/async/status", map[string]any{"token": id}); got["status"] != "completed" {
		t.Fatalf("SEP-1391 status of a 2026-07-28 task = %v", got)
	}
}

func TestOperationStatusesSubmittedAndExpired(t *testing.T) {
	e := newEnv(t, nil)
	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	res := sep.Decode(t, "tools/call", map[string]any{"name": "echo_unpolled", "arguments": map[string]any{}, "operation": map[string]any{"token": uuid.NewString()}})
	tok := res["operation"].(map[string]any)["token"].(string)
	if st := sep.Decode(t, "tools/async/status", map[string]any{"token": tok}); st["status"] != "submitted" {
		t.Fatalf("no worker has picked it up: %v, want submitted", st)
	}
	wf, run := e.workflow(t, tok)
	testenv.As[client.Client](t, e.engine).TerminateWorkflow(context.Background(), wf, run, "test cleanup")

	// A keepAlive longer than the poll interval (1s), within which a poll sees the end.
	res = sep.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "short-lived"}, "operation": map[string]any{"keepAlive": 2}})
	op := res["operation"].(map[string]any)
	if op["keepAlive"] != float64(2) {
		t.Fatalf("keepAlive = %v, want the client's 2", op["keepAlive"])
	}
	tok = op["token"].(string)
	pollOperation(t, sep, tok, "completed")
	time.Sleep(2500 * time.Millisecond)
	_, rerr := sep.Call(t, "tools/async/result", map[string]any{"token": tok})
	wantError(t, "result past keepAlive", rerr, -32602, "Failed to retrieve operation: Operation has expired")
}

// TestKeepAliveIsTheEngineRetention: without a wish from the client, keepAlive is how long the
// engine keeps the execution (the namespace's retention); a client may only shorten it.
func TestKeepAliveIsTheEngineRetention(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.svc.CheckTargets(context.Background()); err != nil {
		t.Fatal(err)
	}
	ns, err := testenv.As[client.Client](t, e.engine).WorkflowService().DescribeNamespace(context.Background(), &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	retention := ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	for _, tc := range []struct {
		keepAlive any
		want      float64
	}{{nil, retention.Seconds()}, {60, 60}, {retention.Seconds() * 10, retention.Seconds()}} {
		op := map[string]any{}
		if tc.keepAlive != nil {
			op["keepAlive"] = tc.keepAlive
		}
		res := sep.Decode(t, "tools/call", map[string]any{"name": "echo_unlimited_ttl", "arguments": map[string]any{}, "operation": op})
		got := res["operation"].(map[string]any)
		if got["keepAlive"] != tc.want {
			t.Errorf("keepAlive asked %v: got %v, want %v (retention %s)", tc.keepAlive, got["keepAlive"], tc.want, retention)
		}
		wf, run := e.workflow(t, got["token"].(string))
		testenv.As[client.Client](t, e.engine).TerminateWorkflow(context.Background(), wf, run, "test cleanup")
	}
}

// TestOperationResultBeforeTheEnd: tools/async/result of an operation still running is the
// dialect's -32602, marked retryable after the poll interval, so that a client which saw the
// operation complete through a replica with a newer reading retries instead of giving up.
func TestOperationResultBeforeTheEnd(t *testing.T) {
	e := newEnv(t, nil)
	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	res := sep.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 60, "text": "early"}, "operation": map[string]any{"token": uuid.NewString()}})
	tok := res["operation"].(map[string]any)["token"].(string)
	wf, run := e.workflow(t, tok)
	defer testenv.As[client.Client](t, e.engine).TerminateWorkflow(context.Background(), wf, run, "test cleanup")
	_, rerr := sep.Call(t, "tools/async/result", map[string]any{"token": tok})
	// submitted until the worker picks it up, then working.
	if rerr == nil || rerr.Code != -32602 || !regexp.MustCompile(
		`^Failed to retrieve operation result: the operation is (submitted|working), not completed or failed; retry in 1s$`).MatchString(rerr.Message) {
		t.Fatalf("result of a running operation: %v, want -32602 saying to retry in 1s", rerr)
	}
	var data struct {
		Retryable    bool  `json:"retryable"`
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	if err := json.Unmarshal(rerr.Data, &data); err != nil || !data.Retryable || data.RetryAfterMs < 100 || data.RetryAfterMs > 1000 {
		t.Fatalf("data = %s, want retryable after the 1 s interval of a new task", rerr.Data)
	}
}
