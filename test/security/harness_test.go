package security

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskgate/taskgate/tasks/token"
)

const (
	aliceKey = "probe-alice-0123456789abcdef"
	bobKey   = "probe-bob-0123456789abcdef"
	audience = "http://127.0.0.1/mcp"
)

// binary is the taskgate build to probe: PROBE_TASKGATE, or this checkout's, built once.
func binary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("PROBE_TASKGATE"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "taskgate")
	if out, err := exec.Command("go", "build", "-tags", "dev", "-o", bin, "../../cmd/taskgate").CombinedOutput(); err != nil {
		t.Fatalf("building taskgate: %v\n%s", err, out)
	}
	return bin
}

// supports reports whether the build has a flag of dev (an older build lacks the newer ones).
func supports(bin, flag string) bool {
	out, _ := exec.Command(bin, "dev", "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--"+flag+" "))
}

// dev is one `taskgate dev` process.
type dev struct {
	url  string // the MCP endpoint
	base string // the listener, for /metrics and the like
}

var servingLine = regexp.MustCompile(`serving \d+ tools on (http://\S+)`)

// startDev runs `taskgate dev --config dir --http` on a free loopback port with flags, until the
// test ends.
func startDev(t *testing.T, bin, dir string, flags ...string) *dev {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"dev", "--config", dir, "--http", addr}, flags...)...)
	cmd.Env = append(os.Environ(), "PROBE_KEY_ALICE="+aliceKey, "PROBE_KEY_BOB="+bobKey, "TASKGATE_TOKEN_KEYS="+token.NewKey("probe"))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	found := make(chan string, 1)
	var log bytes.Buffer
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			fmt.Fprintln(&log, sc.Text())
			mu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url := <-found:
		return &dev{url: url, base: strings.TrimSuffix(url, "/mcp")}
	case <-time.After(90 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("taskgate dev %v did not start serving:\n%s", flags, log.String())
	}
	return nil
}

// answer is one HTTP answer: its status, body, and the JSON-RPC message in it (a plain JSON body,
// or the first event of a stream).
type answer struct {
	status int
	header http.Header
	body   string
	msg    struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
}

func (a answer) String() string {
	switch {
	case a.msg.Error != nil:
		msg := a.msg.Error.Message
		if len(msg) > 140 {
			msg = msg[:140] + "..."
		}
		return fmt.Sprintf("%d, error %d %q", a.status, a.msg.Error.Code, msg)
	case a.msg.Result != nil:
		return fmt.Sprintf("%d, a result", a.status)
	}
	return fmt.Sprintf("%d %.140s", a.status, strings.Join(strings.Fields(a.body), " "))
}

// code is the JSON-RPC error code, 0 for a result.
func (a answer) code() int {
	if a.msg.Error == nil {
		return 0
	}
	return a.msg.Error.Code
}

// served reports whether the request was answered with a result.
func (a answer) served() bool { return a.status == http.StatusOK && a.msg.Result != nil }

// post sends one body to url as a 2025-11-25 client with the bearer token (none when empty) and
// the headers given as name, value pairs.
func post(ctx context.Context, url, bearer, body string, headers ...string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	data := raw
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 {
		data = raw[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	json.Unmarshal(data, &a.msg)
	return a, err
}

// must is post that fails the test when no answer comes.
func must(t *testing.T, url, bearer, body string, headers ...string) answer {
	t.Helper()
	a, err := post(context.Background(), url, bearer, body, headers...)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	return a
}

// rpc is a JSON-RPC request with id 1.
func rpc(method string, params any) string {
	p, _ := json.Marshal(params)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, p)
}

// startTask starts tool as a 2025-11-25 task for bearer and returns its id.
func startTask(t *testing.T, url, bearer, tool string, args map[string]any) string {
	t.Helper()
	a := must(t, url, bearer, rpc("tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{}}))
	var r struct{ Task struct{ TaskID string } }
	if json.Unmarshal(a.msg.Result, &r); r.Task.TaskID == "" {
		t.Fatalf("starting %s: %s", tool, a)
	}
	return r.Task.TaskID
}

// trickle opens a request to url announcing a body of size bytes and sends a byte of it every
// 100 ms until ctx ends; the answer, if one comes, goes to answers.
func trickle(ctx context.Context, t *testing.T, url, bearer string, size int, answers chan<- string) {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	context.AfterFunc(ctx, func() { conn.Close() })
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", host, bearer, size)
	go func() {
		for ctx.Err() == nil {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	go func() {
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			answers <- fmt.Sprintf("%d", resp.StatusCode)
		}
	}()
}

// modernTask starts tool as a 2026-07-28 task of bearer's and waits until it asks; it returns the
// task id.
func modernTask(t *testing.T, d *dev, bearer, tool string, args map[string]any) string {
	t.Helper()
	meta, h := modern("tools/call", tool)
	created := must(t, d.url, bearer, rpc("tools/call", map[string]any{"name": tool, "arguments": args, "_meta": meta}), h...)
	var task struct{ TaskID string }
	if json.Unmarshal(created.msg.Result, &task); task.TaskID == "" {
		t.Fatalf("starting %s: %s", tool, created)
	}
	if status := awaitTask(t, d, bearer, task.TaskID, "input_required"); status != "input_required" {
		t.Fatalf("%s: the task is %s, want input_required", tool, status)
	}
	return task.TaskID
}

// awaitTask polls bearer's 2026-07-28 task for up to 30 s until its status is want, and returns
// the last status seen (the last answer, when it had none).
func awaitTask(t *testing.T, d *dev, bearer, id, want string) string {
	t.Helper()
	meta, h := modern("tasks/get", id)
	seen := ""
	for deadline := time.Now().Add(30 * time.Second); seen != want && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		a := must(t, d.url, bearer, rpc("tasks/get", map[string]any{"taskId": id, "_meta": meta}), h...)
		var status struct{ Status string }
		if json.Unmarshal(a.msg.Result, &status); status.Status != "" {
			seen = status.Status
		} else {
			seen = a.String()
		}
	}
	return seen
}

// answerTask answers question key of a 2026-07-28 task with content, as bearer (tasks/update).
func answerTask(t *testing.T, d *dev, bearer, id, key string, content map[string]any) answer {
	t.Helper()
	meta, h := modern("tasks/update", id)
	return must(t, d.url, bearer, rpc("tasks/update", map[string]any{"taskId": id, "_meta": meta,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": content}}}), h...)
}

// writeTools writes a mapping into a new folder: the local Temporal server and the engine blocks
// more (YAML under engines:), the probes' two API keys and, when jwks is set, the OAuth issuer
// whose keys are there, and tools (YAML under tools:).
func writeTools(t *testing.T, more, jwks, tools string) string {
	t.Helper()
	src := "engines:\n  local-temporal:\n    temporal: {}\n" + more +
		"auth:\n  apiKeys:\n    - {principal: alice, keyEnv: PROBE_KEY_ALICE}\n    - {principal: bob, keyEnv: PROBE_KEY_BOB}\n"
	if jwks != "" {
		src += fmt.Sprintf("  oauth:\n    issuer: %s\n    audience: %s\n    jwksUrl: %s\n", issuerName, audience, jwks)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tools.yaml"), []byte(src+"tools:\n"+tools), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
