package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/bearer"
	"github.com/taskgate/taskgate/tasks"
)

// TestRateLimitsAnswerWhenToRetry: a principal over its rate gets HTTP 429 with Retry-After and a
// JSON-RPC error with data.retryAfterMs, never a silent drop; on stdio the same error.
func TestRateLimitsAnswerWhenToRetry(t *testing.T) {
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.Limits = mcpserver.Limits{CallsPerSecond: 1, PollsPerSecond: 1}
	})
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
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) { c.Limits.MaxInFlight = 2; c.Limits.BodyBudget = 1 << 20 })
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
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		tc.Audit = slog.New(slog.NewJSONHandler(audit, nil))
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

// TestFairShare: bob tries to take everything (tasks/result calls parked on his running task,
// bodies trickled in), and holds no more than his share of the requests in flight and of the
// body bytes; alice's polls meanwhile are answered within 100 ms of their usual latency.
func TestFairShare(t *testing.T) {
	verify, err := bearer.NewVerifier(bearer.Config{APIKeys: []bearer.APIKey{{Principal: "alice", Key: aliceKey}, {Principal: "bob", Key: bobKey}}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.HTTPAuth = &mcpserver.HTTPAuth{Verify: verify}
		c.Limits = mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1, MaxInFlight: 8, MaxInFlightPerPrincipal: 4,
			BodyBudget: 8 << 20, BodyBudgetPerPrincipal: 4 << 20, MaxWait: time.Minute}
	})
	alice := e.as(aliceKey, ext)
	hers := call(t, alice, "wait_and_echo", map[string]any{"seconds": 120, "text": "alice's"})["taskId"].(string)
	defer alice.Call(t, "tasks/cancel", map[string]any{"taskId": hers})
	polls := func() (latencies []time.Duration) {
		for range 20 {
			start := time.Now()
			if got := alice.Decode(t, "tasks/get", map[string]any{"taskId": hers}); got["status"] != "working" {
				t.Fatalf("alice's poll: %v", got)
			}
			latencies = append(latencies, time.Since(start))
			time.Sleep(20 * time.Millisecond)
		}
		slices.Sort(latencies)
		return latencies
	}
	usual := polls()

	bob := rpctest.Legacy(rpctest.HTTP{URL: e.url, Header: http.Header{"Authorization": {"Bearer " + bobKey}}})
	created := bob.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 120, "text": "bob's"}, "task": map[string]any{}})
	his := created["task"].(map[string]any)["taskId"].(string)
	defer bob.Call(t, "tasks/cancel", map[string]any{"taskId": his})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addr := strings.TrimPrefix(e.url, "http://")
	uploads := make(chan string, 3)
	for range 3 { // 1.5 MiB announced each, trickled: two fit in his share of the bytes
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", addr, bobKey, 3<<19)
		go func() {
			for ctx.Err() == nil && conn.SetWriteDeadline(time.Now().Add(time.Second)) == nil {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		go func() {
			if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
				raw, _ := io.ReadAll(resp.Body)
				uploads <- fmt.Sprintf("%d %s", resp.StatusCode, raw)
			}
		}()
	}
	select {
	case refused := <-uploads:
		if !strings.HasPrefix(refused, "429 ") || !strings.Contains(refused, "Too many requests of bob at once: it holds its share of the request body bytes in memory (4194304 at once)") {
			t.Fatalf("one of bob's uploads: %s", refused)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("none of bob's three uploads was refused")
	}
	var parked sync.WaitGroup
	refused := make(chan string, 8)
	for i := range 6 {
		parked.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, i, his)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(body))
			req.Header = http.Header{"Authorization": {"Bearer " + bobKey}, "Content-Type": {"application/json"},
				"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused <- fmt.Sprintf("%d %s", resp.StatusCode, raw)
		})
	}
	// bob's share is held once his requests beyond it are refused.
	var answers []string
	for deadline := time.After(10 * time.Second); len(answers) < 4; {
		select {
		case a := <-refused:
			answers = append(answers, a)
		case <-deadline:
			t.Fatalf("bob's requests beyond his share were not refused: %v", answers)
		}
	}
	for _, a := range answers {
		if !strings.HasPrefix(a, "429 ") || !strings.Contains(a, "Too many requests of bob at once: it holds its share of the requests in flight (4 at once); retry once one of them is answered") {
			t.Errorf("bob beyond his share: %s", a)
		}
	}
	status, body := postAs(t, e.url, bobKey, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if status != http.StatusTooManyRequests {
		t.Errorf("bob's ping while he holds his share: %d %s", status, body)
	}

	during := polls()
	t.Logf("alice's polls: usual median %s, max %s; while bob holds his share: median %s, max %s",
		usual[len(usual)/2], usual[len(usual)-1], during[len(during)/2], during[len(during)-1])
	if during[len(during)/2] > usual[len(usual)/2]+100*time.Millisecond {
		t.Fatalf("alice's polls took %s (median) while bob held his share, %s usually", during[len(during)/2], usual[len(usual)/2])
	}
	if tools := toolsByName(t, alice); tools["wait_and_echo"] == nil {
		t.Fatalf("alice's tools/list: %v", tools)
	}
	stop()
	parked.Wait()
}

// TestTrickledBodiesHoldOnlyTheirShare: bodies of unknown length take their principal's share of
// the budget as they arrive; one that outgrows it is refused with 429, and the others' are read.
func TestTrickledBodiesHoldOnlyTheirShare(t *testing.T) {
	verify, _ := bearer.NewVerifier(bearer.Config{APIKeys: []bearer.APIKey{{Principal: "alice", Key: aliceKey}, {Principal: "bob", Key: bobKey}}})
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.HTTPAuth = &mcpserver.HTTPAuth{Verify: verify}
		c.Limits = mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1, BodyBudget: 2 << 20, BodyBudgetPerPrincipal: 1 << 20}
	})
	pad := strings.Repeat("x", 3<<19) // 1.5 MiB: more than a share, less than the whole
	chunked := func(key string) (int, string) {
		pr, pw := io.Pipe()
		go func() {
			io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"`+pad+`"}}}`)
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, e.url, pr) // no Content-Length: chunked
		req.Header = http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, body := chunked(bobKey); status != http.StatusTooManyRequests || !strings.Contains(body, "it holds its share of the request body bytes in memory (1048576 at once)") {
		t.Fatalf("a chunked body over the share: %d %.300s", status, body)
	}
	if status, body := postAs(t, e.url, aliceKey, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusOK {
		t.Fatalf("alice after bob's refused body: %d %s", status, body)
	}
}

// TestWaitsAreBounded: over HTTP a 2025-11-25 tasks/result answers, once it has waited --max-wait,
// with the task's status and when to poll; a call that waits for its result is cut there too.
func TestWaitsAreBounded(t *testing.T) {
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) { c.Limits.MaxWait = time.Second })
	legacy := rpctest.Legacy(rpctest.HTTP{URL: e.url})
	created := legacy.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 30, "text": "later"}, "task": map[string]any{}})
	id := created["task"].(map[string]any)["taskId"].(string)
	defer legacy.Call(t, "tasks/cancel", map[string]any{"taskId": id})
	start := time.Now()
	_, rerr := legacy.Call(t, "tasks/result", map[string]any{"taskId": id})
	took := time.Since(start)
	wantError(t, "tasks/result of a running task", rerr, -32603,
		"Task still working after 1s, the longest this server holds a request: poll tasks/get every 1000 ms, and call tasks/result again once it has ended")
	var data struct {
		Retryable    bool
		RetryAfterMs int64
		Task         map[string]any
		Meta         map[string]map[string]any `json:"_meta"`
	}
	mustUnmarshal(t, rerr.Data, &data)
	if !data.Retryable || data.RetryAfterMs != 1000 || data.Task["taskId"] != id || data.Task["status"] != "working" ||
		data.Meta["io.modelcontextprotocol/related-task"]["taskId"] != id || took < time.Second || took > 5*time.Second {
		t.Fatalf("after %s: %s", took, rerr.Data)
	}
	if got := legacy.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Fatalf("the task after tasks/result gave up waiting: %v", got)
	}

	waiting := e.client() // no tasks extension: echo_optional waits for its result
	start = time.Now()
	r := call(t, waiting, "echo_optional", map[string]any{"seconds": 30, "text": "later"})
	if took := time.Since(start); r["isError"] != true || firstText(t, r) != "echo_optional did not finish within 1s, the longest this server holds a request; the execution goes on in the engine" || took > 5*time.Second {
		t.Fatalf("a waiting call after %s: %v", took, r)
	}
}

// postAs posts body with key as its bearer token, as a 2025-11-25 client.
func postAs(t *testing.T, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header = http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestEngineCallsAreCharged: a client token that names no operation costs one engine read per
// tool that may run as a task; its principal's rate pays for every one, so its next poll waits.
func TestEngineCallsAreCharged(t *testing.T) {
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.Limits = mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: 1}
	})
	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	before := e.count.reads.Load()
	_, rerr := sep.Call(t, "tools/async/status", map[string]any{"token": "probe-" + uuid.NewString()})
	wantError(t, "an unknown client token", rerr, -32602, "Failed to retrieve operation: Operation not found")
	n := e.count.reads.Load() - before
	if n < 3 {
		t.Fatalf("the lookup made %d engine reads; the test mapping must have at least 3 task tools", n)
	}
	poll := `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"x","_meta":` + modernMeta + `}}`
	status, body := post(t, e.url, poll, "2026-07-28", "tasks/get")
	var answer struct {
		Error struct{ Data struct{ RetryAfterMs int64 } }
	}
	json.Unmarshal([]byte(strings.TrimPrefix(body, "event: message\ndata: ")), &answer)
	if status != http.StatusTooManyRequests || answer.Error.Data.RetryAfterMs < (n-2)*1000 {
		t.Fatalf("the poll after a lookup of %d engine reads at 1 per second: HTTP %d %s", n, status, body)
	}
	t.Logf("a lookup of %d engine reads; the next poll may come in %d ms", n, answer.Error.Data.RetryAfterMs)
}
