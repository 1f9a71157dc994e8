package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
)

// The methods taskgate serves, the SDK's own, and some that exist nowhere.
var sweepMethods = []string{
	"initialize", "notifications/initialized", "ping", "server/discover",
	"tools/list", "tools/call", "tasks/get", "tasks/cancel", "tasks/update", "tasks/result", "tasks/list",
	"tools/async/status", "tools/async/result",
	"prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list",
	"resources/subscribe", "completion/complete", "logging/setLevel", "subscriptions/listen",
	"notifications/cancelled", "notifications/progress", "notifications/roots/list_changed",
	"no/such/method", "",
}

// sweepParams are params of every wrong shape: absent, null, not an object, and objects whose
// _meta fields and own fields have the wrong types.
func sweepParams(method string) []string {
	ps := []string{"", "null", "[]", `"x"`, "42", "{}", `{"_meta":"x"}`, `{"_meta":42}`, `{"_meta":[]}`, `{"_meta":null}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":42}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"x"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":"x","experimental":[]}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":5}}}}`,
		`{"_meta":{"progressToken":{"a":1}}}`, `{"_meta":{"progressToken":[1]}}`,
		`{"_meta":{"taskgate/conn":42,"taskgate/client":"x","taskgate/task":[],"taskgate/operation":7}}`,
		`{"_meta":{"io.modelcontextprotocol/related-task":"x"}}`,
	}
	switch method {
	case "tools/call":
		ps = append(ps, `{"name":42}`, `{"name":"wait_and_echo","arguments":"x"}`, `{"name":"wait_and_echo","arguments":{"seconds":"x"}}`,
			`{"name":"wait_and_echo","task":"x"}`, `{"name":"wait_and_echo","task":{"ttl":"x"}}`, `{"name":"wait_and_echo","operation":42}`,
			`{"name":"wait_and_echo","operation":{"token":5,"keepAlive":"x"}}`, `{"name":"no_such_tool"}`, `{"name":"task_status","arguments":{"handle":7}}`,
			`{"name":"quick_echo","arguments":[]}`,
			`{"name":"task_answer","arguments":{"handle":"x","answers":{"k":"y"},"decline":"z"}}`, `{"name":"task_answer","arguments":{"handle":"x"}}`)
	case "tasks/get", "tasks/cancel", "tasks/update", "tasks/result":
		ps = append(ps, `{"taskId":42}`, `{"taskId":{}}`, `{"taskId":"x"}`, `{"taskId":"x","inputResponses":"y"}`, `{"taskId":null}`,
			`{"taskId":"x","inputResponses":{"k":"y"}}`, `{"taskId":"x","inputResponses":{"k":{"action":5,"content":[]}}}`, `{"taskId":"x","inputResponses":null}`)
	case "tools/async/status", "tools/async/result":
		ps = append(ps, `{"token":42}`, `{"token":""}`, `{"token":"x"}`, `{"token":"`+strings.Repeat("a", 300)+`"}`)
	case "initialize":
		ps = append(ps, `{"protocolVersion":42,"capabilities":"x"}`, `{"protocolVersion":"2025-11-25","capabilities":{"tasks":"x","experimental":[]}}`)
	case "notifications/cancelled":
		ps = append(ps, `{"requestId":{}}`, `{"requestId":"x","reason":5}`)
	}
	return ps
}

// sweep lists every request of the sweep as one JSON-RPC line, each with its own id, plus the
// shapes that are not one request at all.
func sweep() []string {
	var lines []string
	id := 1000
	for _, m := range sweepMethods {
		for _, p := range sweepParams(m) {
			id++
			params := ""
			if p != "" {
				params = `,"params":` + p
			}
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q%s}`, id, m, params))
			if strings.HasPrefix(m, "notifications/") {
				lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q%s}`, m, params))
			}
		}
	}
	return append(lines,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		`[]`, `{`, `"just a string"`, `42`, `{}`, `{"jsonrpc":"1.0","id":3,"method":"ping"}`, `{"id":4}`,
		`{"jsonrpc":"2.0","id":{"nested":true},"method":"ping"}`, `{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":"x"}}`)
}

// panicLog collects what the server logs, to show that nothing panicked.
type panicLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *panicLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *panicLog) check(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(l.buf.String(), "panic") {
		t.Fatalf("the server panicked:\n%s", l.buf.String())
	}
}

// TestNoRequestStopsTheServer sends every method with params of every wrong shape, and messages
// that are no request at all, on stdio and over HTTP, as 2025-11-25 and as 2026-07-28 clients:
// each gets an answer, nothing panics, nothing starts, and the server answers afterwards.
func TestNoRequestStopsTheServer(t *testing.T) {
	logs := &panicLog{}
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		tc.Logger = c.Logger
	})
	lines := sweep()

	t.Run("http", func(t *testing.T) {
		for _, version := range []string{"", "2025-11-25", "2026-07-28"} {
			for _, line := range lines {
				var env struct {
					Method string `json:"method"`
				}
				json.Unmarshal([]byte(line), &env)
				status, body := post(t, e.url, line, version, env.Method)
				if status >= 500 {
					t.Errorf("HTTP %d for %s (version %q): %s", status, line, version, body)
				}
			}
			if status, body := post(t, e.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28", "tools/list"); status != 200 || !strings.Contains(body, "wait_and_echo") {
				t.Fatalf("after the sweep (version %q): HTTP %d %s", version, status, body)
			}
		}
	})

	for _, session := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("stdio-"+session, func(t *testing.T) {
			c := newLineClient(t, e.srv)
			if session == "2025-11-25" {
				c.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sweep","version":"1"}}}`, "1")
				c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for i, line := range lines {
				c.send(t, line)
				if id := expectedID(line); id != "" {
					c.await(t, id, line)
				}
				// The connection still answers.
				ping := fmt.Sprintf("%d", 900000+i)
				c.roundTrip(t, `{"jsonrpc":"2.0","id":`+ping+`,"method":"ping"}`, ping)
			}
		})
	}
	logs.check(t)
	if n := e.count.starts.Load(); n != 0 {
		t.Fatalf("the sweep started %d executions", n)
	}
}

// expectedID is the id under which a line must be answered: a request's own id, null for what is
// not a message at all (or has an id of the wrong type); "" for notifications and responses.
func expectedID(line string) string {
	var msg map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &msg) != nil {
		return "null"
	}
	_, isCall := msg["method"]
	_, isResult := msg["result"]
	_, isError := msg["error"]
	id, hasID := msg["id"]
	switch {
	case isResult || isError:
		return ""
	case isCall && !hasID:
		return ""
	case !hasID || (id[0] != '"' && (id[0] < '0' || id[0] > '9')):
		return "null"
	}
	return string(id)
}

func post(t *testing.T, url, body, version, method string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
		req.Header.Set("Mcp-Method", method)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// lineClient speaks to ServeIO one line at a time, as a stdio client does.
type lineClient struct {
	w       io.Writer
	answers chan map[string]json.RawMessage
}

func newLineClient(t testing.TB, srv *mcpserver.Server) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeIO(ctx, inR, outW) }()
	c := &lineClient{w: inW, answers: make(chan map[string]json.RawMessage, 100)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.answers <- m
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("ServeIO did not return after its input closed")
		}
	})
	return c
}

func (c *lineClient) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		t.Fatalf("the server stopped reading: %v (after %s)", err, line)
	}
}

// await waits for the answer with this id (JSON text), skipping notifications.
func (c *lineClient) await(t testing.TB, id, after string) map[string]json.RawMessage {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-c.answers:
			if got, ok := m["id"]; ok && string(got) == id {
				return m
			}
			// Notifications, and answers to lines that need none (a malformed response), pass.
		case <-timeout:
			t.Fatalf("no answer with id %s (after %s): the server stopped", id, after)
		}
	}
}

func (c *lineClient) roundTrip(t testing.TB, line, id string) map[string]json.RawMessage {
	t.Helper()
	c.send(t, line)
	return c.await(t, id, line)
}
