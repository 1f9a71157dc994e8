package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The balancer sends each request to the next replica in turn, keeps a listen's stream on the
// replica it opened on, and tells the polls that reached a replica no request naming their task
// had reached (a start it answered, a listen, a poll) from the others.
func TestBalancer(t *testing.T) {
	var endpoints []string
	for i := range 3 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			method := r.Header.Get("Mcp-Method")
			switch {
			case r.URL.Path != "/mcp":
				http.Error(w, "not the MCP endpoint: "+r.URL.Path, http.StatusNotFound)
			case method == "subscriptions/listen":
				w.Header().Set("Content-Type", "text/event-stream")
				for n := range 3 { // the stream's events, all from this replica
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks\",\"params\":{\"taskId\":\"r%d-%d\",\"status\":\"completed\"}}\n\n", i, n)
					w.(http.Flusher).Flush()
					time.Sleep(20 * time.Millisecond)
				}
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", idOf(body))
			case method == "tools/call":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"task","taskId":"t-%d","status":"working"}}`, idOf(body), i)
			default:
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"replica":%d}}`, idOf(body), i)
			}
		}))
		t.Cleanup(srv.Close)
		endpoints = append(endpoints, srv.URL+"/mcp")
	}
	lb, err := newBalancer(endpoints)
	if err != nil {
		t.Fatal(err)
	}
	lb.record(true)
	c := lb.modern()
	ctx := t.Context()
	// A start on replica 0 answers t-0; the listen goes to replica 1 for t-x; then polls go
	// 2, 0, 1, 2, 0, 1.
	if _, rerr, err := c.Call(ctx, "tools/call", map[string]any{"name": "echo"}); err != nil || rerr != nil {
		t.Fatalf("start: %v %v", rerr, err)
	}
	var heard []string
	if _, rerr, err := c.Listen(ctx, map[string]any{"taskIds": []string{"t-x"}}, func(method string, params json.RawMessage) {
		heard = append(heard, string(params))
	}); err != nil || rerr != nil {
		t.Fatalf("listen: %v %v", rerr, err)
	}
	if len(heard) != 3 || !strings.Contains(heard[0], `"r1-0"`) || !strings.Contains(heard[2], `"r1-2"`) {
		t.Errorf("the listen's stream: %q, want replica 1's three events", heard)
	}
	var replicas []string
	for _, task := range []string{"t-0", "t-0", "t-0", "t-x", "t-x", "t-x"} {
		res, rerr, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": task})
		if err != nil || rerr != nil {
			t.Fatalf("poll: %v %v", rerr, err)
		}
		replicas = append(replicas, string(res))
	}
	want := `{"replica":2} {"replica":0} {"replica":1} {"replica":2} {"replica":0} {"replica":1}`
	if got := strings.Join(replicas, " "); got != want {
		t.Errorf("the polls' replicas: %s, want %s", got, want)
	}
	// Unread: t-0 on 2 and on 1 (0 started it), t-x on 2 and on 0 (1 listens for it).
	if n := len(lb.unreadPolls()); n != 4 {
		t.Errorf("%d polls of unread tasks, want 4", n)
	}
	for i, want := range []int64{3, 3, 2} {
		if got := lb.served[i].Load(); got != want {
			t.Errorf("replica %d served %d requests, want %d", i, got, want)
		}
	}
}

// idOf is a JSON-RPC request's id, as it came.
func idOf(body []byte) string {
	_, after, _ := strings.Cut(string(body), `"id":`)
	end := strings.IndexAny(after, ",}")
	return after[:end]
}

// The mapping of a run holds a block for each of its engines (the event source in the Step
// Functions block when there is one) and a tool per target, and parses.
func TestPlatformMapping(t *testing.T) {
	b := &bench{}
	arns := []string{"arn:aws:states:us-east-1:123456789012:stateMachine:a", "arn:aws:states:us-east-1:123456789012:stateMachine:b"}
	src := b.platformMapping(platformSpec{targets: map[string]int{"sfn": 2, "temporal": 2, "restate": 2}, events: "arn:aws:sns:us-east-1:123456789012:t"}, arns)
	for _, want := range []string{"  aws:\n", "events: {topicArn: \"arn:aws:sns:us-east-1:123456789012:t\"", "stateMachine: " + arns[1],
		"workflow: {type: BenchPlatform01, taskQueue: taskgate-bench-worker}", "invoke: {service: BenchPlatform, handler: run01}"} {
		if !strings.Contains(src, want) {
			t.Errorf("the mapping lacks %q:\n%s", want, src)
		}
	}
	src = b.platformMapping(platformSpec{targets: map[string]int{"temporal": 3}}, nil)
	if strings.Contains(src, "aws:") || strings.Contains(src, "restate:") || strings.Count(src, "- name: platform_temporal_") != 3 {
		t.Errorf("a Temporal run's mapping:\n%s", src)
	}
}

// TestFleetPlatformShort runs the fleet-platform figure in its smoke mode against the real engines
// and checks that it produced every row, as finite numbers (as TestShort checks the others').
func TestFleetPlatformShort(t *testing.T) {
	needEngines(t)
	jsonFile := filepath.Join(t.TempDir(), "results.json")
	opts, rows := runShort(t, "-only", "fleet-platform", "-json", jsonFile)
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Name] = r
		if msg := checkRow(r); msg != "" {
			t.Errorf("%s: %s (%+v)", r.Name, msg, r)
		}
	}
	for _, name := range platformRowNames(opts.platform.scaleTargets) {
		if _, ok := byName[name]; !ok {
			t.Errorf("no row %q", name)
		}
	}
}

// platformRowNames are the rows the fleet-platform figure must give.
func platformRowNames(scaleTargets []int) []string {
	names := []string{"staleness p95 (s)", "end to notified p95 (s)", "sfn (no events) staleness p95 (s)", "sfn (no events) end to notified p95 (s)",
		"budget (reads/s)", "client errors", "ends not notified", "throttled end to notified p95 (s)", "polls of unread tasks p99 (s)"}
	for _, engine := range fleetEngines {
		names = append(names, engine+" staleness p95 (s)", engine+" end to notified p95 (s)",
			engine+" engine reads per second, max over 10 s windows", "throttled "+engine+" end to notified p95 (s)")
	}
	for _, n := range scaleTargets {
		names = append(names, fmt.Sprintf("temporal reads per second at %d targets", n))
	}
	for i, n := range names {
		names[i] = "fleet-platform: " + n
	}
	return names
}

// Errors of one kind count together, whatever their ids and retry times.
func TestErrorText(t *testing.T) {
	a := fmt.Errorf(`tasks/get: error -32603: Failed to retrieve the task: the engine is being read as fast as taskgate may; the task is unchanged, retry in 1m0.1s (error id 65a2b424) (data: {"errorId":"65a2b424","retryAfterMs":60066,"retryable":true})`)
	b := fmt.Errorf(`tasks/get: error -32603: Failed to retrieve the task: the engine is being read as fast as taskgate may; the task is unchanged, retry in 738ms (error id f63421d9) (data: {"errorId":"f63421d9","retryAfterMs":738,"retryable":true})`)
	if errorText(a) != errorText(b) {
		t.Errorf("two errors of one kind read apart:\n%s\n%s", errorText(a), errorText(b))
	}
}
