package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
)

// observed keeps what the server tells its Observer of each request.
type observed struct {
	mu   sync.Mutex
	seen []mcpserver.Request
}

func (o *observed) Request(ctx context.Context, _ *mcpserver.Request) context.Context { return ctx }
func (o *observed) Answered(_ context.Context, r *mcpserver.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := *r
	rec.Duration = 0
	o.seen = append(o.seen, rec)
}
func (o *observed) Started(context.Context, string)               {}
func (o *observed) Ended(context.Context, string, adapters.State) {}

func (o *observed) last() mcpserver.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[len(o.seen)-1]
}

func (o *observed) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// recordAfter is the record of the request answered after the first n: the fast path tells the
// observer once the client has its answer, so the record may come a moment after the answer.
func (o *observed) recordAfter(t *testing.T, n int) mcpserver.Request {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); o.count() <= n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no record of the request 5 s after its answer")
		}
	}
	return o.last()
}

// httpExchange is one HTTP request and what came back.
type httpExchange struct {
	status int
	header http.Header
	body   string
}

func exchangeWith(t *testing.T, url, body string, header http.Header) httpExchange {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header = header.Clone()
	if host := header.Get("Host"); host != "" { // go-sdk refuses other Hosts on a loopback listener
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	h.Del("Date")
	h.Del("Content-Length")
	return httpExchange{resp.StatusCode, h, string(raw)}
}

func taskGetBody(id any, taskID string, meta string) string {
	rawID, _ := json.Marshal(id)
	rawTask, _ := json.Marshal(taskID)
	if meta == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tasks/get","params":{"taskId":%s}}`, rawID, rawTask)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tasks/get","params":{"taskId":%s,"_meta":%s}}`, rawID, rawTask, meta)
}

const (
	modernMeta   = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	noTasksMeta  = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	progressMeta = `{"progressToken":7}`
)

func headers(version, method string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {version}}
	if method != "" {
		h.Set("Mcp-Method", method)
	}
	return h
}

// TestFastPathAnswersAsGoSDK sends each tasks/get through the handler with the fast path and
// through go-sdk alone, and finds the same status, headers and body, and the same record of the
// request for the metrics and logs; the requests the fast path does not read are served by go-sdk.
func TestFastPathAnswersAsGoSDK(t *testing.T) {
	obs := &observed{}
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) { c.Observer = obs })
	var sdkServed atomic.Int64
	fastH, sdkH := e.srv.HTTPHandlers(&sdkServed)
	fast, sdk := httptest.NewServer(fastH), httptest.NewServer(sdkH)
	defer fast.Close()
	defer sdk.Close()

	c := rpctest.Modern(rpctest.HTTP{URL: fast.URL}, ext)
	running := call(t, c, "wait_and_echo", map[string]any{"seconds": 60, "text": "never"})["taskId"].(string)
	defer c.Call(t, "tasks/cancel", map[string]any{"taskId": running})
	echoed := call(t, c, "wait_and_echo", map[string]any{"seconds": 0, "text": "<b>&</b> é \u2028"})["taskId"].(string)
	toolError := call(t, c, "wait_and_fail", map[string]any{"seconds": 0, "reason": "the disk is full"})["taskId"].(string)
	protocolError := call(t, c, "fail_as_protocol_error", map[string]any{"seconds": 0, "reason": "no"})["taskId"].(string)
	waitFor(t, c, echoed, "completed")
	waitFor(t, c, toolError, "completed")
	waitFor(t, c, protocolError, "failed")

	modern, legacy := headers("2026-07-28", "tasks/get"), headers("2025-11-25", "")
	served := []pathCase{
		{"running", taskGetBody(1, running, modernMeta), modern},
		{"completed, a result to escape", taskGetBody(2, echoed, modernMeta), modern},
		{"tool error", taskGetBody(3, toolError, modernMeta), modern},
		{"protocol error", taskGetBody(4, protocolError, modernMeta), modern},
		{"string id", taskGetBody("a-b", running, modernMeta), modern},
		{"string id to escape", `{"jsonrpc":"2.0","id":"<a\u0026b>\u00e9\"","method":"tasks/get","params":{"taskId":"` + running + `","_meta":` + modernMeta + `}}`, modern},
		{"large integer id", taskGetBody(1<<53, running, modernMeta), modern},
		{"unknown task", taskGetBody(5, "nope", modernMeta), modern},
		{"no tasks extension", taskGetBody(6, running, noTasksMeta), modern},
		{"capabilities go-sdk reads", taskGetBody(12, running, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1","icons":[]},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`), modern},
		{"2025-11-25 running", taskGetBody(7, running, ""), legacy},
		{"2025-11-25 completed", taskGetBody(8, echoed, progressMeta), legacy},
		{"2025-11-25 failed", taskGetBody(9, toolError, ""), legacy},
		{"2025-11-25 unknown task", taskGetBody(10, "nope", ""), legacy},
		{"2025-11-25 with Mcp-Method", taskGetBody(11, running, ""), headers("2025-11-25", "tasks/get")},
	}
	left := []pathCase{
		{"another method", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"taskId":"nope"}}`, legacy},
		{"a member too many", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope"},"x":1}`, legacy},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tasks/get","params":{"taskId":"nope"}}`, legacy},
		{"a null id", `{"jsonrpc":"2.0","id":null,"method":"tasks/get","params":{"taskId":"nope"}}`, legacy},
		{"an unknown param", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope","other":"x"}}`, legacy},
		{"a taskId not a string", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":5}}`, legacy},
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`, legacy},
		{"version 1.0", `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"taskId":"nope"}}`, legacy},
		{"no Mcp-Method", taskGetBody(1, running, modernMeta), headers("2026-07-28", "")},
		{"another Mcp-Method", taskGetBody(1, running, modernMeta), headers("2026-07-28", "tasks/list")},
		{"versions that differ", taskGetBody(1, running, strings.Replace(modernMeta, "2026-07-28", "2026-07-29", 1)), modern},
		{"no capabilities", taskGetBody(1, running, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), modern},
		{"capabilities of the wrong type", taskGetBody(1, running, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`), modern},
		{"extensions not an object", taskGetBody(1, running, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":[]}}`), modern},
		{"client info of the wrong type", taskGetBody(1, running, strings.Replace(modernMeta, `"name":"t"`, `"name":5`, 1)), modern},
		{"a version in 2025-11-25 _meta", taskGetBody(1, running, modernMeta), legacy},
		{"another protocol version", taskGetBody(1, running, ""), headers("2025-06-18", "")},
		{"no protocol version", taskGetBody(1, running, ""), headers("", "")},
		{"Accept */*", taskGetBody(1, running, ""), func() http.Header { h := headers("2025-11-25", ""); h.Set("Accept", "*/*"); return h }()},
		{"another Content-Type", taskGetBody(1, running, ""), func() http.Header { h := headers("2025-11-25", ""); h.Set("Content-Type", "text/plain"); return h }()},
		{"Last-Event-ID", taskGetBody(1, running, ""), func() http.Header { h := headers("2025-11-25", ""); h.Set("Last-Event-ID", "x"); return h }()},
		{"a Host not loopback", taskGetBody(1, running, ""), func() http.Header { h := headers("2025-11-25", ""); h.Set("Host", "taskgate.example"); return h }()},
		{"a long body", taskGetBody(1, running, `{"pad":"`+strings.Repeat("x", 2000)+`"}`), legacy},
	}
	bothPaths(t, fast.URL, sdk.URL, &sdkServed, obs, func(body string) string { return body },
		func(got, want mcpserver.Request) bool { return got == want }, served, left)
}

func compare(t *testing.T, got, want httpExchange) {
	t.Helper()
	if got.status != want.status || !equalHeaders(got.header, want.header) || got.body != want.body {
		t.Errorf("fast path:\n%d %v\n%s\ngo-sdk:\n%d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func startBody(id any, tool, args, meta string) string {
	rawID, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":%s}}`, rawID, tool, args, meta)
}

func startHeaders(version, tool string) http.Header {
	h := headers(version, "tools/call")
	h.Set("Mcp-Name", tool)
	return h
}

// fresh masks what differs between two starts of the same call: the task ids and request states
// (sealed), and the times.
var fresh = regexp.MustCompile(`tgs?1\.[A-Za-z0-9-]+\.[A-Za-z0-9_-]+|"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]*"`)

// TestFastStartAnswersAsGoSDK starts the same calls through the handler with the fast path and
// through go-sdk alone, and finds the same answers and records but for the task each started; the
// calls that could answer with more than their task (questions first, a call that waits, progress),
// and those the fast path does not read, are left to go-sdk.
func TestFastStartAnswersAsGoSDK(t *testing.T) {
	obs := &observed{}
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) { c.Observer = obs })
	var sdkServed atomic.Int64
	fastH, sdkH := e.srv.HTTPHandlers(&sdkServed)
	fast, sdk := httptest.NewServer(fastH), httptest.NewServer(sdkH)
	defer fast.Close()
	defer sdk.Close()
	echo := `{"seconds":0,"text":"<b>&</b> é"}`
	modern := startHeaders("2026-07-28", "wait_and_echo")
	served := []pathCase{
		{"a start", startBody(1, "wait_and_echo", echo, modernMeta), modern},
		{"a string id", startBody("s-1", "wait_and_echo", echo, modernMeta), modern},
		{"a tool that may run as a task", startBody(2, "echo_optional", echo, modernMeta), startHeaders("2026-07-28", "echo_optional")},
		{"arguments that do not fit", startBody(3, "wait_and_echo", `{"seconds":"soon"}`, modernMeta), modern},
		{"capabilities go-sdk reads", startBody(4, "wait_and_echo", echo, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1","icons":[]},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`), modern},
	}
	left := []pathCase{
		{"a tool that may not run as a task", startBody(1, "quick_echo", echo, modernMeta), startHeaders("2026-07-28", "quick_echo")},
		{"a tool that asks first", startBody(1, "echo_after_asking", `{}`, modernMeta), startHeaders("2026-07-28", "echo_after_asking")},
		{"an unknown tool", startBody(1, "nope", echo, modernMeta), startHeaders("2026-07-28", "nope")},
		{"no tasks extension", startBody(1, "wait_and_echo", echo, noTasksMeta), modern},
		{"a progress token", startBody(1, "wait_and_echo", echo, strings.Replace(modernMeta, "{", `{"progressToken":7,`, 1)), modern},
		{"arguments not an object", startBody(1, "wait_and_echo", `[1]`, modernMeta), modern},
		{"no arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","_meta":` + modernMeta + `}}`, modern},
		{"a param more", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","arguments":{},"requestState":"x","_meta":` + modernMeta + `}}`, modern},
		{"a name not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{},"_meta":` + modernMeta + `}}`, modern},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","arguments":` + echo + `,"task":{}}}`, headers("2025-11-25", "")},
		{"another Mcp-Method", startBody(1, "wait_and_echo", echo, modernMeta), func() http.Header { h := modern.Clone(); h.Set("Mcp-Method", "tasks/get"); return h }()},
	}
	// Each start starts an execution of its own: the records agree but for which.
	sameBut := func(got, want mcpserver.Request) bool {
		started := (got.Execution == adapters.Ref{}) == (want.Execution == adapters.Ref{})
		got.Execution, want.Execution = adapters.Ref{}, adapters.Ref{}
		return started && got == want
	}
	bothPaths(t, fast.URL, sdk.URL, &sdkServed, obs, func(body string) string { return fresh.ReplaceAllString(body, "X") }, sameBut, served, left)
}

// pathCase is one request of an equivalence test: its body and headers.
type pathCase struct {
	name   string
	body   string
	header http.Header
}

// bothPaths sends each request of served through go-sdk alone (sdk) and through the handler with
// the fast path (fast), and expects the fast path to answer it as go-sdk did, once same has read
// both bodies, with a record of the request that recordsMatch; and each of left to be left to
// go-sdk, and answered as go-sdk alone answers it.
func bothPaths(t *testing.T, fast, sdk string, sdkServed *atomic.Int64, obs *observed, same func(string) string,
	recordsMatch func(got, want mcpserver.Request) bool, served, left []pathCase) {
	t.Helper()
	for _, tc := range served {
		t.Run(tc.name, func(t *testing.T) {
			want := exchangeWith(t, sdk, tc.body, tc.header)
			wantRec, records := obs.last(), obs.count()
			before := sdkServed.Load()
			got := exchangeWith(t, fast, tc.body, tc.header)
			if sdkServed.Load() != before {
				t.Fatalf("the fast path left the request to go-sdk")
			}
			got.body, want.body = same(got.body), same(want.body)
			compare(t, got, want)
			if rec := obs.recordAfter(t, records); !recordsMatch(rec, wantRec) {
				t.Errorf("observed %+v, go-sdk's path %+v", rec, wantRec)
			}
		})
	}
	for _, tc := range left {
		t.Run("left to go-sdk: "+tc.name, func(t *testing.T) {
			want := exchangeWith(t, sdk, tc.body, tc.header)
			before := sdkServed.Load()
			got := exchangeWith(t, fast, tc.body, tc.header)
			if sdkServed.Load() != before+1 {
				t.Fatalf("the fast path answered it: %d %s", got.status, got.body)
			}
			got.body, want.body = same(got.body), same(want.body)
			compare(t, got, want)
		})
	}
}

// blockedObserver holds every record of a tools/call in Answered until released.
type blockedObserver struct {
	observed
	released chan struct{}
}

func (o *blockedObserver) Answered(ctx context.Context, r *mcpserver.Request) {
	if r.Method == "tools/call" {
		<-o.released
	}
	o.observed.Answered(ctx, r)
}

// TestTheFastPathAnswersBeforeItsRecord: a start on the fast path is answered whole while the
// observer (the log line, the metrics) has yet to be told of it; the record follows.
func TestTheFastPathAnswersBeforeItsRecord(t *testing.T) {
	obs := &blockedObserver{released: make(chan struct{})}
	e := newMemEnv(t, func(c *mcpserver.Config) { c.Observer = obs })
	answered := make(chan httpExchange, 1)
	go func() {
		answered <- exchangeWith(t, e.url, startBody(1, "release", `{"version":"1","stepSeconds":0}`, modernMeta), startHeaders("2026-07-28", "release"))
	}()
	select {
	case got := <-answered:
		if got.status != http.StatusOK || !strings.Contains(got.body, `"taskId"`) {
			t.Fatalf("the start was answered %d %s, want its task", got.status, got.body)
		}
	case <-time.After(5 * time.Second):
		close(obs.released)
		t.Fatal("the start was not answered while its record waited")
	}
	if n := obs.count(); n != 0 {
		t.Fatalf("%d records before the observer was released", n)
	}
	close(obs.released)
	if rec := obs.recordAfter(t, 0); rec.Method != "tools/call" || rec.Outcome != "ok" || rec.Tool != "release" {
		t.Fatalf("record %+v, want the start's", rec)
	}
}
