package tasks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// unseen is an in-memory engine whose reads never find an execution, with the visibility lag it
// was made to declare (memengine.Options.VisibilityLag, promoted).
type unseen struct{ *memengine.Engine }

func (unseen) Describe(context.Context, adapters.Target, adapters.Ref) (adapters.Status, error) {
	return adapters.Status{}, fmt.Errorf("%w: not visible", adapters.ErrNotFound)
}

// A task whose engine does not find it is still starting for as long as its engine's driver
// declares (driver.VisibilityLagger), and not found past that: a second-old task on an engine
// that declares no lag is an error at once, on one that declares 10 s it reads as starting.
func TestNotFoundReadsByTheEnginesDeclaredLag(t *testing.T) {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines:
  atonce: {memory: {}}
  lagging: {memory: {}}
tools:
  - {name: atonce, description: On an engine that shows starts at once., engine: atonce, job: {program: echo}, inputSchema: {type: object}}
  - {name: lagging, description: On an engine that may not show a start for 10 s., engine: lagging, job: {program: echo}, inputSchema: {type: object}}
`))
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]adapters.Conn{
		"atonce":  unseen{memengine.New(memengine.Options{})},
		"lagging": unseen{memengine.New(memengine.Options{VisibilityLag: 10 * time.Second})},
	}
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	sealed, _ := token.NewSealed(keys)
	// Every read asks the engine: a start's own reading would answer it else.
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: sealed, FreshFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	for name, wantLag := range map[string]time.Duration{"atonce": 0, "lagging": 10 * time.Second} {
		tool, _ := set.Tool(name)
		task, err := svc.Start(ctx, tasks.StartRequest{Tool: tool, Args: []byte(`{"seconds": 0, "text": "x"}`)})
		if err != nil {
			t.Fatalf("%s: Start: %v", name, err)
		}
		claims, err := sealed.Open(task.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		claims.Created = time.Now().Add(-time.Second)
		got, err := svc.Read(ctx, sealed.Issue(claims))
		switch {
		case wantLag == 0 && tasks.KindOf(err) != tasks.NotFound:
			t.Errorf("%s: a second-old task not found on an engine that declares no lag: %+v %v, want not found", name, got, err)
		case wantLag > 0 && (err != nil || got.Status.State != adapters.Submitted || got.Status.Native != "NOT_YET_VISIBLE"):
			t.Errorf("%s: a second-old task not found on an engine that declares %v: %+v %v, want submitted, not yet visible", name, wantLag, got, err)
		}
		claims.Created = time.Now().Add(-11 * time.Second)
		if _, err := svc.Read(ctx, sealed.Issue(claims)); tasks.KindOf(err) != tasks.NotFound {
			t.Errorf("%s: an 11-second-old task not found: %v, want not found", name, err)
		}
	}
}
