package stepfunctions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/test/apifaults"
	"github.com/taskgate/taskgate/test/faults"
)

// echoInputOfSize is an input of exactly n bytes for the echo state machine, its text made of the
// two-byte character "é" (and one "a" when needed), so that bytes and characters differ.
func echoInputOfSize(t *testing.T, n int) json.RawMessage {
	t.Helper()
	const head, tail = `{"seconds":0,"text":"`, `"}`
	room := n - len(head) - len(tail)
	text := strings.Repeat("é", room/2) + strings.Repeat("a", room%2)
	in := json.RawMessage(head + text + tail)
	if len(in) != n || !json.Valid(in) {
		t.Fatalf("built an input of %d bytes, want %d", len(in), n)
	}
	return in
}

func TestInputLimit(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	echo := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])

	over := echoInputOfSize(t, 262145)
	const want = "invalid request: the execution input is 262145 bytes, over the Step Functions limit of 262144 " +
		"bytes (256 KiB) of UTF-8: pass large data by reference (for example an S3 URI) instead"
	// Run, like taskgate, on an engine that checked the target (whether it can only Run) first.
	engine := enginetest.Stack(e, stepfunctions.Driver{}.Info())
	if _, err := engine.Check(ctx, echo); err != nil {
		t.Fatal(err)
	}
	before := c.total()
	const reason = "the input is too large: 262145 bytes, over the engine's limit of 262144 bytes (256 KiB) of UTF-8: " +
		"pass large data by reference (for example an S3 URI) instead"
	if _, err := e.Start(ctx, echo, driver.StartRequest{Input: over}); !errors.Is(err, driver.ErrInvalid) || err.Error() != want || driver.ReasonOf(err, "") != reason {
		t.Errorf("Start with %d bytes of input: error %v, reason for the caller %q\nwant %s\nand %s", len(over), err, driver.ReasonOf(err, ""), want, reason)
	}
	if _, _, err := engine.Run(ctx, echo, driver.StartRequest{Input: over}, pace.Pace{}); !errors.Is(err, driver.ErrInvalid) || err.Error() != want {
		t.Errorf("Run with %d bytes of input: error %v\nwant %s", len(over), err, want)
	}
	if n := c.total(); n != before {
		t.Errorf("an input over the limit made %d API calls, want none", n-before)
	}

	const notJSON = "invalid request: the execution input is not valid JSON"
	if _, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":`)}); err == nil || err.Error() != notJSON {
		t.Errorf("Start with broken JSON: error %v, want %s", err, notJSON)
	}

	// At the limit Step Functions accepts the input. (Moto then fails the execution with
	// States.DataLimitExceeded, counting its state data JSON-escaped, so only the start is checked.)
	at := echoInputOfSize(t, 262144)
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: at})
	if err != nil || !e.Owns(echo, r, "") {
		t.Fatalf("Start with exactly 262144 bytes of input: %v, %v", r, err)
	}
}

func TestIdempotencyKey(t *testing.T) {
	ctx := testContext(t)
	e := newEngine(t, nil)
	machine := createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho]
	echo := stateMachine(t, machine)
	key := "order-" + uuid.NewString()

	first, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"one"}`), Key: key})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if want := executionARN(machine, driver.CallerTag("")+"-"+driver.KeySuffix(key, "", "k-", 40)); first.ID != want {
		t.Errorf("Start with a key: Ref %s, want %s", first.ID, want)
	}
	if ref := e.KeyRef(echo, key, ""); ref != first {
		t.Errorf("KeyRef = %v, want the Ref Start gave, %v", ref, first)
	}
	awaitOutcome(t, e, echo, first)

	// The same value written differently is the same input.
	again, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{ "text": "one", "seconds": 0.0 }`), Key: key})
	if err != nil || again != first {
		t.Errorf("Start with the same key and the same input reformatted: Ref %v, error %v; want %v", again, err, first)
	}

	_, err = e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"two"}`), Key: key})
	const want = "idempotency key already used with other input: the key was used before with other arguments; " +
		"send the same arguments to get that call's task, or use a new key"
	if !errors.Is(err, driver.ErrKeyConflict) || err.Error() != want {
		t.Errorf("Start with the same key and other input: error %v\nwant %s", err, want)
	}
}

func TestCancel(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	echo := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":60,"text":"never"}`)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}

	reason := "cancelled by alice@example.com: the order was withdrawn"
	before := c.total()
	if err := e.Cancel(ctx, echo, r, reason); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if c.count("DescribeExecution") != 1 || c.count("StopExecution") != 1 || c.total()-before != 2 {
		t.Errorf("Cancel of a running execution made calls %v, want one DescribeExecution and one StopExecution", c.n)
	}
	st, err := e.Describe(ctx, echo, r)
	if err != nil || st.State != driver.Cancelled || st.Native != "ABORTED" {
		t.Errorf("Describe after Cancel: %+v, %v; want cancelled, ABORTED", st, err)
	}
	o, err := e.Outcome(ctx, echo, r)
	o.Status = driver.Status{} // the conformance suite checks it
	want := driver.Outcome{State: driver.Cancelled, Native: "ABORTED", Error: "taskgate.Cancelled", Cause: reason}
	if err != nil || fmt.Sprint(o) != fmt.Sprint(want) {
		t.Errorf("Outcome after Cancel: %+v, %v; want %+v", o, err, want)
	}

	err = e.Cancel(ctx, echo, r, "again")
	if wantErr := "execution has already ended: execution " + r.ID + " ended ABORTED"; !errors.Is(err, driver.ErrEnded) || err.Error() != wantErr {
		t.Errorf("second Cancel: error %v\nwant %s", err, wantErr)
	}
}

// TestDescribeOfAnEndedExecutionIsOneCall: an ended execution is read with DescribeExecution
// alone (TestAskAndAnswer counts the calls of a running one).
func TestDescribeOfAnEndedExecutionIsOneCall(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	echo := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"x"}`)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	awaitOutcome(t, e, echo, r)
	before := c.total()
	if _, err := e.Describe(ctx, echo, r); err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if n := c.total() - before; n != 1 {
		t.Errorf("Describe made %d API calls, want 1", n)
	}

	missing := driver.Ref{ID: executionARN(echo.Name, "nope-"+randomHex(4))}
	_, err = e.Describe(ctx, echo, missing)
	if want := "execution not found: Step Functions has no execution " + missing.ID +
		" (executions are kept 90 days after they end)"; !errors.Is(err, driver.ErrNotFound) || err.Error() != want {
		t.Errorf("Describe of a missing execution: error %v\nwant %s", err, want)
	}

	before = c.total()
	foreign := driver.Ref{ID: strings.Replace(r.ID, ":123456789012:", ":210987654321:", 1)}
	_, err = e.Describe(ctx, echo, foreign)
	if want := "execution not found: " + foreign.ID + " is not an execution of state machine " + echo.Name; !errors.Is(err, driver.ErrNotFound) || err.Error() != want {
		t.Errorf("Describe of another account's execution: error %v\nwant %s", err, want)
	}
	if n := c.total() - before; n != 0 {
		t.Errorf("Describe of a foreign Ref made %d API calls, want none", n)
	}
}

func TestCheck(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	endpoint := testenv.SFNEndpoint(t)
	defs := sfnexamples.Definitions()
	created, err := sfnClient(t, e).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name:       aws.String("taskgate-check-" + randomHex(4)),
		Definition: aws.String(defs[sfnexamples.WaitAndEcho]),
		RoleArn:    aws.String(testRole),
		Publish:    true,
	})
	if err != nil {
		t.Fatalf("CreateStateMachine: %v", err)
	}
	machine, version := aws.ToString(created.StateMachineArn), aws.ToString(created.StateMachineVersionArn)
	alias, err := sfnClient(t, e).CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{
		Name:                 aws.String("PROD"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(version), Weight: 100}},
	})
	if err != nil {
		t.Fatalf("CreateStateMachineAlias: %v", err)
	}

	for _, arn := range []string{machine, version, aws.ToString(alias.StateMachineAliasArn)} {
		info, err := e.Check(ctx, stateMachine(t, arn))
		if err != nil || info.SyncOnly != "" || len(info.Warnings) != 0 {
			t.Errorf("Check(%s) = %+v, %v; want a Standard state machine and no error", arn, info, err)
		}
	}

	notFound := func(arn string) string {
		return "state machine " + arn + " not found: check the ARN, and that the region (us-east-1), the account of " +
			"the credentials (or of the assumed role) and the endpoint (" + endpoint + ") are those it was created in: "
	}
	missingMachine := strings.Replace(machine, "taskgate-check-", "taskgate-missing-", 1)
	for _, tc := range []struct{ arn, want string }{
		{missingMachine, notFound(missingMachine)},
		{version + "9", notFound(version + "9")},
		{machine + ":STAGING", notFound(machine + ":STAGING")},
	} {
		_, err := e.Check(ctx, stateMachine(t, tc.arn))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Check(%s): error %v\nwant it to start with %s", tc.arn, err, tc.want)
		}
	}

	before := c.total()
	for _, tc := range []struct{ arn, want string }{
		{
			strings.Replace(machine, ":us-east-1:", ":eu-west-1:", 1),
			"invalid request: state machine " + strings.Replace(machine, ":us-east-1:", ":eu-west-1:", 1) + " is in region eu-west-1, " +
				"but this Step Functions engine uses region us-east-1: configure an engine for eu-west-1",
		},
	} {
		if _, err := e.Check(ctx, stateMachine(t, tc.arn)); !errors.Is(err, driver.ErrInvalid) || err.Error() != tc.want {
			t.Errorf("Check(%s): error %v\nwant %s", tc.arn, err, tc.want)
		}
	}
	activity := "arn:aws:states:us-east-1:123456789012:activity:orders"
	const wantARN = `"arn:aws:states:us-east-1:123456789012:activity:orders" is not a Step Functions state machine ARN: want ` +
		"arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS"
	if _, err := stepfunctions.StateMachine(activity); err == nil || err.Error() != wantARN {
		t.Errorf("StateMachine(%s): error %v\nwant %s", activity, err, wantARN)
	}
	const wantKind = `invalid request: target "arn:aws:states:us-east-1:123456789012:activity:orders" is not a Step Functions state machine: map it as stateMachine: ARN`
	if _, err := e.Check(ctx, driver.Target{Name: activity}); !errors.Is(err, driver.ErrInvalid) || err.Error() != wantKind {
		t.Errorf("Check of a target of no Step Functions state machine: error %v\nwant %s", err, wantKind)
	}
	if n := c.total() - before; n != 0 {
		t.Errorf("Check of a target in another region or with a malformed ARN made %d API calls, want none", n)
	}
}

// Reads of executions are not retried when throttled: a retry spends more of the account's quota,
// and the caller answers from what it read before. Other calls are retried as the SDK does.
func TestThrottling(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	e := newEngine(t, nil)
	echo := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"x"}`)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}

	t.Run("ReadsNotRetried", func(t *testing.T) {
		t.Parallel()
		c := &calls{throttleOp: "DescribeExecution", throttle: 1}
		e := newEngine(t, c)
		_, err := e.Describe(ctx, echo, r)
		prefix := "engine throttling: reading execution " + r.ID + ": operation error SFN: DescribeExecution, "
		if !errors.Is(err, driver.ErrThrottled) || !errors.Is(err, driver.ErrUnavailable) || !strings.HasPrefix(err.Error(), prefix) ||
			!strings.HasSuffix(err.Error(), "ThrottlingException: Rate exceeded; retry later") {
			t.Errorf("Describe throttled: error %v\nwant ErrThrottled, starting with %s", err, prefix)
		}
		if n := c.count("DescribeExecution"); n != 1 {
			t.Errorf("Describe throttled made %d attempts, want 1", n)
		}
		if _, err := e.Describe(ctx, echo, r); err != nil {
			t.Errorf("Describe after the throttle: %v", err)
		}
	})
	t.Run("OtherCallsRetried", func(t *testing.T) {
		t.Parallel()
		c := &calls{throttleOp: "StartExecution", throttle: 2}
		if _, err := newEngine(t, c).Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"y"}`)}); err != nil {
			t.Errorf("Start throttled twice: %v", err)
		}
		if n := c.count("StartExecution"); n != 3 {
			t.Errorf("Start throttled twice made %d attempts, want 3", n)
		}
	})
	t.Run("AlwaysThrottled", func(t *testing.T) {
		t.Parallel()
		c := &calls{throttleOp: "StartExecution", throttle: -1}
		_, err := newEngine(t, c).Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"z"}`)})
		prefix := "engine throttling: starting an execution of " + echo.Name + ": operation error SFN: StartExecution, " +
			"exceeded maximum number of attempts, 8, "
		if !errors.Is(err, driver.ErrThrottled) || !strings.HasPrefix(err.Error(), prefix) ||
			!strings.HasSuffix(err.Error(), "ThrottlingException: Rate exceeded; retry later") {
			t.Errorf("Start always throttled: error %v\nwant ErrThrottled, starting with %s", err, prefix)
		}
		if n := c.count("StartExecution"); n != 8 {
			t.Errorf("Start always throttled made %d attempts, want 8", n)
		}
	})
}

// TestAs: a Conn answers its Step Functions client, and nothing else.
func TestAs(t *testing.T) {
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var c *sfn.Client
	if !driver.As(e, &c) || c == nil {
		t.Errorf("As(**sfn.Client) = false, or a nil client")
	}
	other := &http.Client{}
	if driver.As(e, &other) || other == nil {
		t.Errorf("As(**http.Client) = true, or it changed its target")
	}
}

func TestUnreachable(t *testing.T) {
	// Credentials of its own: without any, the SDK fails before it tries the endpoint.
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	ctx := testContext(t)
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	echo := stateMachine(t, "arn:aws:states:us-east-1:123456789012:stateMachine:orders")
	r := driver.Ref{ID: executionARN(echo.Name, uuid.NewString())}
	_, err = e.Describe(ctx, echo, r)
	prefix := "engine unavailable: reading execution " + r.ID + ": operation error SFN: DescribeExecution, " +
		"exceeded maximum number of attempts, 8, https response error StatusCode: 0"
	if !errors.Is(err, driver.ErrUnavailable) || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), "; retry later") {
		t.Errorf("Describe at an unreachable endpoint: error %v\nwant ErrUnavailable, starting with %s", err, prefix)
	}
}

// TestNoAnswerInTimeIsRetryable: a call the endpoint does not answer before the caller's deadline
// (a blackhole between them) is ErrUnavailable, which clients retry, and still a deadline error.
// It was neither: taskgate's shared reads, which the soak (test/soak) found unbounded, get a
// deadline, and their callers must not see its end as a lasting failure.
func TestNoAnswerInTimeIsRetryable(t *testing.T) {
	p, err := faults.Listen(strings.TrimPrefix(testenv.SFNEndpoint(t), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Endpoint: "http://" + p.Addr()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	echo := stateMachine(t, "arn:aws:states:us-east-1:123456789012:stateMachine:orders")
	r := driver.Ref{ID: executionARN(echo.Name, uuid.NewString())}
	p.Set(faults.Faults{Blackhole: true})
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err = e.Describe(ctx, echo, r)
	if !errors.Is(err, driver.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Describe unanswered before its deadline: %v, want ErrUnavailable and context.DeadlineExceeded", err)
	}
}

// TestFindsASilencedConnectionDead: a connection that goes silent for good (a NAT or firewall
// that forgot it, faults.Proxy.Stall) costs a call at most responseTimeout (10 s) before the SDK
// drops it and retries on a new connection. Without a bound, every call that took it waited for
// its caller's deadline; the soak found polls answered again 38 to 48 s after a stall.
func TestFindsASilencedConnectionDead(t *testing.T) {
	p, err := faults.Listen(strings.TrimPrefix(testenv.SFNEndpoint(t), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Endpoint: "http://" + p.Addr()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	echo := stateMachine(t, "arn:aws:states:us-east-1:123456789012:stateMachine:orders")
	missing := driver.Ref{ID: executionARN(echo.Name, uuid.NewString())}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := e.Describe(ctx, echo, missing); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Describe of a missing execution before the stall: %v, want not found", err)
	}
	// The endpoint closes its connections after each answer, so the stall has to catch a call in
	// flight: one held up by latency, for long enough to stall its connection.
	p.Set(faults.Faults{Latency: time.Second})
	answered := make(chan error, 1)
	go func() {
		_, err := e.Describe(ctx, echo, missing)
		answered <- err
	}()
	time.Sleep(300 * time.Millisecond)
	p.Set(faults.Faults{})
	if n := p.Stall(); n != 1 {
		t.Fatalf("the engine had %d connections to the endpoint in flight, want 1", n)
	}
	stalled := time.Now()
	if err := <-answered; !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Describe over a silenced connection: %v, want not found (after a retry on a new connection)", err)
	}
	if d := time.Since(stalled); d > 15*time.Second {
		t.Errorf("the engine answered %v after its connection went silent, want within about 10 s", d.Round(time.Millisecond))
	} else {
		t.Logf("answered %v after the connection went silent", d.Round(time.Millisecond))
	}
}

// TestAssumeRole reaches a state machine in another account through Config.RoleARN. The endpoint
// serves STS too; its AssumeRole hands out credentials that act in the role's account.
func TestAssumeRole(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", endpoint)
	ctx := testContext(t)
	const account = "111122223333"
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Endpoint: endpoint, RoleARN: "arn:aws:iam::" + account + ":role/taskgate"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	out, err := sfnClient(t, e).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name:       aws.String("taskgate-cross-account-" + randomHex(4)),
		Definition: aws.String(sfnexamples.Definitions()[sfnexamples.WaitAndEcho]),
		RoleArn:    aws.String("arn:aws:iam::" + account + ":role/taskgate-test"),
	})
	if err != nil {
		t.Fatalf("CreateStateMachine as the assumed role: %v", err)
	}
	echo := stateMachine(t, aws.ToString(out.StateMachineArn))
	if !strings.Contains(echo.Name, ":"+account+":") {
		t.Fatalf("state machine %s was not created in account %s", echo.Name, account)
	}
	if _, err := e.Check(ctx, echo); err != nil {
		t.Fatalf("Check: %v", err)
	}
	r, o, err := runToEnd(ctx, e, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"across"}`)})
	if err != nil || o.State != driver.Succeeded || string(o.Output) != `{"text":"across"}` || !e.Owns(echo, r, "") {
		t.Errorf("Run in account %s: %v, %+v, %v; want succeeded with {\"text\":\"across\"}", account, r, o, err)
	}
}

// proxiedEcho is an engine reaching the endpoint through a fault proxy, and the wait-and-echo
// example created through it.
func proxiedEcho(t *testing.T) (*apifaults.StepFunctions, driver.Conn, driver.Target) {
	t.Helper()
	p, err := apifaults.NewStepFunctions(testenv.SFNEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	e, err := stepfunctions.New(testContext(t), stepfunctions.Config{Endpoint: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return p, e, stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])
}

// TestAStartWhoseAnswerWasLost: a StartExecution that reached Step Functions but whose answer was
// lost is retried by the SDK under the same name; if the execution has ended by then, the retry is
// answered ExecutionAlreadyExists (Step Functions' start is idempotent only while it runs). That
// execution is this call's: Start answers with it, and there is one execution. The soak (test/soak) lost starts to it once the SDK's client gave up
// on slow answers (responseTimeout).
func TestAStartWhoseAnswerWasLost(t *testing.T) {
	ctx := testContext(t)
	p, e, echo := proxiedEcho(t)
	p.LoseAnswers("StartExecution", 1, 1500*time.Millisecond) // long enough for the execution to end
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"lost answer"}`)})
	if err != nil {
		t.Fatalf("Start whose first answer was lost: %v, want the execution it started", err)
	}
	if n := p.Calls("StartExecution"); n != 2 {
		t.Errorf("%d StartExecution calls, want 2 (the lost one and the SDK's retry)", n)
	}
	o, err := awaitEnd(ctx, e, echo, r)
	if err != nil || string(o.Output) != `{"text":"lost answer"}` {
		t.Errorf("Wait of the execution: %s %v, want its output", o.Output, err)
	}
	out, err := sfnClient(t, e).ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(echo.Name)})
	if err != nil {
		t.Fatal(err)
	}
	// The state machine is this test's own.
	if len(out.Executions) != 1 || aws.ToString(out.Executions[0].ExecutionArn) != r.ID {
		t.Errorf("executions %+v, want only %s", out.Executions, r.ID)
	}
}

// A start is one StartExecution: the adapter does not wait for the execution to be visible (Step
// Functions' reads are eventually consistent). Reads may then not find it for a while (a proxy in
// front of the endpoint hides young executions here): Describe says so (callers read it as not
// yet visible), while Wait and Run wait through it and Cancel stops it all the same.
func TestStartIsOneCallAndReadsWaitForVisibility(t *testing.T) {
	ctx := testContext(t)
	p, e, echo := proxiedEcho(t)
	if _, err := e.Check(ctx, echo); err != nil {
		t.Fatal(err)
	}
	p.HideFor(time.Second)
	before := p.AllCalls()
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"hidden"}`)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if diff := callsSince(before, p.AllCalls()); !maps.Equal(diff, map[string]int64{"StartExecution": 1}) {
		t.Errorf("Start made %v, want one StartExecution", diff)
	}
	if _, err := e.Describe(ctx, echo, r); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Describe of the hidden execution: %v, want ErrNotFound", err)
	}
	o, err := awaitEnd(ctx, e, echo, r)
	if err != nil || o.State != driver.Succeeded {
		t.Errorf("Wait through the hidden start: %+v %v, want succeeded", o, err)
	}

	_, o, err = runToEnd(ctx, e, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"run"}`)})
	if err != nil || string(o.Output) != `{"text":"run"}` {
		t.Errorf("Run through a hidden start: %s %v", o.Output, err)
	}

	r, err = e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":600,"text":"stop me"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(ctx, echo, r, "stopped before it was visible"); err != nil {
		t.Errorf("Cancel of a hidden execution: %v", err)
	}
	time.Sleep(time.Second)
	if st, err := e.Describe(ctx, echo, r); err != nil || st.State != driver.Cancelled {
		t.Errorf("after Cancel: %v %v, want cancelled", st.State, err)
	}
	gone := driver.Ref{ID: executionARN(echo.Name, uuid.NewString())}
	if err := e.Cancel(ctx, echo, gone, "no such execution"); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Cancel of an execution that does not exist: %v, want ErrNotFound", err)
	}
}

// callsSince are the calls of after that were not in before, by operation.
func callsSince(before, after map[string]int64) map[string]int64 {
	diff := map[string]int64{}
	for op, n := range after {
		if d := n - before[op]; d > 0 {
			diff[op] = d
		}
	}
	return diff
}
