package observe_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/observe"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const memTools = `engines:
  mem:
    memory: {}
tools:
  - name: echo
    description: Waits, then echoes.
    engine: mem
    job: {program: echo}
    inputSchema: {type: object}
`

// BenchmarkPoll is what the instrumentation costs a poll: tasks/get of a running task on the
// in-memory engine (so that the engine and the network add next to nothing), served in the process
// through the HTTP handler, with every poll reaching the engine (no freshness window). "bare" has
// no observer; "metrics" the observer, the engine measured and the per-request line logged (at a
// level that drops it, the default of none, and at info into a discarding handler); "traced" adds
// spans, exported to nowhere.
func BenchmarkPoll(b *testing.B) {
	discard := slog.New(slog.NewJSONHandler(io.Discard, nil))
	for _, c := range []struct {
		name string
		tel  func() *observe.Telemetry
	}{
		{"bare", nil},
		{"metrics", func() *observe.Telemetry { return observe.New(observe.Options{Registry: prometheus.NewRegistry()}) }},
		{"metrics+log", func() *observe.Telemetry {
			return observe.New(observe.Options{Registry: prometheus.NewRegistry(), Log: discard})
		}},
		{"metrics+log+traced", func() *observe.Telemetry {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
			return observe.New(observe.Options{Registry: prometheus.NewRegistry(), Log: discard, Tracer: tp})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			send := benchServer(b, c.tel)
			raw := send("tools/call", "echo", startBody)
			m := regexp.MustCompile(`"taskId":"([^"]+)"`).FindSubmatch(raw) // in an event stream
			if m == nil {
				b.Fatalf("tools/call: %s", raw)
			}
			poll := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"` + string(m[1]) + `",` + meta + `}}`
			id := string(m[1])
			if out := send("tasks/get", id, poll); !bytes.Contains(out, []byte(`"status":"working"`)) {
				b.Fatalf("tasks/get: %s", out)
			}
			b.ReportAllocs()
			for b.Loop() {
				send("tasks/get", id, poll)
			}
		})
	}
}

// meta is the _meta of a 2026-07-28 client with the tasks extension, and startBody its start of
// an hour-long echo.
const (
	meta      = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	startBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"seconds":3600,"text":"x"},` + meta + `}}`
)

// benchServer serves memTools on the in-memory engine in the process, observed by what observed
// makes (nil: not observed), and returns what sends one request to it and answers its body.
func benchServer(b *testing.B, observed func() *observe.Telemetry) func(method, name, body string) []byte {
	set, err := mapping.Parse("tools.yaml", []byte(memTools))
	if err != nil {
		b.Fatal(err)
	}
	e, err := set.Engines["mem"].Config.Open(b.Context(), adapters.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	keys, _ := token.ParseKeys(token.NewKey("b1"))
	sealed, _ := token.NewSealed(keys)
	tc := tasks.Config{Mapping: set, Tokens: sealed, Engines: map[string]adapters.Conn{"mem": e}, FreshFor: -1}
	cfg := mcpserver.Config{Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1}}
	var tel *observe.Telemetry
	if observed != nil {
		tel = observed()
		cfg.Observer, tc.Observer, tc.Hooks = tel, tel, tel.EngineHooks
	}
	svc, err := tasks.New(tc)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Tasks = svc
	srv, err := mcpserver.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	h := srv.HTTPHandler()
	if tel != nil {
		h = tel.HTTP(h)
	}
	send := func(method, name, body string) []byte {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(body)))
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Name", name)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Body.Bytes()
	}
	return send
}

// BenchmarkStart is what taskgate itself spends on a start: tools/call of a tool on the in-memory
// engine, served in the process through the HTTP handler, not observed.
func BenchmarkStart(b *testing.B) {
	send := benchServer(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		if out := send("tools/call", "echo", startBody); !bytes.Contains(out, []byte(`"taskId"`)) {
			b.Fatalf("tools/call: %s", out)
		}
	}
}

// BenchmarkInstrumentation isolates what a poll pays for being observed: the observer's calls
// around the request and the measured engine call ("observed"), against the bare engine call
// ("bare"), on the in-memory engine.
func BenchmarkInstrumentation(b *testing.B) {
	set, err := mapping.Parse("tools.yaml", []byte(memTools))
	if err != nil {
		b.Fatal(err)
	}
	tool, _ := set.Tool("echo")
	e, err := set.Engines["mem"].Config.Open(b.Context(), adapters.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ref, err := e.Start(b.Context(), tool.Target, adapters.StartRequest{Input: []byte(`{"seconds":3600,"text":"x"}`)})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Describe(b.Context(), tool.Target, ref)
		}
	})
	b.Run("observed", func(b *testing.B) {
		tel := observe.New(observe.Options{Registry: prometheus.NewRegistry()})
		measured := adapters.NewEngine(e, adapters.EngineOptions{Hooks: []adapters.Hook{tel.Engine("mem")}})
		b.ReportAllocs()
		for b.Loop() {
			rec := &mcpserver.Request{Method: "tasks/get", Dialect: "extension"}
			ctx := tel.Request(b.Context(), rec)
			measured.Describe(ctx, tool.Target, ref, pace.Pace{})
			rec.Outcome = "ok"
			tel.Answered(ctx, rec)
		}
	})
}
