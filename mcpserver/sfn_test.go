package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
	"github.com/taskgate/taskgate/test/apifaults"
)

// awsCalls counts the Step Functions API calls that reach the endpoint, by action.
type awsCalls struct {
	mu     sync.Mutex
	counts map[string]int
}

func (a *awsCalls) Do(r *http.Request) (*http.Response, error) {
	action := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
	a.mu.Lock()
	a.counts[action]++
	a.mu.Unlock()
	return http.DefaultClient.Do(r)
}

func (a *awsCalls) count(action string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if action == "" {
		n := 0
		for _, c := range a.counts {
			n += c
		}
		return n
	}
	return a.counts[action]
}

type sfnEnv struct {
	set    *mapping.Set
	engine adapters.Conn
	calls  *awsCalls
	tokens token.Codec
}

// server starts one taskgate over the env's engine; several of them are replicas. Its client
// declares the tasks extension, or the given extensions.
func (e *sfnEnv) server(t *testing.T, extensions ...string) *rpctest.Client {
	t.Helper()
	if extensions == nil {
		extensions = []string{ext}
	}
	srv, _ := newServer(t, tasks.Config{Mapping: e.set, Engines: map[string]adapters.Conn{"aws": e.engine}, Tokens: e.tokens}, mcpserver.Config{})
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return rpctest.Modern(rpctest.HTTP{URL: hs.URL}, extensions...)
}

func newSFNEnv(t *testing.T) *sfnEnv {
	t.Helper()
	endpoint := testenv.SFNEndpoint(t)
	t.Setenv("SFN_ENDPOINT", endpoint)
	calls := &awsCalls{counts: map[string]int{}}
	eng, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint, HTTPClient: calls})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sfnexamples.Ensure(context.Background(), testenv.As[*sfn.Client](t, eng), "arn:aws:iam::123456789012:role/taskgate-examples"); err != nil {
		t.Fatal(err)
	}
	set, err := mapping.Load("../examples/stepfunctions/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := token.ParseKeys(token.NewKey("s1"))
	tokens, _ := token.NewSealed(keys)
	return &sfnEnv{set: set, engine: eng, calls: calls, tokens: tokens}
}

func (e *sfnEnv) describe(t *testing.T, id string) *sfn.DescribeExecutionOutput {
	t.Helper()
	c, err := e.tokens.Open(id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d, err := testenv.As[*sfn.Client](t, e.engine).DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.Ref.ID)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStepFunctionsThroughMCP(t *testing.T) {
	e := newSFNEnv(t)
	c := e.server(t)

	t.Run("success", func(t *testing.T) {
		id := call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 1, "text": "from a state machine"})["taskId"].(string)
		if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Fatalf("tasks/get right after the call = %v", got)
		}
		done := waitFor(t, c, id, "completed")
		if jsonOf(done["result"].(map[string]any)["structuredContent"]) != `{"text":"from a state machine"}` {
			t.Fatalf("task = %v", done)
		}
	})
	t.Run("business failure", func(t *testing.T) {
		id := call(t, c, "sfn_wait_and_fail", map[string]any{"seconds": 0, "reason": "card declined"})["taskId"].(string)
		res := waitFor(t, c, id, "completed")["result"].(map[string]any)
		if res["isError"] != true || firstText(t, res) != "The workflow ended FAILED with error Example.Failure: card declined" {
			t.Fatalf("result = %v", res)
		}
	})
	t.Run("timed out", func(t *testing.T) {
		id := call(t, c, "sfn_wait_past_timeout", map[string]any{"seconds": 30})["taskId"].(string)
		res := waitFor(t, c, id, "completed")["result"].(map[string]any)
		if res["isError"] != true || !strings.HasPrefix(firstText(t, res), "The workflow ended TIMED_OUT") {
			t.Fatalf("result = %v", res)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		id := call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 60, "text": "x"})["taskId"].(string)
		c.Decode(t, "tasks/cancel", map[string]any{"taskId": id})
		waitFor(t, c, id, "cancelled")
		d := e.describe(t, id)
		// Some endpoints keep the stop's cause only in the history: read it as the adapter does.
		machine, err := stepfunctions.StateMachine(aws.ToString(d.StateMachineArn))
		if err != nil {
			t.Fatal(err)
		}
		o, err := e.engine.Outcome(context.Background(), machine, adapters.Ref{ID: aws.ToString(d.ExecutionArn)})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != "ABORTED" || o.Error != "taskgate.Cancelled" || !strings.HasPrefix(o.Cause, "cancelled through taskgate by an MCP client") {
			t.Fatalf("execution %s: %s, error %q, cause %q", aws.ToString(d.ExecutionArn), d.Status, o.Error, o.Cause)
		}
	})
	t.Run("restart mid-execution", func(t *testing.T) {
		first := e.server(t)
		id := call(t, first, "sfn_wait_and_echo", map[string]any{"seconds": 2, "text": "after restart"})["taskId"].(string)
		restarted := e.server(t) // a new process with the same keys: nothing carried over
		done := waitFor(t, restarted, id, "completed")
		if jsonOf(done["result"].(map[string]any)["structuredContent"]) != `{"text":"after restart"}` {
			t.Fatalf("task = %v", done)
		}
	})
	t.Run("idempotent start", func(t *testing.T) {
		sep := rpctest.Modern(c.T)
		sep.Experimental = []string{"sep1391"}
		key := "order-" + uuid.NewString()
		args := map[string]any{"orderId": key, "items": []any{map[string]any{"sku": "A-1", "qty": 2}}}
		op := func(args map[string]any) (string, *rpctest.Error) {
			res, err := sep.Call(t, "tools/call", map[string]any{"name": "process_order", "arguments": args, "operation": map[string]any{"token": key}})
			if err != nil {
				return "", err
			}
			var r struct{ Operation struct{ Token string } }
			mustUnmarshal(t, res, &r)
			return r.Operation.Token, nil
		}
		first, err := op(args)
		if err != nil {
			t.Fatal(err)
		}
		second, err := op(args)
		if err != nil {
			t.Fatal(err)
		}
		if e.describe(t, first).ExecutionArn == nil || aws.ToString(e.describe(t, first).ExecutionArn) != aws.ToString(e.describe(t, second).ExecutionArn) {
			t.Fatalf("the same key and input started two executions")
		}
		args["orderId"] = "another"
		if _, err := op(args); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "idempotency key was already used with other arguments") {
			t.Fatalf("same key, other input: %v", err)
		}
		pollOperation(t, sep, key, "completed")
	})
}

func TestForgedExecutionARNsReachNoEngine(t *testing.T) {
	e := newSFNEnv(t)
	c := e.server(t)
	id := call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 0, "text": "x"})["taskId"].(string)
	claims, err := e.tokens.Open(id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sealed := e.tokens.(*token.Sealed)
	forge := func(arn string) string {
		f := claims
		f.Ref = adapters.Ref{ID: arn}
		return sealed.Issue(f)
	}
	name := claims.Ref.ID[strings.LastIndex(claims.Ref.ID, ":")+1:]
	forged := map[string]string{
		"another state machine": "arn:aws:states:us-east-1:123456789012:execution:some-other-pipeline:" + name,
		"another account":       "arn:aws:states:us-east-1:999999999999:execution:taskgate-sfn-wait-and-echo:" + name,
		"another region":        "arn:aws:states:eu-west-1:123456789012:execution:taskgate-sfn-wait-and-echo:" + name,
		"not an execution":      "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-sfn-wait-and-echo",
	}
	before := e.calls.count("")
	for what, arn := range forged {
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			_, err := c.Call(t, method, map[string]any{"taskId": forge(arn)})
			wantError(t, method+" with "+what, err, -32602, "Failed to retrieve task: Task not found")
		}
	}
	// The same with native ids, which a client can write by hand.
	native, _ := newServer(t, tasks.Config{Mapping: e.set, Engines: map[string]adapters.Conn{"aws": e.engine}, Tokens: token.Native{Refs: e.set}}, mcpserver.Config{})
	hs := httptest.NewServer(native.HTTPHandler())
	defer hs.Close()
	nc := rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	for what, arn := range forged {
		_, err := nc.Call(t, "tasks/get", map[string]any{"taskId": arn})
		wantError(t, "native "+what, err, -32602, "Failed to retrieve task: Task not found")
	}
	if n := e.calls.count("") - before; n != 0 {
		t.Fatalf("forged ids caused %d AWS calls, want 0: %v", n, e.calls.counts)
	}
}

func TestConcurrentPollersShareDescribeCalls(t *testing.T) {
	e := newSFNEnv(t)
	c := e.server(t)
	id := call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 30, "text": "x"})["taskId"].(string)
	before := e.calls.count("DescribeExecution")
	var wg sync.WaitGroup
	var working atomic.Int64
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] == "working" {
				working.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	n := e.calls.count("DescribeExecution") - before
	t.Logf("50 concurrent tasks/get made %d DescribeExecution calls", n)
	if working.Load() != 50 || n > 5 {
		t.Fatalf("%d of 50 pollers read working with %d DescribeExecution calls; want 50 and at most 5", working.Load(), n)
	}

	// Once ended, the outcome is immutable: more polls cost no further calls.
	c.Decode(t, "tasks/cancel", map[string]any{"taskId": id})
	waitFor(t, c, id, "cancelled")
	before = e.calls.count("")
	for range 20 {
		c.Decode(t, "tasks/get", map[string]any{"taskId": id})
	}
	if n := e.calls.count("") - before; n != 0 {
		t.Fatalf("20 polls of an ended task made %d AWS calls, want 0", n)
	}
}

// TestStepFunctionsQuestionsThroughMCP: a .waitForTaskToken state's question is input_required with
// its inputRequests; a wrong answer reaches no engine; tasks/update answers it (SendTaskSuccess) or
// declines it (SendTaskFailure), and the state machine goes on as it decides.
func TestStepFunctionsQuestionsThroughMCP(t *testing.T) {
	e := newSFNEnv(t)
	c := e.server(t)
	start := func() string {
		res := call(t, c, "sfn_approve_deployment", map[string]any{"version": "v" + uuid.NewString()[:6], "env": "staging", "stepSeconds": 0})
		return res["taskId"].(string)
	}
	approved, declined := start(), start()
	for _, id := range []string{approved, declined} {
		got := waitFor(t, c, id, "input_required")
		req, _ := got["inputRequests"].(map[string]any)["approve"].(map[string]any)
		params, _ := req["params"].(map[string]any)
		if req["method"] != "elicitation/create" || !strings.HasPrefix(params["message"].(string), "Deploy v") || params["requestedSchema"] == nil {
			t.Fatalf("the question of a .waitForTaskToken state: %v", got)
		}
	}
	sends := e.calls.count("SendTaskSuccess") + e.calls.count("SendTaskFailure")
	_, err := c.Call(t, "tasks/update", map[string]any{"taskId": approved, "inputResponses": map[string]any{"approve": accept(map[string]any{"reason": "no approve field"})}})
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "approve") {
		t.Fatalf("an answer without its required field: %v", err)
	}
	if n := e.calls.count("SendTaskSuccess") + e.calls.count("SendTaskFailure"); n != sends {
		t.Fatalf("a wrong answer reached the engine (%d sends)", n-sends)
	}
	update(t, c, approved, map[string]any{"approve": accept(map[string]any{"approve": true, "reason": "tested"})})
	update(t, c, declined, map[string]any{"approve": map[string]any{"action": "decline"}})
	if e.calls.count("SendTaskSuccess") != 1 || e.calls.count("SendTaskFailure") != 1 {
		t.Fatalf("SendTaskSuccess %d, SendTaskFailure %d; want one each", e.calls.count("SendTaskSuccess"), e.calls.count("SendTaskFailure"))
	}
	for id, want := range map[string]bool{approved: true, declined: false} {
		done := waitFor(t, c, id, "completed", "failed")
		result, _ := done["result"].(map[string]any)
		if done["status"] != "completed" || structured(t, result)["deployed"] != want {
			t.Fatalf("deployed %v wanted: %v", want, done)
		}
	}
	// The question is gone: answering it again is ignored and sends nothing.
	update(t, c, approved, map[string]any{"approve": accept(map[string]any{"approve": false})})
	if e.calls.count("SendTaskSuccess") != 1 {
		t.Fatal("a second answer to an answered question reached the engine")
	}
}

// TestStepFunctionsQuestionThroughHandles: a client without tasks reads a .waitForTaskToken
// state's question from task_status and answers it with task_answer.
func TestStepFunctionsQuestionThroughHandles(t *testing.T) {
	e := newSFNEnv(t)
	c := e.server(t, []string{}...)
	version := "v" + uuid.NewString()[:6]
	handle := structured(t, call(t, c, "sfn_approve_deployment", map[string]any{"version": version, "env": "prod", "stepSeconds": 0}))["handle"].(string)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res := call(t, c, "task_status", map[string]any{"handle": handle})
		if structured(t, res)["status"] == "input_required" {
			if !strings.Contains(firstText(t, res), "Deploy "+version+" to prod?") {
				t.Fatalf("task_status: %q", firstText(t, res))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task_status: %v", res)
		}
	}
	if res := call(t, c, "task_answer", map[string]any{"handle": handle, "decline": []string{"approve"}}); res["isError"] == true {
		t.Fatalf("task_answer: %v", res)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res := call(t, c, "task_result", map[string]any{"handle": handle})
		if s, _ := res["structuredContent"].(map[string]any); s["deployed"] == false && s["reason"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task_result after declining: %v", res)
		}
	}
}

// TestQuestionSchemasFromWorkflowsLoadNothing: a .waitForTaskToken state asks a question whose
// schema refers to a file and to a URL. The question is shown as one taskgate cannot ask, with
// none of the workflow's schema; an answer to it reaches no engine; nothing is read or fetched.
func TestQuestionSchemasFromWorkflowsLoadNothing(t *testing.T) {
	e := newSFNEnv(t)
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"type":"boolean","description":"hunter2"}`), 0o600)
	var hits atomic.Int64
	schemas := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"boolean"}`))
	}))
	defer schemas.Close()
	schema := `{"type":"object","properties":{"confirm":{"$ref":"file://` + secret + `"},"why":{"$ref":"` + schemas.URL + `/why.json"}}}`
	def := sfnexamples.Definitions()["taskgate-sfn-ask-and-echo"]
	def = strings.Replace(def, `"schema": {`, `"schema": `+schema+`, "unused": {`, 1)
	name := "taskgate-test-bad-question-" + uuid.NewString()[:8]
	out, err := testenv.As[*sfn.Client](t, e.engine).CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name),
		Definition: aws.String(def), RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-examples")})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(file, []byte(`engines:
  aws:
    stepfunctions: {region: us-east-1, endpoint: "${SFN_ENDPOINT}"}
tools:
  - name: bad_question
    description: Asks a question whose schema refers elsewhere.
    engine: aws
    stateMachine: `+aws.ToString(out.StateMachineArn)+`
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
`), 0o600)
	set, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newServer(t, tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"aws": e.engine}, Tokens: e.tokens}, mcpserver.Config{})
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	c := rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	id := call(t, c, "bad_question", map[string]any{"message": "Deploy?"})["taskId"].(string)
	defer c.Call(t, "tasks/cancel", map[string]any{"taskId": id})
	got := waitFor(t, c, id, "input_required")
	params := got["inputRequests"].(map[string]any)["confirm"].(map[string]any)["params"].(map[string]any)
	if msg, _ := params["message"].(string); !strings.HasPrefix(msg, `The workflow's question "confirm" cannot be answered through taskgate: `) ||
		!strings.Contains(msg, "taskgate loads no other schema for it") || jsonOf(params["requestedSchema"]) != `{"properties":{},"type":"object"}` {
		t.Fatalf("the question as shown: %v", params)
	}
	sends := e.calls.count("SendTaskSuccess") + e.calls.count("SendTaskFailure")
	_, rerr := c.Call(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": accept(map[string]any{"confirm": true})}})
	if rerr == nil || rerr.Code != -32603 || !strings.Contains(rerr.Message, `The workflow's question "confirm" cannot be answered through taskgate`) {
		t.Fatalf("an answer to the question: %v", rerr)
	}
	if n := e.calls.count("SendTaskSuccess") + e.calls.count("SendTaskFailure"); n != sends {
		t.Fatal("an answer to a question taskgate cannot ask reached the engine")
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server was asked %d times", n)
	}
}

// A Step Functions start is one StartExecution: the task is answered before the execution is
// visible to reads (the proxy in front of the endpoint hides it for two seconds, as an eventually
// consistent read may), and a poll in that time reads it as not yet visible, not as missing:
// working in the tasks extension, submitted in SEP-1391.
func TestJustStartedExecutionReadsAsSubmitted(t *testing.T) {
	p, err := apifaults.NewStepFunctions(testenv.SFNEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	t.Setenv("SFN_ENDPOINT", p.URL())
	set, err := mapping.Load("../examples/stepfunctions/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sfnexamples.Ensure(t.Context(), testenv.As[*sfn.Client](t, eng), "arn:aws:iam::123456789012:role/taskgate-examples"); err != nil {
		t.Fatal(err)
	}
	keys, _ := token.ParseKeys(token.NewKey("s1"))
	tokens, _ := token.NewSealed(keys)
	srv, _ := newServer(t, tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"aws": eng}, Tokens: tokens, FreshFor: -1}, mcpserver.Config{})
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	p.HideFor(2 * time.Second)

	c := rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	before := p.AllCalls()
	id := call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 0, "text": "not yet"})["taskId"].(string)
	if n := p.Calls("StartExecution") - before["StartExecution"]; n != 1 || p.Calls("DescribeExecution") != before["DescribeExecution"] {
		t.Errorf("tools/call made %d StartExecution and %d DescribeExecution calls, want one StartExecution and nothing else",
			n, p.Calls("DescribeExecution")-before["DescribeExecution"])
	}
	hidden := p.Calls("DescribeExecution")
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Errorf("tasks/get before the execution is visible: %v, want working", got)
	}
	if p.Calls("DescribeExecution") == hidden {
		t.Error("tasks/get did not read the engine: the test shows nothing")
	}

	sep := rpctest.Modern(rpctest.HTTP{URL: hs.URL})
	sep.Experimental = []string{"sep1391"}
	res, rerr := sep.Call(t, "tools/call", map[string]any{"name": "sfn_wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "sep"}, "operation": map[string]any{}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var op struct{ Operation struct{ Token string } }
	mustUnmarshal(t, res, &op)
	if st := sep.Decode(t, "tools/async/status", map[string]any{"token": op.Operation.Token}); st["status"] != "submitted" {
		t.Errorf("tools/async/status before the execution is visible: %v, want submitted", st)
	}

	waitFor(t, c, id, "completed")
	pollOperation(t, sep, op.Operation.Token, "completed")
}

// Step Functions' ThrottlingException (from a proxy that throttles half of the DescribeExecution
// calls, as AWS answers an account over its quota) never reaches a client that has a reading: its
// polls are answered from the newest one, and the throttles are counted.
func TestStepFunctionsThrottlingIsAnsweredFromTheNewestReading(t *testing.T) {
	p, err := apifaults.NewStepFunctions(testenv.SFNEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	t.Setenv("SFN_ENDPOINT", p.URL())
	set, err := mapping.Load("../examples/stepfunctions/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sfnexamples.Ensure(t.Context(), testenv.As[*sfn.Client](t, eng), "arn:aws:iam::123456789012:role/taskgate-examples"); err != nil {
		t.Fatal(err)
	}
	keys, _ := token.ParseKeys(token.NewKey("s1"))
	tokens, _ := token.NewSealed(keys)
	srv, svc := newServer(t, tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"aws": eng}, Tokens: tokens}, mcpserver.Config{})
	if _, err := svc.CheckTargets(t.Context()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	c := rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 600, "text": "throttled"})["taskId"].(string)
		defer c.Call(t, "tasks/cancel", map[string]any{"taskId": ids[i]})
	}
	p.Throttle(0.5, "DescribeExecution")
	pollAll(t, c, ids, 4*time.Second)
	s := svc.Budgets()["aws"]
	t.Logf("after 4s of polls every 100ms, half the reads throttled: budget %+v, reads %+v", s, svc.Reads()["aws"].Describe)
	if s.Throttled == 0 || int64(s.Throttled) != p.Throttled("DescribeExecution") {
		t.Errorf("budget counted %d throttles, the proxy answered %d", s.Throttled, p.Throttled("DescribeExecution"))
	}
	if s.Budget != stepfunctions.DefaultBudget {
		t.Errorf("budget %+v, want Step Functions' default %+v", s.Budget, stepfunctions.DefaultBudget)
	}
}

// TestStepFunctionsTaskListenedToTheEnd: a listener is told of a Step Functions execution as it
// runs and at its end, with its result.
func TestStepFunctionsTaskListenedToTheEnd(t *testing.T) {
	c := newSFNEnv(t).server(t)
	id := call(t, c, "sfn_wait_and_echo", map[string]any{"seconds": 2, "text": "from a state machine"})["taskId"].(string)
	notified := rpctest.ListenToEnd(t, c, id)
	got := statuses(notified)
	if len(got) < 2 || got[0] != "working" || got[len(got)-1] != "completed" {
		t.Fatalf("notified %v, want working, then completed", got)
	}
	if res := notified[len(notified)-1]["result"].(map[string]any); jsonOf(res["structuredContent"]) != `{"text":"from a state machine"}` {
		t.Fatalf("the end carries %v", res)
	}
}
