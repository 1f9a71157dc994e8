package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskgate/taskgate/devenv"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
)

const ext = "io.modelcontextprotocol/tasks"

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "taskgate-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "taskgate")
	if out, err := exec.Command("go", "build", "-tags", "memengine,dev", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is one running taskgate.
type process struct {
	cmd      *exec.Cmd
	endpoint string
	stderr   lockedBuffer // what it logged
}

// devEnv is the environment of a `taskgate dev` against the test's Temporal server, with a cache
// folder of its own, so that the processes of one test share their dev token key.
func devEnv(t *testing.T, home string) []string {
	return append(os.Environ(), "TEMPORAL_ADDRESS="+testenv.TemporalAddress(t), "HOME="+home,
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"))
}

// startStdio runs `taskgate dev --stdio` as an MCP client would spawn it and speaks to it on its
// pipes. When the test ends the client leaves (stdin closes), and dev must stop all it started.
func startStdio(t *testing.T, env []string, args ...string) (*rpctest.Client, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"dev", "--stdio"}, args...)...)
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("dev did not stop within 20s of its client leaving")
		}
		if t.Failed() {
			t.Log(stderr.String())
		}
	})
	return rpctest.Modern(&rpctest.Stdio{In: in, Out: bufio.NewReader(out)}, ext), stderr
}

var servingLine = regexp.MustCompile(`serving \d+ tools on (http://\S+)`)

// startHTTP starts `taskgate dev --http 127.0.0.1:0` and waits until it serves.
func startHTTP(t *testing.T, home string, args ...string) *process {
	t.Helper()
	return startServing(t, devEnv(t, home), append([]string{"dev", "--http", "127.0.0.1:0"}, args...)...)
}

// startServing runs taskgate with args in env and waits until it serves HTTP.
func startServing(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	t.Cleanup(func() { p.kill() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
			fmt.Fprintln(&p.stderr, sc.Text())
			t.Log("taskgate:", sc.Text())
		}
	}()
	select {
	case p.endpoint = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("taskgate %s did not start serving within 60s", args[0])
	}
	return p
}

func (p *process) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
	}
}

func poll(t *testing.T, c *rpctest.Client, id string, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.Decode(t, "tasks/get", map[string]any{"taskId": id})
		if got["status"] == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %v after 30s, want %s: %v", got["status"], want, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func structured(t *testing.T, task map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(task["result"].(map[string]any)["structuredContent"])
	return string(b)
}

func TestDevOverStdio(t *testing.T) {
	c, stderr := startStdio(t, devEnv(t, t.TempDir()))

	tools := c.Decode(t, "tools/list", nil)["tools"].([]any)
	if len(tools) != 6 {
		t.Fatalf("tools/list has %d tools, want 6", len(tools))
	}
	created := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 2, "text": "over stdio"}})
	if created["resultType"] != "task" || created["status"] != "working" {
		t.Fatalf("CreateTaskResult = %v", created)
	}
	id := created["taskId"].(string)
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Fatalf("tasks/get = %v, want working", got)
	}
	if got := structured(t, poll(t, c, id, "completed")); got != `{"text":"over stdio"}` {
		t.Fatalf("structuredContent = %s", got)
	}
	if !strings.Contains(stderr.String(), "MCP:         on standard input/output") {
		t.Errorf("dev --stdio did not print where MCP is on stderr:\n%s", stderr.String())
	}
}

// TestRestartAndReplicas: a task created on one process is polled on another, and its id still
// resolves after the process that created it was killed and started again.
func TestRestartAndReplicas(t *testing.T) {
	home := t.TempDir()
	a, b := startHTTP(t, home), startHTTP(t, home)
	ca := rpctest.Modern(rpctest.HTTP{URL: a.endpoint}, ext)
	cb := rpctest.Modern(rpctest.HTTP{URL: b.endpoint}, ext)

	id := ca.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 4, "text": "survives"}})["taskId"].(string)
	if got := cb.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Fatalf("replica B: %v, want working", got)
	}
	a.kill()
	a2 := startHTTP(t, home)
	c2 := rpctest.Modern(rpctest.HTTP{URL: a2.endpoint}, ext)
	if got := structured(t, poll(t, c2, id, "completed")); got != `{"text":"survives"}` {
		t.Fatalf("after restart: structuredContent = %s", got)
	}
	if got := structured(t, poll(t, cb, id, "completed")); got != `{"text":"survives"}` {
		t.Fatalf("replica B: structuredContent = %s", got)
	}
}

// TestDevServesStepFunctionsExamples: `dev --sfn-endpoint` creates the example state machines in
// the endpoint and serves them beside the Temporal examples.
func TestDevServesStepFunctionsExamples(t *testing.T) {
	p := startHTTP(t, t.TempDir(), "--sfn-endpoint", testenv.SFNEndpoint(t))
	c := rpctest.Modern(rpctest.HTTP{URL: p.endpoint}, ext)
	names := map[string]bool{}
	for _, tool := range c.Decode(t, "tools/list", nil)["tools"].([]any) {
		names[tool.(map[string]any)["name"].(string)] = true
	}
	for _, want := range []string{"wait_and_echo", "sfn_wait_and_echo", "sfn_wait_and_fail", "process_order"} {
		if !names[want] {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	id := c.Decode(t, "tools/call", map[string]any{"name": "process_order", "arguments": map[string]any{
		"orderId": "A-17", "items": []any{map[string]any{"sku": "pen", "qty": 3}, map[string]any{"sku": "ink", "qty": 1}}}})["taskId"].(string)
	done := poll(t, c, id, "completed")
	if res := done["result"].(map[string]any); res["isError"] == true || !strings.Contains(structured(t, done), "A-17") {
		t.Fatalf("process_order = %v", done)
	}
}

// lockedBuffer is a strings.Builder that a child process may write while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freePortPair finds a port p such that p and p+1000 (the Temporal UI) are both free.
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p+1000 > 65535 {
			continue
		}
		if ui, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1000)); err == nil {
			ui.Close()
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// TestDevStartsItsOwnTemporal is the newcomer's path: no TEMPORAL_ADDRESS, so dev starts a Temporal
// dev server itself; over stdio, standard output carries nothing but the protocol.
func TestDevStartsItsOwnTemporal(t *testing.T) {
	testenv.TemporalAddress(t) // the CLI that scripts/with-engines built is needed
	tools := os.Getenv("TASKGATE_TOOLS")
	if tools == "" {
		cache, err := devenv.CacheDir()
		if err != nil {
			t.Fatal(err)
		}
		tools = cache
	}
	home := t.TempDir()
	port := freePortPair(t)
	var env []string
	for _, kv := range devEnv(t, home) {
		if !strings.HasPrefix(kv, "TEMPORAL_ADDRESS=") {
			env = append(env, kv)
		}
	}
	c, stderr := startStdio(t, append(env, "TASKGATE_TOOLS="+tools), "--temporal-port", fmt.Sprint(port))
	id := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "own server"}})["taskId"].(string)
	if got := structured(t, poll(t, c, id, "completed")); got != `{"text":"own server"}` {
		t.Fatalf("structuredContent = %s", got)
	}
	if strings.Contains(stderr.String(), "no worker polls") {
		t.Errorf("dev warned about its own worker's queue:\n%s", stderr.String())
	}
}
