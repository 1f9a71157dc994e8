package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// A service serves a mapping's tools over the engines opened from its engine blocks: here one
// task is started, its id read back, and its end waited for, as any dialect would.
func ExampleService() {
	ctx := context.Background()
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {mem: {memory: {}}}
tools:
  - name: echo
    description: Echoes the text.
    engine: mem
    job: {program: echo}
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [text]}
`))
	if err != nil {
		log.Fatal(err)
	}
	engine, err := set.Engines["mem"].Config.Open(ctx, adapters.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	tokens, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": engine}, Tokens: tokens})
	if err != nil {
		log.Fatal(err)
	}

	tool, _ := set.Tool("echo")
	started, err := svc.Start(ctx, tasks.StartRequest{Tool: tool, Args: json.RawMessage(`{"seconds": 0, "text": "hello"}`)})
	if err != nil {
		log.Fatal(err)
	}
	task, err := svc.Open(ctx, started.ID) // as a later request would, from the id alone
	if err != nil {
		log.Fatal(err)
	}
	if err := svc.Wait(ctx, task, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status.State, task.Result.Text)
	// Output:
	// succeeded {"text":"hello"}
}
