package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/rpctest"
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
		!strings.Contains(body, `taskgate_engine_call_duration_seconds_count{engine="mem",operation="run",result="ok"} 1`) || !strings.Contains(body, "go_goroutines") {
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
