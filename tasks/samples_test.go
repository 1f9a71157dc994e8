package tasks_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// TestSamplesWithinTheBudget: the inputs of recent executions are read within the block's read
// budget, a listing and a read per execution at most: a second reading at once waits for its
// tokens. An engine that cannot read them says so.
func TestSamplesWithinTheBudget(t *testing.T) {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {mem: {memory: {}, budget: {readsPerSecond: 10, burst: 5}}}
tools:
  - name: echo
    description: Echoes.
    engine: mem
    job: {program: echo}
    inputSchema: {type: object}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.Engines["mem"].Config.Open(t.Context(), adapters.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": e}, Tokens: token.Native{Refs: set}})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("echo")
	for _, text := range []string{"a", "b"} {
		if _, err := svc.Start(t.Context(), tasks.StartRequest{Tool: tool, Args: json.RawMessage(`{"seconds": 60, "text": "` + text + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	inputs, err := svc.Samples(t.Context(), tool, 3)
	if err != nil || len(inputs) != 2 || string(inputs[0]) != `{"seconds":60,"text":"b"}` {
		t.Fatalf("Samples = %s, %v; want the two inputs, newest first", inputs, err)
	}
	if spent := svc.Budgets()["mem"].Spent; spent != 4 {
		t.Errorf("the budget spent %d tokens, want 4: a listing and 3 reads", spent)
	}
	start := time.Now()
	if _, err := svc.Samples(t.Context(), tool, 3); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("a second reading at once took %v, want it to wait about 300ms for 4 tokens at 10/s", waited)
	}
	if refused := svc.Budgets()["mem"].Refused; refused != 0 {
		t.Errorf("%d reads refused, want none: samples wait their turn", refused)
	}

	hidden := map[string]adapters.Conn{"mem": struct{ adapters.Conn }{e}}
	plain, err := tasks.New(tasks.Config{Mapping: set, Engines: hidden, Tokens: token.Native{Refs: set}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Samples(t.Context(), tool, 3); !errors.Is(err, tasks.ErrNoSamples) || err.Error() != `engine "mem": the engine cannot read the inputs of recent executions` {
		t.Errorf("Samples of an engine that is no Sampler = %v", err)
	}
}
