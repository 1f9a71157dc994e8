package memengine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // registers the "memory" driver
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
)

// A driver is used through its registration: a mapping file names its kind, the driver decodes
// the engine block and the tool's target, and the decoded block opens the engine.
func Example() {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {mem: {memory: {}}}
tools:
  - {name: echo, description: Echoes., engine: mem, job: {program: echo}, inputSchema: {type: object}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	tool, _ := set.Tool("echo")
	conn, err := set.Engines[tool.Engine].Config.Open(ctx, adapters.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	engine := adapters.NewEngine(conn, adapters.EngineOptions{})
	defer engine.Close()

	ref, out, err := engine.Run(ctx, tool.Target, adapters.StartRequest{Input: json.RawMessage(`{"seconds": 0, "text": "hello"}`)}, pace.Pace{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.State, out.Native, string(out.Output))
	fmt.Println(engine.Owns(tool.Target, ref, ""))

	driver, _ := adapters.Lookup("memory")
	back, _ := driver.ParseRef(driver.FormatRef(ref))
	fmt.Println(back == ref)
	// Output:
	// succeeded SUCCEEDED {"text":"hello"}
	// true
	// true
}
