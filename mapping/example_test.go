package mapping_test

import (
	"fmt"

	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
)

func ExampleParse() {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines:
  mem:
    memory: {}
tools:
  - name: echo
    description: Waits, then echoes the text.
    engine: mem
    job: {program: echo, timeout: 1m}
    inputSchema:
      type: object
      properties: {seconds: {type: number}, text: {type: string}}
      required: [text]
    input: '{seconds: (.seconds // 0), text}'
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	tool, _ := set.Tool("echo")
	fmt.Println(tool.Name, "on engine", tool.Engine, "of kind", set.Engines[tool.Engine].Kind)
	fmt.Println("target:", tool.Target.Name)
	fmt.Println(tool.ValidateArguments([]byte(`{"seconds": 1}`)))
	input, _ := tool.EngineInput([]byte(`{"text": "hi"}`))
	fmt.Println(string(input))
	// Output:
	// echo on engine mem of kind memory
	// target: echo
	// argument "text" is required
	// {"seconds":0,"text":"hi"}
}

func ExampleParse_errors() {
	_, err := mapping.Parse("tools.yaml", []byte(`
engines:
  mem:
    memory: {retention: forever}
tools:
  - name: echo
    engine: mem
    job: {program: echo}
    inputSchema: {type: object}
`))
	fmt.Println(err)
	// Output:
	// tools.yaml:4:25: engines.mem.memory.retention: "forever" is not a duration (use a Go duration like 30s, 5m, 24h)
	// tools.yaml:6:5: tools[0]: missing required key "description" (say what the tool does: MCP clients show it to the model)
}
