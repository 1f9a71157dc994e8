package tasks_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// TestBlocksOfOneAccountShareOneBudget: two Step Functions blocks on one endpoint (moto's
// account, found with STS) read within one budget together, where each alone would spend its
// own. Every poll asks the engine (FreshFor < 0), so the budget alone bounds the reads.
func TestBlocksOfOneAccountShareOneBudget(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", endpoint)
	sfnEngine, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	arns, err := sfnexamples.Ensure(t.Context(), sfnEngine.Client(), "arn:aws:iam::123456789012:role/taskgate-test")
	if err != nil {
		t.Fatal(err)
	}
	arn := arns["taskgate-sfn-wait-and-echo"]
	set, err := mapping.Parse("tools.yaml", []byte(`
engines:
  a: {stepfunctions: {region: us-east-1, endpoint: "`+endpoint+`"}, budget: {readsPerSecond: 2, burst: 2}}
  b: {stepfunctions: {region: us-east-1, endpoint: "`+endpoint+`"}, budget: {readsPerSecond: 4, burst: 4}}
tools:
  - {name: on_a, description: Waits., engine: a, stateMachine: "`+arn+`", inputSchema: {type: object}}
  - {name: on_b, description: Waits., engine: b, stateMachine: "`+arn+`", inputSchema: {type: object}}
`))
	if err != nil {
		t.Fatal(err)
	}
	conns := map[string]adapters.Conn{}
	for name, block := range set.Engines {
		c, err := block.Config.Open(t.Context(), adapters.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[name] = c
	}
	var describes atomic.Int64
	count := func(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
		if c.Op == adapters.OpDescribe {
			describes.Add(1)
		}
		return ctx, nil, nil
	}
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: conns, Tokens: token.Native{Refs: set}, FreshFor: -1,
		Hooks: func(string) []adapters.Hook { return []adapters.Hook{count} }})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	var ids []string
	for _, name := range []string{"on_a", "on_b"} {
		tool, _ := set.Tool(name)
		for range 5 {
			task, err := svc.Start(t.Context(), tasks.StartRequest{Tool: tool, Args: json.RawMessage(`{"seconds": 30, "text": "shared"}`)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, task.ID)
		}
	}
	begin := time.Now()
	ctx, stop := context.WithTimeout(t.Context(), 3*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for ctx.Err() == nil {
				svc.Read(ctx, id)
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	// One budget of 2/s (the smaller), a burst of 2: at most 2 + 2 reads a second over the run.
	most := int64(2 + 2*time.Since(begin).Seconds() + 1)
	if n := describes.Load(); n > most || n == 0 {
		t.Errorf("%d reads of 10 executions polled every 100 ms for 3 s through two blocks of one account; want at most %d (one budget of 2/s), above 0", n, most)
	}
	if a, b := svc.Budgets()["a"], svc.Budgets()["b"]; a.Spent != b.Spent || a.Budget.ReadsPerSecond != 2 {
		t.Errorf("the blocks' budgets: a %+v, b %+v; want one, of 2 reads a second", a, b)
	}
}
