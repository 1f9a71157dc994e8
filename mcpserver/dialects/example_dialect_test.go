package dialects

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// peek is a made-up revision of the tasks extension (docs/adding-a-dialect.md walks through it):
// a call answers a task at once, and one more task method, tasks/peek, answers a task's status
// and nothing else. It takes what the extension takes, from callers that declared the extension:
// a revision under an extension id of its own would read that id in caps.go as `tasks` is read.
type peek struct{ r *Router }

func (peek) takes(c caps, tool *mapping.Tool) bool {
	return tool.TaskSupport != mapping.TaskForbidden && c.operation == nil && c.modern && c.tasks
}

func (d peek) call(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	t, err := d.r.tasks.Start(ctx, call.request())
	if err != nil {
		return d.r.toolAnswer(c, peekWords, err)
	}
	return &peekCreated{TaskID: t.ID, Status: extensionStatus(t)}, nil
}

// speaks: every 2026-07-28 caller; ofDeclared tells those that did not declare the extension to.
func (peek) speaks(c caps) bool { return c.modern }

func (d peek) methods() map[string]method {
	return map[string]method{"tasks/peek": ofDeclared(d.peek)}
}

func (peek) words() words { return peekWords }

var peekWords = words{notFound: "Failed to peek at task: Task not found", expired: "Failed to peek at task: Task has expired"}

// peek serves tasks/peek. An error is the task service's: the Router renders it in peekWords.
func (d peek) peek(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	t, err := d.r.tasks.Read(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	return &peekStatus{Status: extensionStatus(t)}, nil
}

// The revision's results, in wire.go's manner: required fields without omitempty, fixed words as
// types (created, complete) that marshal only to that word.
type peekCreated struct {
	mcp.ResultBase
	ResultType created `json:"resultType"`
	TaskID     string  `json:"taskId"`
	Status     string  `json:"status"`
}

type peekStatus struct {
	mcp.ResultBase
	ResultType complete `json:"resultType"`
	Status     string   `json:"status"`
}

// A task dialect is a type that implements dialect, and its place in newDialects. Here a Router
// over the in-memory engine gets peek in front of the built-in dialects, as a first entry of
// newDialects would put it, and serves a start and three peeks as a transport hands them over.
func Example_newDialect() {
	set, err := mapping.Parse("tools.yaml", []byte(`
engines: {mem: {memory: {}}}
tools:
  - {name: wait, description: Waits an hour., engine: mem, job: {program: echo}, input: '{seconds: 3600}', inputSchema: {type: object}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	engine, err := set.Engines["mem"].Config.Open(ctx, adapters.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	tokens, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": engine}, Tokens: tokens})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()
	r, err := New(Config{Tasks: svc})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := peek{r}
	r.dialects = append([]dialect{d}, r.dialects...)
	for name, m := range d.methods() {
		r.methods[name] = append([]served{{d, m}}, r.methods[name]...)
	}

	// What a caller of 2026-07-28 puts in each request's _meta; declaring, or not, the extension.
	declared := mcp.Meta{mcp.MetaKeyProtocolVersion: ModernVersion,
		mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{extensionTasks: map[string]any{}}}}
	undeclared := mcp.Meta{mcp.MetaKeyProtocolVersion: ModernVersion}
	// serve hands a request to the Router as the HTTP fast path does (mcpserver/fastpath.go: Read,
	// then Route, which passes a task method on to TaskMethod) and prints the result or error as
	// JSON, as the client reads it (go-sdk adds _meta.serverInfo on the way out).
	var id string
	serve := func(method string, req mcp.Request) {
		ctx, _ := r.Read(ctx, method, req, Via{})
		res, err := r.Route(r.TaskMethod)(ctx, method, req)
		if created, ok := res.(*peekCreated); ok {
			id = created.TaskID
		}
		b, _ := json.Marshal(res)
		if err != nil {
			b, _ = json.Marshal(err)
		}
		if id != "" {
			b = []byte(strings.ReplaceAll(string(b), id, "ID"))
		}
		fmt.Println(method+":", string(b))
	}
	serve("tools/call", &mcp.ServerRequest[*mcp.CallToolParamsRaw]{Params: &mcp.CallToolParamsRaw{
		Meta: declared, Name: "wait", Arguments: json.RawMessage(`{}`)}})
	for _, p := range []*taskParams{
		{ParamsBase: mcp.ParamsBase{Meta: declared}, TaskID: id},
		{ParamsBase: mcp.ParamsBase{Meta: declared}, TaskID: "tg1.nowhere"},
		{ParamsBase: mcp.ParamsBase{Meta: undeclared}, TaskID: id},
	} {
		serve("tasks/peek", &mcp.ServerRequest[*taskParams]{Params: p})
	}
	// Output:
	// tools/call: {"resultType":"task","taskId":"ID","status":"working"}
	// tasks/peek: {"resultType":"complete","status":"working"}
	// tasks/peek: {"code":-32602,"message":"Failed to peek at task: Task not found"}
	// tasks/peek: {"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}
}
