package taskcall

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const memTools = `
engines: {mem: {memory: {}}}
tools:
  - name: release
    description: Three steps, each saying so.
    engine: mem
    job: {program: steps}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {version: {type: string}, stepSeconds: {type: number}}, required: [version, stepSeconds]}
  - name: confirm
    description: Asks, then echoes the answer.
    engine: mem
    job: {program: ask}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
`

// methods counts the methods a server is sent; refuse, when set, is answered as a server before
// subscriptions/listen answers it.
type methods struct {
	mu     sync.Mutex
	sent   map[string]int
	refuse string
}

func (m *methods) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent[method]
}

// memServer serves memTools, counting the methods it is sent in m.
func memServer(t *testing.T, m *methods) *Client {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(memTools))
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.Engines["mem"].Config.Open(t.Context(), adapters.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	keys, _ := token.ParseKeys(token.NewKey("test"))
	tokens, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": e}, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Tasks: svc})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.HTTPHandler()
	m.sent = map[string]int{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Header.Get("Mcp-Method")
		m.mu.Lock()
		m.sent[method]++
		m.mu.Unlock()
		if method == m.refuse {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`))
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return NewClient(hs.URL, nil, "test")
}

// TestCallListens: a server that listens tells the call each step and the end, and the call
// answers a question it is told of, without a single poll; a server that does not listen is
// polled as before.
func TestCallListens(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args, refuse, stdout string
		answers                          []string
		polled                           bool
	}{
		{"steps, listened", "release", `{"version": "3.1", "stepSeconds": 0.3}`, "", `"status": "released"`, nil, false},
		{"a question, listened", "confirm", `{"message": "Ship it?"}`, "", `"confirm": true`, []string{`confirm={"confirm": true}`}, false},
		{"steps, polled by an older server's client", "release", `{"version": "3.1", "stepSeconds": 0.3}`, "subscriptions/listen", `"status": "released"`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &methods{refuse: tc.refuse}
			c := memServer(t, m)
			answers, err := ParseAnswers(tc.answers, nil)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := Run(t.Context(), c, Call{Tool: tc.tool, Arguments: []byte(tc.args), Answers: answers, Stdout: &stdout, Stderr: &stderr})
			if code != 0 || !strings.Contains(stdout.String(), tc.stdout) {
				t.Fatalf("exit status %d, stdout %q, want 0 and %q\nstderr:\n%s", code, &stdout, tc.stdout, &stderr)
			}
			if polls := m.count("tasks/get"); (polls > 0) != tc.polled || m.count("subscriptions/listen") != 1 {
				t.Fatalf("%d polls and %d listens, want polls: %v, and one listen", polls, m.count("subscriptions/listen"), tc.polled)
			}
			// Any step: one that began and ended between two reads is never seen.
			if tc.tool == "release" && !strings.Contains(stderr.String(), " of 3: ") {
				t.Fatalf("the progress shown has no step:\n%s", &stderr)
			}
		})
	}
}
