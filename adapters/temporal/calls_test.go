package temporal

import (
	"context"
	"encoding/json"
	"maps"
	"path"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"

	"github.com/taskgate/taskgate/adapters"
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
	addr := testenv.TemporalAddress(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	counted := &rpcs{n: map[string]int{}}
	e, err := dial(ctx, client.Options{HostPort: addr, ConnectionOptions: client.ConnectionOptions{
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(counted.intercept)}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// The worker has a connection of its own, so that its polls are not counted.
	wc, err := client.DialContext(ctx, client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	queue := "taskgate-calls-" + uuid.NewString()
	w := worker.New(wc, queue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	for _, tc := range []struct{ workflow, input string }{
		{temporalexamples.AskAndEchoName, `{"message":"count?"}`},
		{temporalexamples.BuildReleaseName, `{"version":"1","stepSeconds":30}`},
	} {
		tg := Workflow(tc.workflow, queue, 0)
		r, err := e.Start(ctx, tg, adapters.StartRequest{Input: json.RawMessage(tc.input)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Cancel(context.Background(), tg, r, "test over")
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			st, err := e.Describe(ctx, tg, r)
			if err != nil {
				t.Fatal(err)
			}
			if st.State == adapters.InputRequired || st.State == adapters.Working && st.Message != "" {
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
		if err := e.Answer(ctx, tg, r, "confirm", adapters.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
			t.Fatal(err)
		}
		if got := counted.take(); !reflect.DeepEqual(got, map[string]int{"DescribeWorkflowExecution": 1, "UpdateWorkflowExecution": 1}) {
			t.Errorf("an answer made %v", got)
		}
	}
}
