package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzFastPathAnswersAsGoSDK sends each generated request to the server's HTTP handler with the
// fast path and to the same server's handler without it (go-sdk alone), and requires the same
// status, headers and body, once fresh has masked what two runs of the same request legitimately
// differ in (the tasks that two starts start, and times).
//
// The request is built from choices (one byte for each of the request's dimensions, 0 when the
// input is shorter) and free, a string the fuzzer writes into a method name, an id, a task id, a
// tool name, a member name or a header; the choices' zero is a plain modern poll, which the fast
// path serves, so that the fuzzer starts among the shapes the fast path accepts. With the raw
// flag, free is the body.
//
// Compared: the status, and every header of the answer at its first byte but Content-Length (the
// fast path writes a result at once and states its length; go-sdk streams it) and Date (set by
// net/http, not the handlers). The body is compared parsed: a JSON body as JSON, an event stream as
// its first event, whose data is JSON; a subscriptions/listen stream is cut there, because its
// keep-alives and end depend on timing. Any other body is compared as text. The one deliberate
// difference is listenOfTaskgate.
func FuzzFastPathAnswersAsGoSDK(f *testing.F) {
	for _, seed := range fastPathSeeds() {
		f.Add(seed.choices, seed.free)
	}
	f.Fuzz(func(t *testing.T, choices []byte, free string) {
		env := pathsEnv(t)
		req := buildRequest(choices, free, env.completedTask(t))
		want := serveOnce(t, env.sdkOnly, req)
		before := env.sdkServed.Load()
		got := serveOnce(t, env.fast, req)
		fastServed := env.sdkServed.Load() == before
		if listenOfTaskgate(req, fastServed) {
			return
		}
		if diff := differences(got, want); diff != "" {
			t.Fatalf("the fast path (serving it itself: %v) answered otherwise than go-sdk: %s\nrequest: %s\n%s", fastServed, diff, req.header, req.body)
		}
		env.logs.check(t)
	})
}

// pathsEnvState is the fuzz server (fuzzServer) with both handlers, and a task that has completed.
type pathsEnvState struct {
	fast, sdkOnly http.Handler
	sdkServed     atomic.Int64
	logs          *panicLog
	mu            sync.Mutex
	completed     string
	completedAt   time.Time
}

var pathsOnce struct {
	once sync.Once
	env  *pathsEnvState
}

func pathsEnv(t *testing.T) *pathsEnvState {
	srv, _, logs := fuzzServer(t)
	pathsOnce.once.Do(func() {
		e := &pathsEnvState{logs: logs}
		e.fast, e.sdkOnly = srv.HTTPHandlers(&e.sdkServed)
		pathsOnce.env = e
	})
	return pathsOnce.env
}

// completedTask is a task that has completed, started again before the memory engine's
// retention (a minute, testdata/fuzz-tools.yaml) forgets it.
func (e *pathsEnvState) completedTask(t *testing.T) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.completed != "" && time.Since(e.completedAt) < 30*time.Second {
		return e.completed
	}
	start := fuzzRequest{
		body:   startBody(1, "wait_and_echo", `{"seconds":0,"text":"done"}`, modernMeta),
		header: startHeaders("2026-07-28", "wait_and_echo"),
		local:  loopbackListener,
		host:   "127.0.0.1:8080",
	}
	var started struct {
		Result struct {
			TaskID string `json:"taskId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(firstEventData(serveOnce(t, e.fast, start).body), &started); err != nil || started.Result.TaskID == "" {
		t.Fatalf("the completed task did not start: %v", err)
	}
	poll := start
	poll.header = headers("2026-07-28", "tasks/get")
	poll.body = taskGetBody(2, started.Result.TaskID, modernMeta)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if strings.Contains(serveOnce(t, e.fast, poll).body, `"status":"completed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s did not complete in 10 s", started.Result.TaskID)
		}
	}
	e.completed, e.completedAt = started.Result.TaskID, time.Now()
	return e.completed
}

// fuzzRequest is one generated HTTP request.
type fuzzRequest struct {
	method string // the JSON-RPC method, for deliberateDifference
	body   string
	header http.Header
	host   string
	local  net.Addr
}

var (
	loopbackListener = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	publicListener   = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}
)

// The dimensions of a generated request: choices[d] picks among the options of dimension d.
const (
	dimMethod = iota
	dimParams
	dimMeta
	dimTaskID
	dimTool
	dimArguments
	dimID
	dimVersion
	dimMcpMethod
	dimMcpName
	dimAccept
	dimContentType
	dimHost
	dimNotifications
	dimFlags
	dimensions
)

// The bits of choices[dimFlags].
const (
	flagBatch = 1 << iota
	flagLastEventID
	flagPublicListener
	flagRaw
	flagVersion1
	flagExtraMember
)

const (
	echoArgs    = `{"seconds":0,"text":"<b>&</b> é \u2028"}`
	rootsMeta   = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1","icons":[]},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	taskPlace   = "$completed"
	absentValue = "\x00absent" // an option whose member or header is left out
)

// options lists each dimension's options; in JSON dimensions, free is the fuzzer's string as a
// JSON string, and in header dimensions free itself.
func options(free string) [dimensions][]string {
	q, _ := json.Marshal(free)
	jsonFree := string(q)
	return [dimensions][]string{
		dimMethod: {"tasks/get", "tools/call", "subscriptions/listen", "tasks/result", "ping", "tasks/cancel", "tasks/list", free},
		dimParams: {"good", absentValue, "null", "[]", `"x"`, "{}", "extra"},
		dimMeta: {modernMeta, absentValue, "null", "[]", noTasksMeta,
			strings.Replace(modernMeta, "2026-07-28", "2026-07-29", 1),
			strings.Replace(modernMeta, "2026-07-28", "2025-11-25", 1),
			`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
			rootsMeta,
			strings.Replace(modernMeta, `"name":"t"`, `"name":5`, 1),
			strings.Replace(modernMeta, "{", `{"progressToken":7,`, 1),
			progressMeta,
			`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":[]}}`,
			`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`,
		},
		dimTaskID:        {`"` + taskPlace + `"`, `"nope"`, jsonFree, "5", "null", "{}", absentValue, `"tg1.AAAA.BBBB"`},
		dimTool:          {"wait_and_echo", "echo_optional", "quick_echo", "nope", free, "5"},
		dimArguments:     {echoArgs, `{"seconds":"soon"}`, "[1]", "null", "{}", absentValue},
		dimID:            {"1", `"s-1"`, "1.5", "null", absentValue, "9007199254740992", "9007199254740993", "1e300", "0", "-0", `""`, jsonFree, "1e2", "true", "{}", `"<a\u0026b>\u00e9\""`, "-9007199254740992", "18446744073709551616"},
		dimVersion:       {"2026-07-28", "2025-11-25", absentValue, "2025-06-18", "2026-07-29", free},
		dimMcpMethod:     {"same", absentValue, "tasks/list", free},
		dimMcpName:       {"same", absentValue, "nope", free},
		dimAccept:        {"application/json, text/event-stream", "*/*", "application/json", "text/event-stream, application/json;q=0.9", "APPLICATION/JSON,TEXT/EVENT-STREAM", "application/*, text/*", absentValue, "two lines", free},
		dimContentType:   {"application/json", "application/json; charset=utf-8", "text/plain", absentValue, "Application/JSON", "application/json;", free},
		dimHost:          {"127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "taskgate.example", "[::ffff:127.0.0.1]:8080", "127.0.0.1", "[::1]", "", free},
		dimNotifications: {`{"taskIds":["` + taskPlace + `"]}`, "{}", absentValue, `{"taskIds":"abc"}`, `{"toolsListChanged":true}`, "[]"},
	}
}

// buildRequest is the request that choices and free describe, about the task completed.
func buildRequest(choices []byte, free, completed string) fuzzRequest {
	opts := options(free)
	pick := func(d int) string {
		var c byte
		if d < len(choices) {
			c = choices[d]
		}
		return opts[d][int(c)%len(opts[d])]
	}
	var flags byte
	if dimFlags < len(choices) {
		flags = choices[dimFlags]
	}
	method := pick(dimMethod)
	tool := pick(dimTool)
	toolJSON := tool
	if tool != "5" {
		q, _ := json.Marshal(tool)
		toolJSON = string(q)
	}

	var params members
	switch method {
	case "tools/call":
		params.add("name", toolJSON)
		params.add("arguments", pick(dimArguments))
	case "subscriptions/listen":
		params.add("notifications", pick(dimNotifications))
	case "ping", "tasks/list":
	default:
		params.add("taskId", pick(dimTaskID))
	}
	params.add("_meta", pick(dimMeta))
	var msg members
	jsonrpcVersion := `"2.0"`
	if flags&flagVersion1 != 0 {
		jsonrpcVersion = `"1.0"`
	}
	msg.add("jsonrpc", jsonrpcVersion)
	msg.add("id", pick(dimID))
	q, _ := json.Marshal(method)
	msg.add("method", string(q))
	switch shape := pick(dimParams); shape {
	case "good":
		msg.add("params", params.object())
	case "extra":
		params.add(freeName(free), "1")
		msg.add("params", params.object())
	default:
		msg.add("params", shape)
	}
	if flags&flagExtraMember != 0 {
		msg.add(freeName(free), "1")
	}
	body := msg.object()
	if flags&flagBatch != 0 {
		body = "[" + body + "]"
	}
	if flags&flagRaw != 0 {
		body = free
	}
	body = strings.ReplaceAll(body, taskPlace, completed)

	h := http.Header{}
	setHeader := func(name, v string) {
		if v != absentValue {
			h.Set(name, headerValue(v))
		}
	}
	setHeader("Mcp-Protocol-Version", pick(dimVersion))
	switch v := pick(dimMcpMethod); v {
	case "same":
		h.Set("Mcp-Method", headerValue(method))
	default:
		setHeader("Mcp-Method", v)
	}
	switch v := pick(dimMcpName); v {
	case "same":
		if method == "tools/call" {
			h.Set("Mcp-Name", headerValue(tool))
		}
	default:
		setHeader("Mcp-Name", v)
	}
	switch v := pick(dimAccept); v {
	case "two lines":
		h["Accept"] = []string{"application/json", "text/event-stream"}
	default:
		setHeader("Accept", v)
	}
	setHeader("Content-Type", pick(dimContentType))
	if flags&flagLastEventID != 0 {
		h.Set("Last-Event-ID", "x_1")
	}
	local := net.Addr(loopbackListener)
	if flags&flagPublicListener != 0 {
		local = publicListener
	}
	return fuzzRequest{method: method, body: body, header: h, host: headerValue(pick(dimHost)), local: local}
}

// members is a JSON object under construction, its members in the order added.
type members []string

func (m *members) add(name, raw string) {
	if raw == absentValue {
		return
	}
	q, _ := json.Marshal(name)
	*m = append(*m, string(q)+":"+raw)
}

func (m members) object() string { return "{" + strings.Join(m, ",") + "}" }

// freeName is the name of an extra member: free, unless it is empty.
func freeName(free string) string {
	if free == "" {
		return "other"
	}
	return free
}

// headerValue is v, or "junk" if net/http would not send it.
func headerValue(v string) string {
	if strings.ContainsAny(v, "\r\n\x00") {
		return "junk"
	}
	return v
}

// answer is what a handler wrote: its status and headers at its first byte, and its body.
type answer struct {
	status int
	header http.Header
	body   string
}

// serveOnce serves req through h in process, as a client that hangs up after the first whole
// event of an event stream.
func serveOnce(t *testing.T, h http.Handler, req fuzzRequest) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, req.local)
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(req.body))
	r.Header = req.header.Clone()
	r.Host = req.host
	r.RemoteAddr = "127.0.0.1:50000"
	w := &firstEventWriter{header: http.Header{}, hangUp: cancel}
	h.ServeHTTP(w, r)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("no whole answer in 10 s: %d %s\nrequest: %s", w.status, w.body.String(), req.body)
	}
	return answer{w.status, w.sent, w.body.String()}
}

// firstEventWriter is a ResponseWriter that keeps the headers as they were at the first byte,
// and hangs up once an event stream holds a whole event.
type firstEventWriter struct {
	header, sent http.Header
	status       int
	body         bytes.Buffer
	hangUp       func()
}

func (w *firstEventWriter) Header() http.Header { return w.header }

func (w *firstEventWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status, w.sent = status, w.header.Clone()
	}
}

func (w *firstEventWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body.Write(b)
	if w.sent.Get("Content-Type") == "text/event-stream" && strings.Contains(w.body.String(), "\n\n") {
		w.hangUp()
	}
	return len(b), nil
}

func (w *firstEventWriter) Flush() { w.WriteHeader(http.StatusOK) }

// listenOfTaskgate is the one deliberate difference: the fast path is taskgate's only server of
// subscriptions/listen (listen.go), which follows the tasks a listener names; go-sdk alone answers
// a listen with its own, which follows none. A listen the fast path leaves to go-sdk is compared.
func listenOfTaskgate(req fuzzRequest, fastServed bool) bool {
	return req.method == "subscriptions/listen" && fastServed
}

// differences says how got differs from want, or "".
func differences(got, want answer) string {
	var diff []string
	if got.status != want.status {
		diff = append(diff, fmt.Sprintf("status %d, go-sdk %d", got.status, want.status))
	}
	g, w := comparedHeaders(got.header), comparedHeaders(want.header)
	if !reflect.DeepEqual(g, w) {
		diff = append(diff, fmt.Sprintf("headers %v, go-sdk %v", g, w))
	}
	gb, wb := parsedBody(got), parsedBody(want)
	if !reflect.DeepEqual(gb, wb) {
		diff = append(diff, fmt.Sprintf("body\n%s\ngo-sdk's\n%s", got.body, want.body))
	}
	return strings.Join(diff, "; ")
}

func comparedHeaders(h http.Header) http.Header {
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del("Content-Length")
	h.Del("Date")
	return h
}

// parsedBody is the body as compared: JSON parsed, an event stream's first event with its data
// parsed, or else the text; task ids and times masked (fresh).
func parsedBody(a answer) any {
	body := fresh.ReplaceAllString(a.body, "X")
	switch a.header.Get("Content-Type") {
	case "application/json":
		return parsedJSON(body)
	case "text/event-stream":
		event := map[string]any{}
		first, _, _ := strings.Cut(body, "\n\n")
		for line := range strings.SplitSeq(first, "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			if field == "data" {
				event[field] = parsedJSON(value)
			} else {
				event[field] = value
			}
		}
		return event
	}
	return body
}

// parsedJSON is text parsed, numbers as written; or text if it is not JSON.
func parsedJSON(text string) any {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return text
	}
	return v
}

// firstEventData is the data of the first event of body.
func firstEventData(body string) []byte {
	_, data, _ := strings.Cut(body, "data: ")
	data, _, _ = strings.Cut(data, "\n")
	return []byte(data)
}

type fastPathSeed struct {
	choices []byte
	free    string
}

// fastPathSeeds are a plain modern poll with each option of each dimension in turn (the shapes of
// TestFastPathAnswersAsGoSDK's tables are among them); a plain start, legacy poll and listen, each
// with each option of the dimensions of its own params (TestFastStartAnswersAsGoSDK's); and the
// tables' bodies that no choice spells. Few enough that the fuzzer's first pass over them fits
// in scripts/fuzz's 10 s.
func fastPathSeeds() []fastPathSeed {
	modernPoll, legacyPoll, modernStart, listen := make([]byte, dimensions), make([]byte, dimensions), make([]byte, dimensions), make([]byte, dimensions)
	legacyPoll[dimVersion], legacyPoll[dimMeta] = 1, 1
	modernStart[dimMethod] = 1
	listen[dimMethod] = 2
	opts := options("x")
	var seeds []fastPathSeed
	vary := func(base []byte, dims ...int) {
		seeds = append(seeds, fastPathSeed{base, "x"})
		for _, d := range dims {
			for o := 1; o < len(opts[d]); o++ {
				c := bytes.Clone(base)
				c[d] = byte(o)
				seeds = append(seeds, fastPathSeed{c, "x"})
			}
		}
	}
	vary(modernPoll, dimMethod, dimParams, dimMeta, dimTaskID, dimID, dimVersion, dimMcpMethod, dimMcpName, dimAccept, dimContentType, dimHost)
	for flag := byte(1); flag < 1<<6; flag <<= 1 {
		c := bytes.Clone(modernPoll)
		c[dimFlags] = flag
		seeds = append(seeds, fastPathSeed{c, "x"})
	}
	vary(legacyPoll, dimID)
	vary(modernStart, dimTool, dimArguments, dimMcpName)
	vary(listen, dimNotifications)
	raw := make([]byte, dimensions)
	raw[dimFlags] = flagRaw
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"<a\u0026b>\u00e9\"","method":"tasks/get","params":{"taskId":"` + taskPlace + `","_meta":` + modernMeta + `}}`,
		taskGetBody(1, taskPlace, `{"pad":"`+strings.Repeat("x", 2000)+`"}`),
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"task\u0049d":"` + taskPlace + `","_meta":` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","arguments":{},"requestState":"x","_meta":` + modernMeta + `}}`,
	} {
		seeds = append(seeds, fastPathSeed{raw, body})
	}
	return seeds
}
