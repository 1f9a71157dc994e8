package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/mcpserver"
)

// TestRateLimitsAnswerWhenToRetry: a principal over its rate gets HTTP 429 with Retry-After and a
// JSON-RPC error with data.retryAfterMs, never a silent drop; on stdio the same error.
func TestRateLimitsAnswerWhenToRetry(t *testing.T) {
	e := newEnvConfig(t, func(c *mcpserver.Config) { c.Limits = mcpserver.Limits{CallsPerSecond: 1, PollsPerSecond: 1} })
	poll := `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	var limited string
	for i := 0; i < 5 && limited == ""; i++ {
		resp, err := http.DefaultClient.Do(modernRequest(context.Background(), e.url, poll, "tasks/get", ""))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Code int `json:"code"`
				Data struct {
					RetryAfterMs int64 `json:"retryAfterMs"`
				} `json:"data"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			if resp.Header.Get("Retry-After") == "" || body.Error.Code != -32603 || body.Error.Data.RetryAfterMs <= 0 || body.Error.Data.RetryAfterMs > 1000 {
				t.Fatalf("429 without when to retry: %v %+v", resp.Header, body)
			}
			limited = body.Error.Message
		}
	}
	if !strings.HasPrefix(limited, "Rate limit exceeded for tasks/get: retry in ") {
		t.Fatalf("5 polls at once were not limited at 1 per second: %q", limited)
	}

	c := newLineClient(t, e.srv)
	var answers []string
	for i := 0; i < 5; i++ {
		m := c.roundTrip(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"x"}}`, i+1), fmt.Sprint(i+1))
		answers = append(answers, string(m["error"]))
	}
	if !strings.Contains(strings.Join(answers, "\n"), `"retryAfterMs"`) {
		t.Fatalf("stdio polls were not limited: %v", answers)
	}
}

// TestRequestsInFlightAreBounded: past the cap, requests get 503 with Retry-After at once, and
// bodies that do not fit the memory budget likewise.
func TestRequestsInFlightAreBounded(t *testing.T) {
	e := newEnvConfig(t, func(c *mcpserver.Config) { c.Limits.MaxInFlight = 2; c.Limits.BodyBudget = 1 << 20 })
	// Two waiting calls hold both places.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo_optional","arguments":{"seconds":30,"text":"hold"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, i)
			if resp, err := http.DefaultClient.Do(modernRequest(ctx, e.url, body, "tools/call", "echo_optional")); err == nil {
				resp.Body.Close()
			}
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); e.count.starts.Load() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two holding calls did not start")
		}
	}
	status, body := post(t, e.url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "", "ping")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "too many requests in flight") {
		t.Fatalf("a third request: HTTP %d %s", status, body)
	}
	stop()
	wg.Wait()
	// The places free once the abandoned calls have cancelled their executions.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if status, _ := post(t, e.url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "", "ping"); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the places were not freed")
		}
	}

	// A body larger than the whole budget never fits.
	big := `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}}`
	status, body = post(t, e.url, big, "", "ping")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "too many request bodies in memory") {
		t.Fatalf("a body over the budget: HTTP %d %.200s", status, body)
	}
	// Over the per-message limit: 413, whatever the budget.
	huge := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}}`
	status, body = post(t, e.url, huge, "", "ping")
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "longer than the limit of 4194304 bytes") {
		t.Fatalf("a body over 4 MiB: HTTP %d %.200s", status, body)
	}
}

// TestAuditLines: one line per start and cancel, naming the tool and the execution but never the
// task id, which is a bearer handle.
func TestAuditLines(t *testing.T) {
	audit := &panicLog{}
	e := newEnvConfig(t, func(c *mcpserver.Config) {
		c.Audit = slog.New(slog.NewJSONHandler(audit, nil))
	})
	c := e.client(ext)
	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 30, "text": "audited"})["taskId"].(string)
	c.Decode(t, "tasks/cancel", map[string]any{"taskId": id})
	call(t, c, "wait_and_echo", map[string]any{"seconds": "not a number"})
	ref := e.ref(t, id).String()
	var lines []map[string]string
	for _, l := range strings.Split(strings.TrimSpace(audit.buf.String()), "\n") {
		var m map[string]string
		json.Unmarshal([]byte(l), &m)
		lines = append(lines, m)
		if strings.Contains(l, id) {
			t.Fatalf("the task id is in the audit log: %s", l)
		}
	}
	want := []string{"start wait_and_echo " + ref + " ok", "cancel wait_and_echo " + ref + " ok", "start wait_and_echo  refused: invalid arguments"}
	if len(lines) != len(want) {
		t.Fatalf("audit lines: %v", lines)
	}
	for i, w := range want {
		if got := strings.Join([]string{lines[i]["event"], lines[i]["tool"], lines[i]["execution"], lines[i]["outcome"]}, " "); got != w || lines[i]["msg"] != "audit" {
			t.Errorf("audit line %d: %q, want %q", i, got, w)
		}
	}
}

// TestUnknownClientTokensCostOnce: a token that opens as no task id is looked up once as a client
// token; asking again within the window costs no engine call.
func TestUnknownClientTokensCostOnce(t *testing.T) {
	e := newEnv(t, nil)
	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	probe := "probe-" + uuid.NewString()
	for i := range 3 {
		before := e.count.reads.Load()
		_, rerr := sep.Call(t, "tools/async/status", map[string]any{"token": probe})
		wantError(t, "an unknown client token", rerr, -32602, "Failed to retrieve operation: Operation not found")
		reads := e.count.reads.Load() - before
		if (i == 0 && reads == 0) || (i > 0 && reads != 0) {
			t.Fatalf("lookup %d of an unknown token made %d engine reads", i+1, reads)
		}
	}
	// Starting an operation with the token makes it known at once.
	sep.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "now known"}, "operation": map[string]any{"token": probe}})
	pollOperation(t, sep, probe, "completed")
}
