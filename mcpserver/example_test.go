package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// A server serves the task service of a mapping with engines opened from its engine blocks; here
// an MCP client talks to it in memory and calls a tool that waits for its result.
func ExampleNew() {
	ctx := context.Background()
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {mem: {memory: {}}}
tools:
  - name: echo
    description: Echoes the text.
    engine: mem
    job: {program: echo}
    taskSupport: forbidden
    input: '{seconds: 0, text}'
    inputSchema: {type: object, properties: {text: {type: string}}, required: [text]}
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
	srv, err := mcpserver.New(mcpserver.Config{Tasks: svc})
	if err != nil {
		log.Fatal(err)
	}

	serverSide, clientSide := mcp.NewInMemoryTransports()
	go srv.Serve(ctx, serverSide)
	session, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"text":"hello"}
}
