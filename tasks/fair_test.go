package tasks_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// readsBy counts the engine reads that reach a Conn, by the principal whose request made them.
type readsBy struct {
	adapters.Conn
	mu    sync.Mutex
	reads map[string]int
}

func (c *readsBy) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	c.mu.Lock()
	c.reads[tasks.Principal(ctx)]++
	c.mu.Unlock()
	return c.Conn.Describe(ctx, t, r)
}

// TestAFloodTakesNoMoreThanItsShare: while alice reads as fast as she can (eight readers of her
// tasks, with no reading reused), bob, who polls his one task five times a second, still has his
// reads made: the budget of 4 reads a second is split between the two of them while it is
// contended.
func TestAFloodTakesNoMoreThanItsShare(t *testing.T) {
	set, e := memTools(t, `
engines:
  mem: {memory: {}, budget: {readsPerSecond: 4, burst: 4}}
tools:
  - name: echo
    description: Echoes after a while.
    engine: mem
    job: {program: echo}
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
`)
	counted := &readsBy{Conn: e, reads: map[string]int{}}
	keys, _ := token.ParseKeys(token.NewKey("f1"))
	sealed, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": counted}, Tokens: sealed, FreshFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	echo, _ := set.Tool("echo")
	args := json.RawMessage(`{"seconds": 60, "text": "x"}`)
	var alices []string
	for range 8 {
		task, err := svc.Start(as("alice"), tasks.StartRequest{Tool: echo, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		alices = append(alices, task.ID)
	}
	bobs, err := svc.Start(as("bob"), tasks.StartRequest{Tool: echo, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for _, id := range alices {
		wg.Go(func() {
			for ctx.Err() == nil {
				svc.Read(as("alice"), id)
			}
		})
	}
	var polls atomic.Int64
	wg.Go(func() {
		for ctx.Err() == nil {
			svc.Read(as("bob"), bobs.ID)
			polls.Add(1)
			time.Sleep(200 * time.Millisecond)
		}
	})
	wg.Wait()
	counted.mu.Lock()
	alice, bob := counted.reads["alice"], counted.reads["bob"]
	counted.mu.Unlock()
	// 10 s of a budget of 4/s and a burst of 4: at most 44 reads, and each of them asks for more
	// than half. Unshared, alice's turns took all but a tenth of them (39 and 5); split fairly,
	// each has about 20, alice a few more for what she read before the budget was contended.
	if bob < 12 || alice > 30 || alice+bob > 46 {
		t.Fatalf("in 10 s, alice's reads reached the engine %d times and bob's %d (of his %d polls); want bob's at least 12 and alice's at most 30, all within the budget's 44",
			alice, bob, polls.Load())
	}
}
