package adapters_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
)

// An engine package registers its driver from init; importing the package is then all it takes
// for mapping files to name its kind.
func init() { adapters.Register("inprocess", inProcess{}) }

// inProcess is a driver of this example's own: its engine blocks are "inprocess: {keep: 1m}",
// its tools' target is "program: echo", and its engines run the programs in memory (memengine's).
// A driver of a real engine reads an address and credentials, and its Open connects.
type inProcess struct{}

func (inProcess) Info() adapters.DriverInfo {
	return adapters.DriverInfo{
		Title:     "In-process",
		TargetKey: "program",
		Schema: []byte(`{
			"engine": {"type": "object", "additionalProperties": false, "properties": {"keep": {"$ref": "#/$defs/duration"}}},
			"target": {"type": "string", "enum": ["echo", "fail"]}}`),
		EngineExample: "inprocess: {keep: 1m}",
		TargetExample: "program: echo",
	}
}

// inProcessConfig is a decoded engine block: how long an ended execution stays readable.
type inProcessConfig struct{ keep time.Duration }

func (inProcess) DecodeEngine(b adapters.Block) adapters.EngineConfig {
	keep, _ := b.Duration("keep")
	return inProcessConfig{keep}
}

func (c inProcessConfig) Open(context.Context, adapters.OpenOptions) (adapters.Conn, error) {
	return memengine.New(memengine.Options{Retention: c.keep}), nil
}

func (inProcess) DecodeTarget(tool adapters.Block) adapters.Target {
	program, _ := tool.Required("program", "echo or fail")
	return memengine.Job(program, 0)
}

func (inProcess) FormatRef(r adapters.Ref) string { return "inprocess:" + r.ID }

func (inProcess) ParseRef(id string) (adapters.Ref, error) {
	rest, ok := strings.CutPrefix(id, "inprocess:")
	if !ok || rest == "" {
		return adapters.Ref{}, fmt.Errorf("%q is not an inprocess id, inprocess:ID", id)
	}
	return adapters.Ref{ID: rest}, nil
}

// A registered driver reads its engine blocks and targets in mapping files, and the block it
// decoded opens its Conn, which adapters.NewEngine serves as an Engine.
func ExampleRegister() {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {local: {inprocess: {keep: 1m}}}
tools:
  - {name: echo, description: Echoes., engine: local, program: echo, inputSchema: {type: object}}
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
	fmt.Println(tool.Target.Name, out.State, string(out.Output))

	driver, _ := adapters.Lookup("inprocess")
	id := driver.FormatRef(ref)
	back, err := driver.ParseRef(id)
	fmt.Println(strings.HasPrefix(id, "inprocess:"), back == ref, err)
	// Output:
	// echo succeeded {"text":"hello"}
	// true true <nil>
}
