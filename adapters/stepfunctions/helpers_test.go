package stepfunctions_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// testRole is the role the test state machines run as; the endpoint only checks its form.
const testRole = "arn:aws:iam::123456789012:role/taskgate-test"

// newEngine returns an engine for the endpoint of SFN_ENDPOINT, with credentials and region from
// the environment. hc may be nil.
func newEngine(t *testing.T, hc aws.HTTPClient) driver.Conn {
	t.Helper()
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Endpoint: testenv.SFNEndpoint(t), HTTPClient: hc})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// sfnClient is e's Step Functions client, through As.
func sfnClient(t *testing.T, e driver.Conn) *sfn.Client {
	t.Helper()
	var c *sfn.Client
	if !driver.As(e, &c) {
		t.Fatal("As(**sfn.Client) = false")
	}
	return c
}

// stateMachine is the target of the state machine arn.
func stateMachine(t testing.TB, arn string) driver.Target {
	t.Helper()
	tg, err := stepfunctions.StateMachine(arn)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// createExamples creates the named example state machines under names of their own (the example
// name and a random suffix) and returns their ARNs by example name. State machines are left in
// place: deleting one while another test pages through ListStateMachines makes moto answer
// InvalidToken, since its page token names the next state machine.
func createExamples(t *testing.T, c *sfn.Client, names ...string) map[string]string {
	t.Helper()
	defs := sfnexamples.Definitions()
	arns := map[string]string{}
	for _, name := range names {
		out, err := c.CreateStateMachine(t.Context(), &sfn.CreateStateMachineInput{
			Name:       aws.String(name + "-" + randomHex(4)),
			Definition: aws.String(defs[name]),
			RoleArn:    aws.String(testRole),
		})
		if err != nil {
			t.Fatalf("creating state machine %s: %v", name, err)
		}
		arns[name] = aws.ToString(out.StateMachineArn)
	}
	return arns
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// calls is an HTTP client that counts Step Functions API calls by operation (the X-Amz-Target
// header), and answers the first throttle calls of throttleOp with ThrottlingException itself, as
// Step Functions does when a caller exceeds its quota (throttle < 0: every call), and every call
// of deniedOp with AccessDeniedException, as it does without the IAM permission.
type calls struct {
	throttleOp string
	throttle   int
	deniedOp   string

	mu sync.Mutex
	n  map[string]int
}

func (c *calls) Do(req *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
	throttled := op == c.throttleOp && c.throttle != 0
	if c.throttle > 0 && throttled {
		c.throttle--
	}
	c.mu.Unlock()
	if op == c.deniedOp {
		return &http.Response{
			StatusCode: http.StatusBadRequest,
			Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
			Body:       io.NopCloser(strings.NewReader(`{"__type":"AccessDeniedException","message":"not authorized to perform: states:` + op + `"}`)),
			Request:    req,
		}, nil
	}
	if throttled {
		return &http.Response{
			StatusCode: http.StatusBadRequest,
			Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
			Body:       io.NopCloser(strings.NewReader(`{"__type":"ThrottlingException","message":"Rate exceeded"}`)),
			Request:    req,
		}, nil
	}
	return http.DefaultClient.Do(req)
}

func (c *calls) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// snapshot is the calls so far, by operation.
func (c *calls) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// since is the calls made after a snapshot, by operation.
func (c *calls) since(before map[string]int) map[string]int {
	diff := map[string]int{}
	for op, n := range c.snapshot() {
		if d := n - before[op]; d > 0 {
			diff[op] = d
		}
	}
	return diff
}

func (c *calls) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// awaitOutcome waits for the execution with a bound, failing the test if it does not end.
func awaitOutcome(t *testing.T, e driver.Conn, tg driver.Target, r driver.Ref) driver.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	o, err := awaitEnd(ctx, e, tg, r)
	if err != nil {
		t.Fatalf("Wait %v: %v", r, err)
	}
	return o
}
