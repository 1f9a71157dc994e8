package tasks_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

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
	arns, err := sfnexamples.Ensure(t.Context(), testenv.As[*sfn.Client](t, sfnEngine), "arn:aws:iam::123456789012:role/taskgate-test")
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

// onAccount is an engine that names the account it reads, and counts how often it is asked.
type onAccount struct {
	adapters.Conn
	account string
	asked   *atomic.Int64
}

func (c onAccount) Account(context.Context) (string, error) {
	c.asked.Add(1)
	return c.account, nil
}

// serveAccounts serves the mapping src, whose blocks are memory engines, each reading the account
// that accounts names for it; asked counts the questions of their accounts.
func serveAccounts(t *testing.T, src string, accounts map[string]string) (svc *tasks.Service, set *mapping.Set, asked *atomic.Int64) {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	asked = &atomic.Int64{}
	conns := map[string]adapters.Conn{}
	for name, block := range set.Engines {
		c, err := block.Config.Open(t.Context(), adapters.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[name] = onAccount{Conn: c, account: accounts[name], asked: asked}
	}
	svc, err = tasks.New(tasks.Config{Mapping: set, Engines: conns, Tokens: token.Native{Refs: set}, FreshFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc, set, asked
}

// TestUnlimitedBlockSpendsItsAccountsBudget: beside the only budgeted block of their kind, blocks
// with budget: unlimited are asked their accounts; one on the budgeted block's account reads
// within its budget, spending it, and one on another account stays unlimited.
func TestUnlimitedBlockSpendsItsAccountsBudget(t *testing.T) {
	svc, set, asked := serveAccounts(t, `
engines:
  team: {memory: {}, budget: {readsPerSecond: 2, burst: 2}}
  free: {memory: {}, budget: unlimited}
  apart: {memory: {}, budget: unlimited}
tools:
  - {name: on_team, description: Echoes., engine: team, job: {program: echo}, inputSchema: {type: object}}
  - {name: on_free, description: Echoes., engine: free, job: {program: echo}, inputSchema: {type: object}}
  - {name: on_apart, description: Echoes., engine: apart, job: {program: echo}, inputSchema: {type: object}}
`, map[string]string{"team": "shared", "free": "shared", "apart": "other"})
	if n := asked.Load(); n != 3 {
		t.Errorf("%d questions of the blocks' accounts, want 3 (every block of a kind with a budgeted block)", n)
	}
	budgets := svc.Budgets()
	if free, ok := budgets["free"]; !ok || free.Budget.ReadsPerSecond != 2 {
		t.Fatalf("the unlimited block beside a budgeted one: %+v (there: %v), want the account's budget of 2 reads a second", free, ok)
	}
	if apart, ok := budgets["apart"]; ok {
		t.Errorf("the unlimited block alone on its account: %+v, want no budget", apart)
	}
	tool, _ := set.Tool("on_free")
	task, err := svc.Start(t.Context(), tasks.StartRequest{Tool: tool, Args: json.RawMessage(`{"seconds": 60, "text": "unseen"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Read(t.Context(), task.ID); err != nil {
		t.Fatal(err)
	}
	if spent := svc.Budgets()["team"].Spent; spent == 0 {
		t.Errorf("a read through the unlimited block spent %d tokens of the budgeted block's budget, want some", spent)
	}
}

// TestBlocksAllUnlimitedStayUnlimited: blocks of one account that are all unlimited have no budget,
// and their accounts are not asked.
func TestBlocksAllUnlimitedStayUnlimited(t *testing.T) {
	svc, _, asked := serveAccounts(t, `
engines:
  a: {memory: {}, budget: unlimited}
  b: {memory: {}, budget: unlimited}
tools:
  - {name: on_a, description: Echoes., engine: a, job: {program: echo}, inputSchema: {type: object}}
  - {name: on_b, description: Echoes., engine: b, job: {program: echo}, inputSchema: {type: object}}
`, map[string]string{"a": "shared", "b": "shared"})
	if budgets := svc.Budgets(); len(budgets) > 0 || asked.Load() > 0 {
		t.Errorf("two unlimited blocks of one account: budgets %+v, %d questions of their accounts; want none and none", budgets, asked.Load())
	}
}
