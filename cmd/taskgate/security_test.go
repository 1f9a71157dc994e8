package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
	"github.com/taskgate/taskgate/tasks/token"
)

const ciKey = "ci-0123456789abcdef0123"

// authMapping is the memory mapping with an auth: block of API keys and, when issuer is set, an
// OAuth issuer.
func authMapping(t *testing.T, issuer *bearertest.Issuer) string {
	t.Helper()
	src, err := os.ReadFile("testdata/memory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	block := "\nauth:\n  apiKeys:\n    - {principal: ci-bot, keyEnv: TASKGATE_TEST_KEY}\n"
	if issuer != nil {
		block += fmt.Sprintf("  oauth:\n    issuer: %s\n    audience: https://mcp.example/mcp\n    jwksUrl: %s\n    scopes: [mcp]\n", "https://auth.example", issuer.URL)
	}
	f := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(f, append(src, block...), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestServeRefusesOpenNetworksWithoutAuth(t *testing.T) {
	out, err := exec.Command(binary, "serve", "--config", "testdata/memory.yaml", "--http", "0.0.0.0:0").CombinedOutput()
	if code := processExit(err); code != 2 || !strings.Contains(string(out), "--http 0.0.0.0:0 listens beyond loopback, and the mapping has no auth: block") {
		t.Fatalf("exit %d: %s", code, out)
	}
	p := startServing(t, serveEnv(), "serve", "--config", "testdata/memory.yaml", "--http", "0.0.0.0:0", "--insecure-no-auth")
	if !strings.HasPrefix(p.endpoint, "http://[::]:") && !strings.HasPrefix(p.endpoint, "http://0.0.0.0:") {
		t.Fatalf("serving on %s", p.endpoint)
	}
}

// serveEnv is the environment of a `taskgate serve` with a token key of its own.
func serveEnv(more ...string) []string {
	return append(append(os.Environ(), "TASKGATE_TOKEN_KEYS="+token.NewKey("test")), more...)
}

func processExit(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestServeWithAuth(t *testing.T) {
	is := bearertest.New(t, "https://auth.example")
	file := authMapping(t, is)
	missing := exec.Command(binary, "serve", "--config", file, "--http", "127.0.0.1:0")
	missing.Env = serveEnv()
	out, err := missing.CombinedOutput()
	if code := processExit(err); code != 1 || string(out) != "taskgate: "+file+":30:35: auth.apiKeys[0].keyEnv: $TASKGATE_TEST_KEY is not set (serving reads the secret from it: export it where taskgate runs)\n" {
		t.Fatalf("without the key's variable: exit %d: %s", code, out)
	}
	p := startServing(t, serveEnv("TASKGATE_TEST_KEY="+ciKey), "serve", "--config", file, "--http", "0.0.0.0:0")
	base := strings.TrimSuffix(strings.Replace(p.endpoint, "[::]", "127.0.0.1", 1), "/mcp")
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: HTTP %d %v", resp.StatusCode, resp.Header)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if resp.StatusCode != 200 || meta["resource"] != "https://mcp.example/mcp" || fmt.Sprint(meta["authorization_servers"]) != "[https://auth.example]" || fmt.Sprint(meta["scopes_supported"]) != "[mcp]" {
			t.Fatalf("GET %s: HTTP %d %v", path, resp.StatusCode, meta)
		}
	}
	for name, token := range map[string]string{"api key": ciKey, "jwt": is.Token(t, "alice", "https://mcp.example/mcp", "mcp", nil)} {
		c := rpctest.Modern(rpctest.HTTP{URL: base + "/mcp", Header: http.Header{"Authorization": {"Bearer " + token}}}, ext)
		if r := c.Decode(t, "tools/call", map[string]any{"name": "quick_echo", "arguments": map[string]any{"text": name}}); !strings.Contains(fmt.Sprint(r["structuredContent"]), name) {
			t.Fatalf("%s: %v", name, r)
		}
	}
	// A JWT without the scope every caller needs: 403 insufficient_scope from go-sdk's middleware.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+is.Token(t, "alice", "https://mcp.example/mcp", "read", nil))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a token without the scope mcp: HTTP %d", resp.StatusCode)
	}
}

func TestValidateChecksAuth(t *testing.T) {
	file := authMapping(t, nil)
	out, err := exec.Command(binary, "validate", file).CombinedOutput()
	if code := processExit(err); code != 1 || string(out) != file+":30:35: auth.apiKeys[0].keyEnv: $TASKGATE_TEST_KEY is not set (serving reads the secret from it: export it where taskgate runs)\n" {
		t.Fatalf("exit %d: %s", code, out)
	}
	src, _ := os.ReadFile(file)
	os.WriteFile(file, append(src, "  oauth: {issuer: https://auth.example, audience: https://mcp.example/mcp, keyFiles: [missing.pem]}\n"...), 0o600)
	validate := exec.Command(binary, "validate", file)
	validate.Env = serveEnv("TASKGATE_TEST_KEY=" + ciKey)
	out, err = validate.CombinedOutput()
	if code := processExit(err); code != 1 || !strings.Contains(string(out), "auth.oauth.keyFiles: open "+filepath.Join(filepath.Dir(file), "missing.pem")+": no such file or directory") {
		t.Fatalf("a missing key file: exit %d: %s", code, out)
	}
}

// TestSlowAndIdleConnectionsClose: a body that trickles in and an idle keep-alive connection are
// both closed by the timeouts.
func TestSlowAndIdleConnectionsClose(t *testing.T) {
	p := startServing(t, serveEnv(), "serve", "--config", "testdata/memory.yaml", "--http", "127.0.0.1:0", "--read-timeout", "1s", "--idle-timeout", "1s")
	addr := strings.TrimSuffix(strings.TrimPrefix(p.endpoint, "http://"), "/mcp")
	closedWithin := func(name string, conn net.Conn, write func()) {
		t.Helper()
		start := time.Now()
		write()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, conn) // returns when the server closes the connection
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: open for %s", name, d)
		}
	}
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	closedWithin("a trickling body", slow, func() {
		fmt.Fprintf(slow, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr)
		go func() {
			for range 10 {
				time.Sleep(500 * time.Millisecond)
				if _, err := slow.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
	})
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	closedWithin("an idle keep-alive connection", idle, func() {
		fmt.Fprintf(idle, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		bufio.NewReader(idle).ReadString('\n')
	})
}

// TestFloodOfLargeBodiesStaysSmall: 256 bodies just under and just over the 4 MiB limit, 64 at
// a time, all refused or answered, leave the process under 200 MB.
func TestFloodOfLargeBodiesStaysSmall(t *testing.T) {
	p := startServing(t, serveEnv(), "serve", "--config", "testdata/memory.yaml", "--http", "127.0.0.1:0")
	under := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 4<<20-100) + `"}}}`
	over := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 4<<20+100) + `"}}}`
	statuses := map[int]int{}
	var mu sync.Mutex
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range 256 {
		body := under
		if i%2 == 1 {
			body = over
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, p.endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	peak := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("statuses %v; peak RSS %d MB", statuses, peak>>20)
	if peak > 200<<20 {
		t.Fatalf("peak RSS %d MB, over 200 MB", peak>>20)
	}
	if statuses[http.StatusRequestEntityTooLarge] == 0 {
		t.Fatalf("no body over the limit was refused: %v", statuses)
	}
}

// peakRSS is the process's high-water mark of resident memory (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestValidateRefusesPrincipalsThatCollide: an API key may not stand for a principal named as an
// OAuth subject's or as the local one, and an allow: naming a principal that no key stands for is
// flagged (an OAuth subject is oauth:SUBJECT).
func TestValidateRefusesPrincipalsThatCollide(t *testing.T) {
	src, err := os.ReadFile("testdata/memory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, "    allow: {principals: [alice, ci-bot, \"oauth:carol\"]}\nauth:\n  apiKeys:\n    - {principal: ci-bot, keyEnv: TASKGATE_TEST_KEY}\n"...)
	file := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(file, src, 0o600)
	cmd := exec.Command(binary, "validate", file)
	cmd.Env = serveEnv("TASKGATE_TEST_KEY=" + ciKey)
	out, err := cmd.CombinedOutput()
	if code := processExit(err); code != 0 || !strings.Contains(string(out), `warning: tool "quick_echo" (`+file+`:20): allow names alice, whom no API key stands for; an OAuth token with the subject alice is the principal oauth:alice`) ||
		strings.Contains(string(out), "ci-bot, whom") || strings.Contains(string(out), "oauth:carol, whom") {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, p := range []string{`"oauth:alice"`, "local"} {
		bad := strings.Replace(string(src), "principal: ci-bot", "principal: "+p, 1)
		os.WriteFile(file, []byte(bad), 0o600)
		out, err := exec.Command(binary, "validate", file).CombinedOutput()
		want := map[string]string{
			`"oauth:alice"`: `:30:19: auth.apiKeys[0].principal: "oauth:alice" is not a valid principal (1 to 128 letters, digits and ._@/-, like ci-bot; no ':', which only OAuth principals (oauth:SUBJECT) have)`,
			"local":         `:30:19: auth.apiKeys[0].principal: "local" is reserved (local is the user who started taskgate (stdio, or HTTP without auth:), who may use every tool; give the key another name)`,
		}[p]
		if code := processExit(err); code != 1 || !strings.Contains(string(out), file+want) {
			t.Errorf("principal %s: exit %d: %s", p, code, out)
		}
	}
}

// TestDetailsOnlyOnOpsWithAuth: with auth:, the MCP listener serves no /metrics (which names every
// tool) and a /readyz that names no engine, both unauthenticated; --ops-http serves them, and so
// does the MCP listener with --metrics-on-mcp-listener.
func TestDetailsOnlyOnOpsWithAuth(t *testing.T) {
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	file := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(file, []byte(`engines:
  late:
    temporal: {address: "`+closed()+`"}
tools:
  - name: wait_and_echo
    description: Waits, then echoes the text.
    engine: late
    workflow: {type: WaitAndEcho, taskQueue: q}
    inputSchema: {type: object}
auth:
  apiKeys:
    - {principal: ci-bot, keyEnv: TASKGATE_TEST_KEY}
`), 0o600)
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	const generic, named = "not ready: an engine is unreachable or does not serve every mapped target; the server's log says which\n",
		"not ready: engine \"late\" does not answer; the server's log says why\n"
	ops := closed()
	p := startServing(t, serveEnv("TASKGATE_TEST_KEY="+ciKey), "serve", "--config", file, "--http", "127.0.0.1:0", "--ops-http", ops)
	base := strings.TrimSuffix(p.endpoint, "/mcp")
	for path, want := range map[string]string{"/metrics": "404 page not found\n", "/healthz": "ok\n", "/readyz": generic} {
		if _, body := get(base + path); body != want {
			t.Errorf("GET %s on the MCP listener: %q, want %q", path, body, want)
		}
	}
	if code, body := get("http://" + ops + "/metrics"); code != 200 || !strings.Contains(body, "# HELP taskgate_") {
		t.Errorf("GET /metrics on --ops-http: %d %.200s", code, body)
	}
	if _, body := get("http://" + ops + "/readyz"); body != named {
		t.Errorf("GET /readyz on --ops-http: %q, want %q", body, named)
	}
	p = startServing(t, serveEnv("TASKGATE_TEST_KEY="+ciKey), "serve", "--config", file, "--http", "127.0.0.1:0", "--metrics-on-mcp-listener")
	base = strings.TrimSuffix(p.endpoint, "/mcp")
	if code, body := get(base + "/metrics"); code != 200 || !strings.Contains(body, "# HELP taskgate_") {
		t.Errorf("GET /metrics with --metrics-on-mcp-listener: %d %.200s", code, body)
	}
	if _, body := get(base + "/readyz"); body != named {
		t.Errorf("GET /readyz with --metrics-on-mcp-listener: %q, want %q", body, named)
	}
}
