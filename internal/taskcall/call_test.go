package taskcall

// Calls answered from lines typed at the prompts, against the example workflows on the test's
// Temporal server, served by mcpserver in the test process.

import (
	"bytes"
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/builtin" // the engine kinds the mappings name
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// The examples and the test tools, among them echo_after_asking (asks before it starts) and
// ask_two_and_echo (asks two questions at once).
var askingMappings = []string{"../../examples/temporal/tools.yaml", "../../mcpserver/testdata/test-tools.yaml"}

const deployArgs = `{"version": "1.4.0", "env": "staging", "stepSeconds": 0}`

// examples serves askingMappings over HTTP, with the example worker running, and returns a
// client of the endpoint. The function it returns reads the id that a call printed as it left
// its task waiting, and cancels that workflow when the test ends.
func examples(t *testing.T) (*Client, func(stderr string)) {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	t.Setenv("TEMPORAL_ADDRESS", addr)
	e, err := temporal.New(t.Context(), temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	tc := testenv.As[client.Client](t, e)
	w := worker.New(tc, temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	set, err := mapping.Load(askingMappings...)
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]adapters.Conn{}
	for _, tool := range set.Tools {
		if engines[tool.Engine] == nil {
			if engines[tool.Engine], err = set.Engines[tool.Engine].Config.Open(t.Context(), adapters.OpenOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { engines[tool.Engine].Close() })
		}
	}
	keys, _ := token.ParseKeys(token.NewKey("test"))
	tokens, err := token.NewSealed(keys)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Tasks: svc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return NewClient(hs.URL, nil, "test"), func(stderr string) {
		t.Helper()
		m := regexp.MustCompile("\nThe task goes on, waiting for the answer: (\\S+)\n$").FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("stderr does not end with the id of the task left waiting:\n%s", stderr)
		}
		claims, err := tokens.Open(m[1], time.Now())
		if err != nil {
			t.Fatalf("the printed task id %q does not open: %v", m[1], err)
		}
		wf, run, _ := temporal.WorkflowOf(claims.Ref)
		t.Cleanup(func() { tc.CancelWorkflow(context.Background(), wf, run) })
	}
}

func TestPrompts(t *testing.T) {
	c, left := examples(t)
	for _, tc := range []struct {
		name, tool, args string
		answers, lines   []string
		code             int
		stdout           string
		stderr           []string
	}{
		// The server refuses the --answer, then the prompts take a wrong value and a right one.
		{"answered on the terminal", "approve_deployment", deployArgs, []string{`approve={"approve": "yes"}`},
			[]string{"a", "maybe", "y", "looks good"}, 0, "Deployed 1.4.0 to staging.\n", []string{
				`the answer to "approve" was refused: the answer to "approve" does not fit its schema: `,
				"  approve: (a)nswer, (d)ecline, dis(m)iss or (l)ater? [a] a\n",
				"  Approve (Deploy this version now?) [y/n]: maybe\n  answer y or n\n  Approve (Deploy this version now?) [y/n]: y\n",
				"  Reason (Why, for the deployment log.) [optional, Enter to skip]: looks good\n",
			}},
		{"declined on the terminal", "approve_deployment", deployArgs, nil, []string{"x", "d"}, 0,
			"Did not deploy 1.4.0 to staging: declined.\n", []string{"  type a, d, m or l\n"}},
		{"dismissed on the terminal", "approve_deployment", deployArgs, nil, []string{"m"}, 0,
			"Did not deploy 1.4.0 to staging: dismissed.\n", nil},
		{"two questions at once", "ask_two_and_echo", `{}`, nil, []string{"a", "y", "", "n"}, 0,
			`"confirm": true`, []string{`question "first": first question: confirm?`, `question "second": second question: confirm?`}},
		{"asked before the start", "echo_after_asking", `{}`, []string{`who={"name": ""}`},
			[]string{"a", "", "Ada", "a", "y"}, 0, "Hello, Ada!\n", []string{
				`the answer to "who" was refused: the answer to "who" does not fit its schema: `,
				"  who: (a)nswer, (d)ecline or dis(m)iss? [a] a\n  name: \n  required: type a value\n  name: Ada\n",
			}},
		{"input ends", "approve_deployment", deployArgs, nil, []string{"a"}, ExitUnanswered, "",
			[]string{`taskgate call: the question "approve" (Deploy 1.4.0 to staging?) has no answer: standard input ended; answer it with --answer`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers, err := ParseAnswers(tc.answers, nil)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := Run(t.Context(), c, Call{Tool: tc.tool, Arguments: []byte(tc.args), Answers: answers,
				Terminal: strings.NewReader(strings.Join(tc.lines, "\n") + "\n"), Stdout: &stdout, Stderr: &stderr})
			if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || (tc.stdout == "" && stdout.Len() > 0) {
				t.Errorf("exit status %d, want %d\nstdout %q, want it to have %q\nstderr:\n%s", code, tc.code, &stdout, tc.stdout, &stderr)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not have %q:\n%s", want, &stderr)
				}
			}
			if code == ExitUnanswered {
				left(stderr.String())
			}
		})
	}
}
