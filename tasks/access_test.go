package tasks_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// Two tools on one program, one of them alice's only, and one that needs a scope: a task is read,
// answered, cancelled and listed only through the tool it was started with, while its caller may
// use that tool.
const sharedTools = `
engines:
  mem: {memory: {}}
tools:
  - name: admin_echo
    description: The whole output; alice's only.
    engine: mem
    job: {program: echo}
    allow: {principals: [alice]}
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: echo_length
    description: Only the length of the text.
    engine: mem
    job: {program: echo}
    result: '{length: (.text | length)}'
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: deploy
    description: Asks before it deploys; needs the deploy scope.
    engine: mem
    job: {program: ask}
    allow: {scopes: [deploy]}
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
`

// memTools parses a mapping of tools on the memory engine block mem, and opens its engine until
// the test ends.
func memTools(t *testing.T, tools string) (*mapping.Set, adapters.Conn) {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.Engines["mem"].Config.Open(t.Context(), adapters.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return set, e
}

type shared struct {
	set     *mapping.Set
	engines map[string]adapters.Conn
	mem     *counting
}

func newShared(t *testing.T) *shared {
	t.Helper()
	set, e := memTools(t, sharedTools)
	mem := &counting{Conn: e}
	return &shared{set: set, engines: map[string]adapters.Conn{"mem": mem}, mem: mem}
}

// service serves the shared engines with tokens.
func (s *shared) service(t *testing.T, tokens token.Codec) *tasks.Service {
	t.Helper()
	svc, err := tasks.New(tasks.Config{Mapping: s.set, Engines: s.engines, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func keys(t *testing.T, specs ...string) []token.Key {
	t.Helper()
	k, err := token.ParseKeys(strings.Join(specs, ","))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sealedWith(t *testing.T, k []token.Key) token.Codec {
	t.Helper()
	c, err := token.NewSealed(k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startAs(t *testing.T, svc *tasks.Service, ctx context.Context, tool *mapping.Tool, args string) *tasks.Task {
	t.Helper()
	task, err := svc.Start(ctx, tasks.StartRequest{Tool: tool, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Start %s: %v", tool.Name, err)
	}
	return task
}

func TestTasksReadOnlyThroughTheirTool(t *testing.T) {
	k := keys(t, token.NewKey("k1"))
	for _, c := range []struct {
		name   string
		tokens func(*mapping.Set) token.Codec
	}{
		{"sealed", func(*mapping.Set) token.Codec { return sealedWith(t, k) }},
		{"native", func(set *mapping.Set) token.Codec { return token.Native{Refs: set, Keys: k} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newShared(t)
			admin, _ := s.set.Tool("admin_echo")
			length, _ := s.set.Tool("echo_length")
			svc := s.service(t, c.tokens(s.set))
			bobs := startAs(t, svc, as("bob"), length, `{"seconds": 0, "text": "secret text"}`)
			alices := startAs(t, svc, as("alice"), admin, `{"seconds": 60, "text": "alice's"}`)
			var done *tasks.Task
			for done == nil || !done.Ended() {
				var err error
				if done, err = svc.Read(as("bob"), bobs.ID); err != nil {
					t.Fatalf("bob reads his task: %v", err)
				}
			}
			if done.Tool.Name != "echo_length" || string(done.Result.Structured) != `{"length":11}` {
				t.Fatalf("bob's task reads through %s as %s, want echo_length's {\"length\":11}", done.Tool.Name, done.Result.Structured)
			}

			listed, next, err := svc.List(as("bob"), "")
			if err != nil || next != "" || len(listed) != 1 || listed[0].Tool.Name != "echo_length" || listed[0].Ref() != bobs.Ref() {
				t.Fatalf("bob's listing: %v, %q, %v; want his one task, once, under echo_length", listed, next, err)
			}
			listed, _, err = svc.List(as("alice"), "")
			if err != nil || len(listed) != 1 || listed[0].Tool.Name != "admin_echo" || listed[0].Ref() != alices.Ref() {
				t.Fatalf("alice's listing: %v, %v; want her one task, once, under admin_echo", listed, err)
			}
			if _, err := svc.Read(as("bob"), alices.ID); tasks.KindOf(err) != tasks.NotFound {
				t.Fatalf("bob reads alice's task: %v", err)
			}
		})
	}
}

func TestCursorsOfHiddenToolsReadAsNoTool(t *testing.T) {
	s := newShared(t)
	svc := s.service(t, sealedWith(t, keys(t, token.NewKey("k1"))))
	for _, tool := range []string{"admin_echo", "no_such_tool"} {
		_, _, err := svc.List(as("bob"), cursor(tool))
		wantError(t, "bob's cursor naming "+tool, err, tasks.Invalid, "Failed to list tasks: the cursor is not one tasks/list gave")
	}
	if _, _, err := svc.List(as("alice"), cursor("admin_echo")); err != nil {
		t.Fatalf("alice's cursor naming her tool: %v", err)
	}
}

// cursor is a list cursor that names tool, as tasks/list writes one.
func cursor(tool string) string {
	b, _ := json.Marshal(map[string]string{"t": tool})
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestScopesHoldOnEveryRequest(t *testing.T) {
	s := newShared(t)
	svc := s.service(t, sealedWith(t, keys(t, token.NewKey("k1"))))
	deploy, _ := s.set.Tool("deploy")
	granted := tasks.WithPrincipal(context.Background(), mapping.OAuthPrincipal("carol"), "deploy")
	withoutScope := tasks.WithPrincipal(context.Background(), mapping.OAuthPrincipal("carol"))
	task := startAs(t, svc, granted, deploy, `{"message": "Ship it?"}`)
	for {
		read, err := svc.Read(granted, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if read.Status.State == adapters.InputRequired {
			break
		}
	}
	_, err := svc.Open(withoutScope, task.ID)
	wantError(t, "carol's answer without the scope", err, tasks.Invalid, `tool "deploy" is not available to oauth:carol: it needs the scopes deploy`)
	if listed, _, err := svc.List(withoutScope, ""); err != nil || len(listed) != 0 {
		t.Fatalf("carol's listing without the scope: %v, %v", listed, err)
	}
	if n := s.mem.answers.Load(); n != 0 {
		t.Fatalf("%d answers reached the engine", n)
	}
	opened, err := svc.Open(granted, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(granted, opened, tasks.Given(map[string]tasks.Answer{"confirm": {Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}})); err != nil {
		t.Fatalf("carol's answer with the scope: %v", err)
	}
}

func TestCallersAreKeyedAndRotate(t *testing.T) {
	s := newShared(t)
	length, _ := s.set.Tool("echo_length")
	old, next := token.NewKey("old"), token.NewKey("new")
	before := s.service(t, token.Native{Refs: s.set, Keys: keys(t, old)})
	task := startAs(t, before, as("alice"), length, `{"seconds": 60, "text": "x"}`)
	sum := sha256.Sum256([]byte("alice")) // the caller before callers were keyed
	if unkeyed := driver.CallerTag(base64.RawURLEncoding.EncodeToString(sum[:16])); strings.Contains(task.Ref().ID, unkeyed) {
		t.Fatalf("the execution id %s carries alice's unkeyed tag %s", task.Ref().ID, unkeyed)
	}
	if _, err := s.service(t, token.Native{Refs: s.set, Keys: keys(t, next)}).Read(as("alice"), task.ID); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("a deployment with another secret reads alice's task: %v", err)
	}
	rotated := s.service(t, token.Native{Refs: s.set, Keys: keys(t, next, old)})
	if _, err := rotated.Read(as("alice"), task.ID); err != nil {
		t.Fatalf("after rotation, the id issued before: %v", err)
	}
	fresh := startAs(t, rotated, as("alice"), length, `{"seconds": 60, "text": "y"}`)
	listed, _, err := rotated.List(as("alice"), "")
	if err != nil || len(listed) != 2 {
		t.Fatalf("after rotation alice lists %v, %v; want both tasks", listed, err)
	}
	if listed[0].Ref() != fresh.Ref() && listed[1].Ref() != fresh.Ref() {
		t.Fatalf("the listing %v lacks the new task", listed)
	}
	if _, err := rotated.Read(as("bob"), task.ID); tasks.KindOf(err) != tasks.NotFound {
		t.Fatalf("bob reads alice's task after rotation: %v", err)
	}
}

func TestAuthenticatedMappingsNeedASecret(t *testing.T) {
	set, err := mapping.Parse("tools.yaml", []byte(sharedTools+`
auth:
  apiKeys:
    - {principal: alice, keyEnv: KEY_ALICE}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": nil}, Tokens: token.Native{Refs: set}})
	if err == nil || !strings.Contains(err.Error(), "TASKGATE_TOKEN_KEYS") {
		t.Fatalf("native ids with no secret under auth: %v", err)
	}
}

// A native id made up after a caller's own tag (the shape of her ids, a suffix of her choosing)
// names nothing she started: it is not found before any engine read.
func TestMadeUpNativeIDsCostNoRead(t *testing.T) {
	s := newShared(t)
	length, _ := s.set.Tool("echo_length")
	svc := s.service(t, token.Native{Refs: s.set, Keys: keys(t, token.NewKey("k1"))})
	task := startAs(t, svc, as("alice"), length, `{"seconds": 60, "text": "hers"}`)
	if _, err := svc.Read(as("alice"), task.ID); err != nil {
		t.Fatalf("alice reads her own task: %v", err)
	}
	i := strings.LastIndexByte(task.ID, '/')
	before := s.mem.describes.Load()
	for _, suffix := range []string{"3f2b8c1e-9d4a-4b7e-8c2f-1a2b3c4d5e6f", driver.NewSuffix("alice"), "k-" + strings.Repeat("0a", 16)} {
		if _, err := svc.Read(as("alice"), task.ID[:i+1]+suffix); tasks.KindOf(err) != tasks.NotFound {
			t.Errorf("a made-up id with alice's tag and suffix %s: %v, want not found", suffix, err)
		}
	}
	if n := s.mem.describes.Load() - before; n != 0 {
		t.Errorf("made-up ids cost %d engine reads, want none", n)
	}
}
