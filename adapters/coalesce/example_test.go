package coalesce_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/coalesce"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
)

// A client that polls a running task ten times within the task's polling interval costs the
// engine no read: the start is the first reading, and it answers them. Once the execution has
// ended, its outcome is read from the engine once and kept.
func Example() {
	ctx := context.Background()
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {mem: {memory: {}}}
tools:
  - {name: echo, description: Echoes., engine: mem, job: {program: echo}, inputSchema: {type: object}}
`))
	if err != nil {
		log.Fatal(err)
	}
	tool, _ := set.Tool("echo")
	conn, err := set.Engines[tool.Engine].Config.Open(ctx, adapters.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	reads := coalesce.New(coalesce.Options{Size: 100})
	engine := adapters.NewEngine(conn, adapters.EngineOptions{Readings: reads})
	defer engine.Close()

	// The task's polling curve, which its reads are told: every 5 s, whatever its age.
	p := pace.Pace{Created: time.Now(), Curve: pace.CurveFunc(func(time.Duration) time.Duration { return 5 * time.Second })}
	ref, err := engine.Start(ctx, tool.Target, adapters.StartRequest{Input: json.RawMessage(`{"seconds": 3600, "text": "hello"}`)}, p)
	if err != nil {
		log.Fatal(err)
	}
	for range 10 {
		if _, err := engine.Describe(ctx, tool.Target, ref, p); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("ten polls: %+v\n", reads.Counts().Describe)

	if err := engine.Cancel(ctx, tool.Target, ref, "no longer needed"); err != nil {
		log.Fatal(err)
	}
	st, _ := engine.Describe(ctx, tool.Target, ref, p)
	for range 2 {
		if _, err := engine.Outcome(ctx, tool.Target, ref); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%s; two outcome reads: %+v\n", st.State, reads.Counts().Outcome)
	// Output:
	// ten polls: {Engine:0 Shared:0 Fresh:10 Stale:0 Cached:0}
	// cancelled; two outcome reads: {Engine:1 Shared:0 Fresh:0 Stale:0 Cached:1}
}
