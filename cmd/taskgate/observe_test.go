package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestServeIsObservable: serve --http answers /metrics, /readyz and /healthz beside /mcp.
func TestServeIsObservable(t *testing.T) {
	p := startServing(t, serveEnv(), "serve", "--config", "testdata/memory.yaml", "--http", "127.0.0.1:0", "--log-format", "json")
	base := strings.TrimSuffix(p.endpoint, "/mcp")
	c := rpctest.Modern(rpctest.HTTP{URL: p.endpoint}, ext)
	c.Decode(t, "tools/call", map[string]any{"name": "quick_echo", "arguments": map[string]any{"text": "seen"}})
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `taskgate_tasks_started_total{tool="quick_echo"} 1`) ||
		// A call that waits starts the execution and reads it, through the read budget and the
		// reuse of readings, until it ends.
		!strings.Contains(body, `taskgate_engine_call_duration_seconds_count{engine="mem",operation="start",result="ok"} 1`) ||
		!strings.Contains(body, `taskgate_engine_call_duration_seconds_count{engine="mem",operation="outcome",result="ok"} 1`) || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
	for path, want := range map[string]string{"/readyz": "ready\n", "/healthz": "ok\n"} {
		if code, body := get(path); code != 200 || body != want {
			t.Errorf("%s: %d %q, want 200 %q", path, code, body, want)
		}
	}
}

// Tracing is configured by the standard variables, and a wrong one stops serve with its name.
func TestTracingVariables(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "taskgate: OTEL_EXPORTER_OTLP_PROTOCOL=http/json: taskgate exports traces over grpc or http/protobuf\n"},
		{"OTEL_TRACES_EXPORTER=zipkin", "taskgate: OTEL_TRACES_EXPORTER=zipkin: taskgate exports traces with otlp (or none)\n"},
	} {
		var stdout, stderr bytes.Buffer
		name, value, _ := strings.Cut(c.env, "=")
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
		t.Setenv(name, value)
		code := run(t.Context(), []string{"serve", "--config", "testdata/memory.yaml", "--stdio"}, nil, &stdout, &stderr)
		if code != 1 || stderr.String() != c.want {
			t.Errorf("serve with %s: exit %d, stderr %q; want 1, %q", c.env, code, &stderr, c.want)
		}
		t.Setenv(name, "")
	}
}

var opsLine = regexp.MustCompile(`metrics and health on (http://\S+)`)

// TestStdioServerIsObservableOnOpsHTTP: serve --stdio --ops-http answers /metrics and the health
// endpoints on that address while MCP goes over standard input and output.
func TestStdioServerIsObservableOnOpsHTTP(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--config", "testdata/memory.yaml", "--stdio", "--ops-http", "127.0.0.1:0")
	cmd.Env = serveEnv()
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	defer p.kill()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := opsLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("serve --stdio --ops-http did not say where in 60s")
	}
	for path, want := range map[string]string{"/readyz": "ready\n", "/healthz": "ok\n", "/metrics": "# HELP taskgate_"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.200q, want 200 and %q", path, resp.StatusCode, body, want)
		}
	}
}

// TestServeStartsBeforeItsEngine: serve whose Temporal server is not up yet starts, logs it,
// answers /healthz 200 and /readyz 503 naming the engine, and turns ready with no restart once a
// real Temporal dev server starts on the mapped address; a call then completes. With
// --require-engines it exits at startup instead.
func TestServeStartsBeforeItsEngine(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	port := freePortPair(t)
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`engines:
  late:
    temporal: {address: 127.0.0.1:%d}
tools:
  - name: wait_and_echo
    description: Waits, then echoes the text.
    engine: late
    workflow: {type: WaitAndEcho, taskQueue: %s}
    inputSchema: {type: object}
`, port, temporalexamples.TaskQueue)), 0o600); err != nil {
		t.Fatal(err)
	}

	required := exec.Command(binary, "serve", "--config", file, "--http", "127.0.0.1:0", "--require-engines")
	required.Env = serveEnv()
	out, err := required.CombinedOutput()
	if code := processExit(err); code != 1 || !strings.Contains(string(out), fmt.Sprintf(`taskgate: tool "wait_and_echo" (%s:5): temporal: checking namespace default: engine unavailable at 127.0.0.1:%d, retry later: `, file, port)) {
		t.Fatalf("--require-engines with the engine down: exit %d:\n%s", code, out)
	}

	p := startServing(t, serveEnv(), "serve", "--config", file, "--http", "127.0.0.1:0")
	base := strings.TrimSuffix(p.endpoint, "/mcp")
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz with the engine down: %d %q", code, body)
	}
	const notReady = "not ready: engine \"late\" does not answer; the server's log says why\n"
	if code, body := get("/readyz"); code != 503 || body != notReady {
		t.Errorf("/readyz with the engine down: %d %q, want 503 %q", code, body, notReady)
	}
	if !strings.Contains(p.stderr.String(), "serving before the engines answer") {
		t.Errorf("the log does not say that the engine is down:\n%s", p.stderr.String())
	}

	started := time.Now()
	srv, err := testsuite.StartDevServer(t.Context(), testsuite.DevServerOptions{ExistingPath: cli,
		ClientOptions: &client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", port)}, LogLevel: "error", Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	w := worker.New(srv.Client(), temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	for {
		code, body := get("/readyz")
		if code == 200 && body == "ready\n" {
			break
		}
		if time.Since(started) > time.Minute {
			t.Fatalf("/readyz still %d %q a minute after the engine started", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("ready %s after the Temporal server started", time.Since(started).Round(time.Millisecond))
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"call", "wait_and_echo", "--url", p.endpoint, "--args", `{"seconds": 0, "text": "late but there"}`}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "late but there") {
		t.Errorf("a call once the engine is up: exit %d, stdout %q, stderr:\n%s", code, &stdout, &stderr)
	}
	deadline := time.Now().Add(45 * time.Second)
	for !strings.Contains(p.stderr.String(), "engines ready") {
		if time.Now().After(deadline) {
			t.Fatalf("the log never says the engines are ready:\n%s", p.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
