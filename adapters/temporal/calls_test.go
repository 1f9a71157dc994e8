package temporal

import (
	"context"
	"encoding/json"
	"maps"
	"path"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"

	"github.com/taskgate/taskgate/adapters/driver"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

// rpcs counts the engine's calls to the frontend by method.
type rpcs struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *rpcs) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c.mu.Lock()
	c.n[path.Base(method)]++
	c.mu.Unlock()
	return invoke(ctx, method, req, reply, cc, opts...)
}

func (c *rpcs) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := maps.Clone(c.n)
	clear(c.n)
	return n
}

// TestCallsPerPoll measures what a poll of a running workflow costs, and an answer: the questions,
// the progress and the pending activities come with the one DescribeWorkflowExecution.
func TestCallsPerPoll(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e, counted, queue := countedEngine(ctx, t)
	for _, tc := range []struct{ workflow, input string }{
		{temporalexamples.AskAndEchoName, `{"message":"count?"}`},
		{temporalexamples.BuildReleaseName, `{"version":"1","stepSeconds":30}`},
	} {
		tg := Workflow(tc.workflow, queue, 0)
		r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(tc.input)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Cancel(context.Background(), tg, r, "test over")
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			st, err := e.Describe(ctx, tg, r)
			if err != nil {
				t.Fatal(err)
			}
			if st.State == driver.InputRequired || st.State == driver.Working && st.Message != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %+v", tc.workflow, st)
			}
		}
		counted.take()
		if _, err := e.Describe(ctx, tg, r); err != nil {
			t.Fatal(err)
		}
		if got := counted.take(); !reflect.DeepEqual(got, map[string]int{"DescribeWorkflowExecution": 1}) {
			t.Errorf("a poll of a running %s made %v", tc.workflow, got)
		}
		if tc.workflow != temporalexamples.AskAndEchoName {
			continue
		}
		if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
			t.Fatal(err)
		}
		if got := counted.take(); !reflect.DeepEqual(got, map[string]int{"DescribeWorkflowExecution": 1, "UpdateWorkflowExecution": 1}) {
			t.Errorf("an answer made %v", got)
		}
	}
}

// countedEngine is an engine whose calls to the frontend counted counts, and a task queue that a
// worker of the examples polls on a connection of its own (its polls are not counted).
func countedEngine(ctx context.Context, t *testing.T) (e *conn, counted *rpcs, queue string) {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	counted = &rpcs{n: map[string]int{}}
	e, err := dial(ctx, client.Options{HostPort: addr, ConnectionOptions: client.ConnectionOptions{
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(counted.intercept)}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	wc, err := client.DialContext(ctx, client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wc.Close)
	queue = "taskgate-calls-" + uuid.NewString()
	w := worker.New(wc, queue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return e, counted, queue
}

// TestAListedEndCostsOneCall: the outcome of a run that a listing of ends showed closed is its
// close event alone, with the Status that Describe reads; one no listing showed costs its status
// too; and OutcomeCalls says so before each.
func TestAListedEndCostsOneCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e, counted, queue := countedEngine(ctx, t)
	since := time.Now().Add(-time.Second)
	type end struct {
		tg    driver.Target
		r     driver.Ref
		event string // the one call its outcome makes
	}
	var ends []end
	for _, tc := range []struct{ workflow, event string }{
		{temporalexamples.WaitAndEchoName, "GetWorkflowExecutionHistory"},
		{temporalexamples.WaitAndFailName, "GetWorkflowExecutionHistory"},
		{temporalexamples.WaitAndEchoName + " cancelled", "GetWorkflowExecutionHistoryReverse"},
	} {
		name, cancelled := strings.CutSuffix(tc.workflow, " cancelled")
		tg := Workflow(name, queue, 0)
		r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"seconds":0.2,"text":"x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if cancelled {
			if err := e.Cancel(ctx, tg, r, "the test cancels it"); err != nil {
				t.Fatal(err)
			}
		}
		ends = append(ends, end{tg, r, tc.event})
	}
	tgs := []driver.Target{ends[0].tg, ends[1].tg}
	refs := []driver.Ref{ends[0].r, ends[1].r, ends[2].r}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		listed, _, err := e.SweepEnded(ctx, driver.SweepOptions{Targets: tgs, Refs: refs, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) == len(refs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a listing of ends shows %v of %v", listed, refs)
		}
	}
	for _, end := range ends {
		if got := e.OutcomeCalls(end.tg, end.r); got != 1 {
			t.Errorf("OutcomeCalls of a listed end %v: %d, want 1", end.r, got)
		}
		counted.take()
		out, err := e.Outcome(ctx, end.tg, end.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := counted.take(); !reflect.DeepEqual(got, map[string]int{end.event: 1}) {
			t.Errorf("the outcome of a listed end %v made %v, want one %s", end.r, got, end.event)
		}
		st, err := e.Describe(ctx, end.tg, end.r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out.Status, st) {
			t.Errorf("the outcome's Status %+v, Describe %+v: want the same", out.Status, st)
		}
	}

	fresh, freshCounted, _ := countedEngine(ctx, t)
	if got := fresh.OutcomeCalls(ends[0].tg, ends[0].r); got != 0 {
		t.Errorf("OutcomeCalls of an end no listing of this engine showed: %d, want 0 (TargetInfo's 2)", got)
	}
	if _, err := fresh.Outcome(ctx, ends[0].tg, ends[0].r); err != nil {
		t.Fatal(err)
	}
	if got, want := freshCounted.take(), map[string]int{"DescribeWorkflowExecution": 1, "GetWorkflowExecutionHistory": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("the outcome of an end no listing showed made %v, want %v", got, want)
	}
}
