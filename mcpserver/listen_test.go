package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const listenedTools = `
engines: {mem: {memory: {}}}
tools:
  - name: release
    description: Three steps, each saying so.
    engine: mem
    job: {program: steps}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {version: {type: string}, stepSeconds: {type: number}}, required: [version, stepSeconds]}
  - name: confirm
    description: Asks, then echoes the answer.
    engine: mem
    job: {program: ask}
    pollInterval: 100ms
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
`

// memEnv serves listenedTools on the in-memory engine, over HTTP (url) and, with stdio, in memory.
type memEnv struct {
	srv *mcpserver.Server
	url string
}

func newMemEnv(t *testing.T, edit func(*mcpserver.Config)) *memEnv {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(listenedTools))
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.Engines["mem"].Config.Open(t.Context(), adapters.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	keys, _ := token.ParseKeys(token.NewKey("l1"))
	sealed, _ := token.NewSealed(keys)
	cfg := mcpserver.Config{Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1}}
	if edit != nil {
		edit(&cfg)
	}
	srv, _ := newServer(t, tasks.Config{Mapping: set, Engines: map[string]adapters.Conn{"mem": e}, Tokens: sealed}, cfg)
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return &memEnv{srv: srv, url: hs.URL}
}

func (e *memEnv) client(extensions ...string) *mcpclient.Client {
	return mcpclient.Modern(mcpclient.HTTP{URL: e.url}, extensions...)
}

// message is one notification a listener got.
type message struct {
	method string
	params map[string]any
}

// listened is what one listen got: its notifications, and how it ended.
type listened struct {
	messages []message
	result   map[string]any
	rpcErr   *mcpclient.Error
	err      error
}

// listen listens with c, handing each notification to each as well (nil: none) until the stream
// ends.
func listen(ctx context.Context, c *mcpclient.Client, filter map[string]any, each func(message)) *listened {
	var l listened
	res, rpcErr, err := c.Listen(ctx, filter, func(method string, params json.RawMessage) {
		var m message
		m.method = method
		json.Unmarshal(params, &m.params)
		l.messages = append(l.messages, m)
		if each != nil {
			each(m)
		}
	})
	l.rpcErr, l.err = rpcErr, err
	json.Unmarshal(res, &l.result)
	return &l
}

func start(t *testing.T, c *mcpclient.Client, tool string, args map[string]any) string {
	t.Helper()
	res, rpcErr, err := c.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil || rpcErr != nil {
		t.Fatalf("tools/call %s: %v %v", tool, err, rpcErr)
	}
	var task struct{ TaskID string }
	json.Unmarshal(res, &task)
	return task.TaskID
}

func decode(t *testing.T, c *mcpclient.Client, method string, params map[string]any) map[string]any {
	t.Helper()
	res, rpcErr, err := c.Call(context.Background(), method, params)
	if err != nil || rpcErr != nil {
		t.Fatalf("%s: %v %v", method, err, rpcErr)
	}
	var m map[string]any
	json.Unmarshal(res, &m)
	return m
}

// subscription is the listen a notification or result names in its _meta.
func subscription(params map[string]any) any {
	meta, _ := params["_meta"].(map[string]any)
	return meta["io.modelcontextprotocol/subscriptionId"]
}

// TestListenOverHTTP: the acknowledgement comes first and names only the listener's own tasks;
// notifications/tasks follow each change in order, carry what tasks/get answers (the question
// while input_required, the result at the end), and name the listen; once every task has ended
// the stream ends with the empty result.
func TestListenOverHTTP(t *testing.T) {
	e := newMemEnv(t, nil)
	c := e.client(ext)
	release := start(t, c, "release", map[string]any{"version": "2.0", "stepSeconds": 0.4})
	confirm := start(t, c, "confirm", map[string]any{"message": "Ship it?"})
	forged := release[:len(release)-4] + "AAAA"
	var answered sync.Once
	got := listen(t.Context(), c, map[string]any{"taskIds": []string{release, forged, confirm}}, func(m message) {
		if m.method == "notifications/tasks" && m.params["status"] == "input_required" {
			answered.Do(func() {
				go c.Call(t.Context(), "tasks/update", map[string]any{"taskId": confirm,
					"inputResponses": map[string]any{firstKey(m.params): map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
			})
		}
	})
	if got.err != nil || got.rpcErr != nil {
		t.Fatalf("listen: %v %v", got.err, got.rpcErr)
	}
	ack := got.messages[0]
	if ack.method != "notifications/subscriptions/acknowledged" || jsonOf(ack.params["notifications"]) != jsonOf(map[string]any{"taskIds": []string{release, confirm}}) {
		t.Fatalf("the first message: %s %v, want the acknowledgement of the two real tasks", ack.method, ack.params)
	}
	id := subscription(ack.params)
	if id == nil || subscription(got.result) != id {
		t.Fatalf("the acknowledgement names listen %v, the result %v", id, got.result)
	}
	byTask := map[string][]map[string]any{}
	for _, m := range got.messages[1:] {
		if m.method != "notifications/tasks" || subscription(m.params) != id || m.params["resultType"] != nil {
			t.Fatalf("a notification %s %v, want notifications/tasks naming listen %v, without resultType", m.method, m.params, id)
		}
		byTask[m.params["taskId"].(string)] = append(byTask[m.params["taskId"].(string)], m.params)
	}
	if len(byTask) != 2 {
		t.Fatalf("notifications about %d tasks, want the 2 acknowledged", len(byTask))
	}
	var steps []string
	for _, n := range byTask[release] {
		steps = append(steps, fmt.Sprint(n["status"], ": ", n["statusMessage"]))
	}
	// A listener learns of a change when a read sees it: a step that began and ended between two
	// reads (a machine stalled for longer than a step) is never told, so the steps told are those
	// wanted, in order, each once, and the end always.
	want := []string{"working: step 1 of 3: compile", "working: step 2 of 3: test", "working: step 3 of 3: package", "completed: step 3 of 3: package"}
	if !inOrderOnce(steps, want) || steps[len(steps)-1] != want[len(want)-1] {
		t.Fatalf("the release's notifications: %q, want some of %q in order, each once, ending with the last", steps, want)
	}
	confirms := byTask[confirm]
	asked := slices.IndexFunc(confirms, func(n map[string]any) bool { return n["status"] == "input_required" })
	if asked < 0 || confirms[asked]["inputRequests"] == nil || confirms[len(confirms)-1]["status"] != "completed" {
		t.Fatalf("the confirmation's notifications: %v, want input_required with its question, then completed", confirms)
	}
	for _, id := range []string{release, confirm} {
		last := byTask[id][len(byTask[id])-1]
		polled := decode(t, c, "tasks/get", map[string]any{"taskId": id})
		delete(last, "_meta")
		delete(polled, "_meta")
		delete(polled, "resultType")
		if !reflect.DeepEqual(last, polled) {
			t.Fatalf("the last notification of %s:\n%v\ntasks/get answers:\n%v", id, last, polled)
		}
	}
}

// inOrderOnce says whether got holds only members of want, in want's order, none twice, after any
// number of messages before want's first (the task's submitted state).
func inOrderOnce(got, want []string) bool {
	first := slices.IndexFunc(got, func(s string) bool { return slices.Contains(want, s) })
	if first < 0 {
		return false
	}
	last := -1
	for _, s := range got[first:] {
		i := slices.Index(want, s)
		if i <= last {
			return false
		}
		last = i
	}
	return true
}

func firstKey(task map[string]any) string {
	for k := range task["inputRequests"].(map[string]any) {
		return k
	}
	return ""
}

// TestListenRefusals: a client without the extension is told which it lacks; params of the wrong
// type are refused, each precisely; a listen for nothing taskgate serves is acknowledged empty and
// ends at once. The same over stdio.
func TestListenRefusals(t *testing.T) {
	e := newMemEnv(t, nil)
	c := e.client(ext)
	id := start(t, c, "release", map[string]any{"version": "1", "stepSeconds": 0.1})
	cases := []struct {
		name    string
		params  map[string]any
		code    int
		message string
	}{
		{"no notifications", map[string]any{}, -32602, `Invalid params of subscriptions/listen: notifications is required, like {"notifications": {"taskIds": ["..."]}}`},
		{"notifications a list", map[string]any{"notifications": []any{id}}, -32602, `Invalid params of subscriptions/listen: notifications must be an object, like {"taskIds": ["..."]}, not ["` + id[:38] + `...`},
		{"taskIds a string", map[string]any{"notifications": map[string]any{"taskIds": "abc"}}, -32602, `Invalid params of subscriptions/listen: notifications.taskIds must be an array of task id strings, not "abc"`},
		{"a taskId a number", map[string]any{"notifications": map[string]any{"taskIds": []any{id, 7}}}, -32602, `Invalid params of subscriptions/listen: notifications.taskIds[1] must be a string (a task id), not 7`},
		{"a flag a string", map[string]any{"notifications": map[string]any{"toolsListChanged": "yes"}}, -32602, `Invalid params of subscriptions/listen: notifications.toolsListChanged must be a boolean, not "yes"`},
		{"too many ids", map[string]any{"notifications": map[string]any{"taskIds": slices.Repeat([]string{"x"}, tasks.MaxWatched+1)}}, -32602,
			`Invalid params of subscriptions/listen: notifications.taskIds lists 1001 ids; one listen follows at most 1000: listen on the others in another request`},
	}
	conn := stdioOf(t, e.srv)
	for _, tc := range cases {
		for transport, c := range map[string]*mcpclient.Client{"http": c, "stdio": mcpclient.Modern(conn, ext)} {
			_, rpcErr, err := c.Call(t.Context(), "subscriptions/listen", tc.params)
			if err != nil || rpcErr == nil || rpcErr.Code != tc.code || rpcErr.Message != tc.message {
				t.Errorf("%s over %s: %v %v, want %d %q", tc.name, transport, err, rpcErr, tc.code, tc.message)
			}
		}
	}
	for transport, c := range map[string]*mcpclient.Client{"http": e.client(), "stdio": mcpclient.Modern(conn)} {
		got := listen(t.Context(), c, map[string]any{"taskIds": []string{id}}, nil)
		if got.rpcErr == nil || got.rpcErr.Code != -32021 || !strings.Contains(string(got.rpcErr.Data), `"io.modelcontextprotocol/tasks"`) || len(got.messages) > 0 {
			t.Errorf("a client without the extension over %s: %+v, want -32021 naming the extension, and no notification", transport, got)
		}
		got = listen(t.Context(), c, map[string]any{"toolsListChanged": true}, nil)
		if got.err != nil || got.rpcErr != nil || len(got.messages) != 1 || jsonOf(got.messages[0].params["notifications"]) != "{}" || got.result == nil {
			t.Errorf("a listen for list changes over %s: %+v, want an empty acknowledgement and the result", transport, got)
		}
	}
}

// stdioOf is a stdio connection to srv in memory, as an mcpclient transport.
func stdioOf(t *testing.T, srv *mcpserver.Server) *connTransport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		srv.Serve(ctx, st)
		close(served)
	}()
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := &connTransport{conn: conn, waiting: map[string]chan *jsonrpc.Response{}, stop: func() { cancel(); <-served }}
	go c.read()
	t.Cleanup(func() { c.stop(); conn.Close() })
	return c
}

// connTransport is an mcpclient transport over an in-memory stdio connection, with requests in
// flight at once: each notification goes to every request's stream then waiting.
type connTransport struct {
	conn    mcp.Connection
	mu      sync.Mutex
	waiting map[string]chan *jsonrpc.Response
	streams map[string]mcpclient.Notified
	stop    func()
}

func (c *connTransport) read() {
	for {
		msg, err := c.conn.Read(context.Background())
		if err != nil {
			return
		}
		c.mu.Lock()
		switch m := msg.(type) {
		case *jsonrpc.Request:
			for _, notified := range c.streams {
				notified(m.Method, m.Params)
			}
		case *jsonrpc.Response:
			if ch, ok := c.waiting[fmt.Sprint(m.ID.Raw())]; ok {
				ch <- m
			}
		}
		c.mu.Unlock()
	}
}

func (c *connTransport) RoundTrip(ctx context.Context, id int, method string, params any, h http.Header) (json.RawMessage, *mcpclient.Error, error) {
	return c.Stream(ctx, id, method, params, h, nil)
}

func (c *connTransport) Stream(ctx context.Context, id int, method string, params any, _ http.Header, notified mcpclient.Notified) (json.RawMessage, *mcpclient.Error, error) {
	key := fmt.Sprint(id)
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.waiting[key] = ch
	if notified != nil {
		if c.streams == nil {
			c.streams = map[string]mcpclient.Notified{}
		}
		c.streams[key] = notified
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, key)
		delete(c.streams, key)
		c.mu.Unlock()
	}()
	raw, _ := json.Marshal(params)
	rid, _ := jsonrpc.MakeID(float64(id))
	if err := c.conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: raw}); err != nil {
		return nil, nil, err
	}
	select {
	case r := <-ch:
		res, rpcErr := mcpclient.DecodeResponse(r)
		return res, rpcErr, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

func (c *connTransport) notify(method string, params any) error {
	raw, _ := json.Marshal(params)
	return c.conn.Write(context.Background(), &jsonrpc.Request{Method: method, Params: raw})
}

// TestListenOverStdio: notifications and the result go on the connection; a listen ends with its
// result when the client cancels it, and at shutdown.
func TestListenOverStdio(t *testing.T) {
	e := newMemEnv(t, nil)
	conn := stdioOf(t, e.srv)
	c := mcpclient.Modern(conn, ext)
	short := start(t, c, "release", map[string]any{"version": "1", "stepSeconds": 0.1})
	long := start(t, c, "release", map[string]any{"version": "2", "stepSeconds": 3600})
	got := listen(t.Context(), c, map[string]any{"taskIds": []string{short}}, nil)
	last := got.messages[len(got.messages)-1]
	if got.err != nil || got.rpcErr != nil || got.messages[0].method != "notifications/subscriptions/acknowledged" || last.params["status"] != "completed" || got.result == nil {
		t.Fatalf("a listen over stdio: %+v, want the acknowledgement, the task to its end, and the result", got)
	}

	// Every stream of this transport sees every notification: a listen streams once a notification
	// names it, whichever callback saw it.
	var (
		mu        sync.Mutex
		streaming = map[any]bool{}
		both      = make(chan struct{})
		once      sync.Once
	)
	ended := make(chan *listened, 2)
	for range 2 {
		go func() {
			ended <- listen(t.Context(), c, map[string]any{"taskIds": []string{long}}, func(m message) {
				if m.method != "notifications/tasks" {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if streaming[subscription(m.params)] = true; len(streaming) == 2 {
					once.Do(func() { close(both) })
				}
			})
		}()
	}
	<-both
	var cancelled any
	mu.Lock()
	for id := range streaming {
		cancelled = id
		break
	}
	mu.Unlock()
	if err := conn.notify("notifications/cancelled", map[string]any{"requestId": cancelled}); err != nil {
		t.Fatal(err)
	}
	got = <-ended
	if got.err != nil || got.rpcErr != nil || subscription(got.result) != cancelled {
		t.Fatalf("the cancelled listen: %+v, want its result", got)
	}
	conn.stop() // the server's context ends, as at shutdown
	got = <-ended
	if got.err != nil || got.rpcErr != nil || got.result == nil || subscription(got.result) == cancelled {
		t.Fatalf("the listen at shutdown: %+v, want its result", got)
	}
}

// TestListenStreamKeepsAliveAndEndsAtShutdown: an idle listen stream carries a comment every 15 s,
// and the server's shutdown ends it with the result.
func TestListenStreamKeepsAliveAndEndsAtShutdown(t *testing.T) {
	e := newMemEnv(t, nil)
	c := e.client(ext)
	long := start(t, c, "release", map[string]any{"version": "2", "stepSeconds": 3600})
	id, params, header := c.Request("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{long}}})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url, bytes.NewReader(body))
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("the listen answered %s %s", resp.Status, ct)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimRight(line, "\n")
		}
	}()
	opened := time.Now()
	for line := range lines {
		if line == ": keep-alive" {
			break
		}
		if time.Since(opened) > 20*time.Second {
			t.Fatal("no keep-alive within 20 s")
		}
	}
	if waited := time.Since(opened); waited < 14*time.Second {
		t.Fatalf("a keep-alive after %s, want one every 15 s", waited)
	}
	e.srv.Shutdown()
	var rest []string
	for line := range lines {
		rest = append(rest, line)
	}
	want := fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"taskgate","version":"dev"},"io.modelcontextprotocol/subscriptionId":%d},"resultType":"complete"}}`, id, id)
	if !slices.Contains(rest, want) {
		t.Fatalf("after shutdown the stream carried %q, want the result %s", rest, want)
	}
}

// TestListenHoldsNoBodyBudget: a listen that has read its ids gives back its body's share of the
// body budget, however long it streams.
func TestListenHoldsNoBodyBudget(t *testing.T) {
	e := newMemEnv(t, func(c *mcpserver.Config) { c.Limits.BodyBudget = 16 << 10 })
	c := e.client(ext)
	long := start(t, c, "release", map[string]any{"version": "2", "stepSeconds": 3600})
	padded := append([]string{long}, slices.Repeat([]string{strings.Repeat("x", 100)}, 100)...) // a 10 KiB body
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	streaming := make(chan struct{})
	var once sync.Once
	go listen(ctx, c, map[string]any{"taskIds": padded}, func(m message) {
		if m.method == "notifications/tasks" {
			once.Do(func() { close(streaming) })
		}
	})
	<-streaming
	got := listen(t.Context(), c, map[string]any{"taskIds": padded[1:]}, nil)
	if got.err != nil || got.rpcErr != nil || len(got.messages) != 1 {
		t.Fatalf("a second listen of 10 KiB while the first streams: %+v", got)
	}
}

// TestListensAreLimited: a listen takes a poll of its caller's rate, the tasks it follows count
// against the tasks listens may follow at once (given back when it ends), and a listen ends with
// its result when it has lived Limits.MaxListen, or when its bearer token expires.
func TestListensAreLimited(t *testing.T) {
	t.Run("rate", func(t *testing.T) {
		e := newMemEnv(t, func(c *mcpserver.Config) { c.Limits.PollsPerSecond = 0.1 }) // a burst of 1
		c := e.client(ext)
		if got := listen(t.Context(), c, map[string]any{"toolsListChanged": true}, nil); got.err != nil || got.rpcErr != nil {
			t.Fatalf("the first listen: %v %v", got.err, got.rpcErr)
		}
		got := listen(t.Context(), c, map[string]any{"toolsListChanged": true}, nil)
		if got.rpcErr == nil || !strings.HasPrefix(got.rpcErr.Message, "Rate limit exceeded for subscriptions/listen") {
			t.Fatalf("a listen over the rate: %+v, want it refused by the rate limit", got)
		}
	})
	t.Run("followed", func(t *testing.T) {
		e := newMemEnv(t, func(c *mcpserver.Config) { c.Limits.MaxFollowed = 3 })
		c := e.client(ext)
		ids := []string{start(t, c, "release", map[string]any{"version": "1", "stepSeconds": 60}),
			start(t, c, "release", map[string]any{"version": "2", "stepSeconds": 60})}
		ctx, cancel := context.WithCancel(t.Context())
		acked := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			listen(ctx, c, map[string]any{"taskIds": ids}, func(m message) {
				if m.method == "notifications/subscriptions/acknowledged" {
					close(acked)
				}
			})
		}()
		<-acked
		got := listen(t.Context(), c, map[string]any{"taskIds": ids}, nil)
		if got.rpcErr == nil || !strings.HasPrefix(got.rpcErr.Message, "subscriptions/listen of 2 tasks refused: taskgate follows as many tasks") || len(got.messages) != 0 {
			t.Fatalf("a listen past the tasks followed at once: %+v, want it refused before any acknowledgement", got)
		}
		cancel()
		<-done
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			ctx, stop := context.WithTimeout(t.Context(), 300*time.Millisecond)
			got = listen(ctx, c, map[string]any{"taskIds": ids}, nil)
			stop()
			if got.rpcErr == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the first listen ended: %+v, want the tasks it followed given back", got.rpcErr)
			}
		}
	})
	t.Run("life", func(t *testing.T) {
		e := newMemEnv(t, func(c *mcpserver.Config) { c.Limits.MaxListen = 300 * time.Millisecond })
		c := e.client(ext)
		id := start(t, c, "release", map[string]any{"version": "1", "stepSeconds": 60})
		began := time.Now()
		got := listen(t.Context(), c, map[string]any{"taskIds": []string{id}}, nil)
		if took := time.Since(began); got.err != nil || got.rpcErr != nil || got.result == nil || took < 300*time.Millisecond || took > 5*time.Second {
			t.Fatalf("a listen of a running task: %+v after %s, want its result after its life of 300ms", got, took)
		}
	})
	t.Run("token", func(t *testing.T) {
		expires := time.Now().Add(time.Second)
		e := newMemEnv(t, func(c *mcpserver.Config) {
			c.HTTPAuth = &mcpserver.HTTPAuth{Verify: func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
				return &auth.TokenInfo{UserID: "oauth:alice", Expiration: expires}, nil
			}}
		})
		c := mcpclient.Modern(mcpclient.HTTP{URL: e.url, Header: http.Header{"Authorization": {"Bearer short-lived"}}}, ext)
		id := start(t, c, "release", map[string]any{"version": "1", "stepSeconds": 60})
		got := listen(t.Context(), c, map[string]any{"taskIds": []string{id}}, nil)
		if now := time.Now(); got.err != nil || got.rpcErr != nil || got.result == nil || now.Before(expires) || now.After(expires.Add(5*time.Second)) {
			t.Fatalf("a listen whose token expires at %s: %+v at %s, want its result then", expires.Format(time.StampMilli), got, now.Format(time.StampMilli))
		}
	})
}

// TestAListenGoSDKWouldAnswerIsRefused: a listen the HTTP front passes on for its shape (here an
// Accept with a wildcard) reached go-sdk's own listen, which follows no task and said nothing; it
// is refused, saying the shape taskgate answers.
func TestAListenGoSDKWouldAnswerIsRefused(t *testing.T) {
	e := newMemEnv(t, nil)
	id := start(t, e.client(ext), "release", map[string]any{"version": "1", "stepSeconds": 0.1})
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + id + `"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + ext + `":{}}}}}}`
	for name, header := range map[string]map[string]string{"a wildcard Accept": {"Accept": "*/*"}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(got), `"code":-32600`) || !strings.Contains(string(got), "subscriptions/listen is answered over HTTP as one JSON-RPC request") {
			t.Errorf("a listen with %s: HTTP %d %s, want the shape taskgate answers", name, resp.StatusCode, got)
		}
	}
}
