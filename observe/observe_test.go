package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/observe"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/drift"
	"github.com/taskgate/taskgate/tasks/token"
)

const ext = "io.modelcontextprotocol/tasks"

var workerOnce sync.Once

// startWorker runs the example worker on the examples' task queue, once for the package.
func startWorker(t *testing.T, addr string) {
	workerOnce.Do(func() {
		we, err := temporal.New(context.Background(), temporal.Config{Address: addr, Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		w := worker.New(testenv.As[client.Client](t, we), temporalexamples.TaskQueue, worker.Options{})
		temporalexamples.Register(w)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
	})
}

// served is taskgate as serve wires it: the engine measured under the server, the telemetry its
// observer, /mcp and /metrics on one HTTP server.
type served struct {
	url     string // of /mcp
	metrics string
	srv     *mcpserver.Server
	engine  adapters.Conn
	tokens  token.Codec
	drift   *drift.Monitor
}

func serve(t *testing.T, tel *observe.Telemetry, addr string, files ...string) *served {
	t.Helper()
	t.Setenv("TEMPORAL_ADDRESS", addr)
	set, err := mapping.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := temporal.New(context.Background(), temporal.Config{Address: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	keys, _ := token.ParseKeys(token.NewKey("t1"))
	sealed, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Tokens: sealed, Observer: tel, Hooks: tel.EngineHooks,
		Engines: map[string]adapters.Conn{"local-temporal": eng}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Tasks: svc, Observer: tel, Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	tel.Watch(svc)
	mon := drift.NewMonitor(drift.NewChecker(svc, 5), time.Hour, nil)
	tel.WatchDrift(mon.Answers)
	mux := http.NewServeMux()
	mux.Handle("/mcp", tel.HTTP(srv.HTTPHandler()))
	mux.Handle("/metrics", tel.Metrics())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return &served{url: hs.URL + "/mcp", metrics: hs.URL + "/metrics", srv: srv, engine: eng, tokens: sealed, drift: mon}
}

// scrape reads /metrics: each series by name and labels ("name{a=x,b=y}"), counters and
// histogram counts as numbers.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// sum adds the series of a name whose labels include every one of with.
func sum(series map[string]float64, name string, with ...string) float64 {
	var total float64
	for k, v := range series {
		if !strings.HasPrefix(k, name+"{") {
			continue
		}
		labels := "," + strings.TrimSuffix(strings.TrimPrefix(k, name+"{"), "}") + ","
		match := true
		for _, w := range with {
			match = match && strings.Contains(labels, ","+w+",")
		}
		if match {
			total += v
		}
	}
	return total
}

// TestMetricsCountAScriptedSession runs a known session (tasks that succeed, fail and are
// cancelled, a call that waits, an unknown id, an ended task read again) and checks each series
// against what the session did.
func TestMetricsCountAScriptedSession(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	startWorker(t, addr)
	var logs bytes.Buffer
	log, _ := observe.NewLogger(&logs, "debug", "json")
	tel := observe.New(observe.Options{Registry: prometheus.NewRegistry(), Log: log})
	s := serve(t, tel, addr, "../examples/temporal/tools.yaml")
	c := rpctest.Modern(rpctest.HTTP{URL: s.url}, ext)
	requests := 0
	do := func(method string, params map[string]any) (json.RawMessage, *rpctest.Error) {
		requests++
		return c.Call(t, method, params)
	}
	start := func(tool string, args map[string]any) string {
		raw, rerr := do("tools/call", map[string]any{"name": tool, "arguments": args})
		var task struct {
			TaskID string `json:"taskId"`
		}
		if rerr != nil || json.Unmarshal(raw, &task) != nil || task.TaskID == "" {
			t.Fatalf("tools/call %s: %s %v", tool, raw, rerr)
		}
		return task.TaskID
	}
	polls := 0
	poll := func(id, want string) {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			polls++
			raw, rerr := do("tasks/get", map[string]any{"taskId": id})
			if rerr != nil {
				t.Fatalf("tasks/get: %v", rerr)
			}
			var task struct{ Status string }
			json.Unmarshal(raw, &task)
			if task.Status == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("task still %s after 30s, want %s", task.Status, want)
			}
		}
	}

	echo := start("wait_and_echo", map[string]any{"seconds": 0.5, "text": "counted"})
	fail := start("wait_and_fail", map[string]any{"seconds": 0.5, "reason": "on purpose"})
	long := start("wait_and_echo", map[string]any{"seconds": 3600, "text": "never"})
	if _, rerr := do("tasks/cancel", map[string]any{"taskId": long}); rerr != nil {
		t.Fatal(rerr)
	}
	poll(echo, "completed")
	poll(fail, "completed") // a tool error is a completed task in the extension
	poll(long, "cancelled")
	poll(echo, "completed") // again: from what this process keeps
	if raw, rerr := do("tools/call", map[string]any{"name": "quick_echo", "arguments": map[string]any{"text": "now"}}); rerr != nil || !strings.Contains(string(raw), "now") {
		t.Fatalf("quick_echo: %s %v", raw, rerr)
	}
	if _, rerr := do("tasks/get", map[string]any{"taskId": "no-such-task"}); rerr == nil || rerr.Code != -32602 {
		t.Fatalf("tasks/get of an unknown id: %v", rerr)
	}
	if _, rerr := do("tools/list", nil); rerr != nil {
		t.Fatal(rerr)
	}

	tel.Retried("local-temporal") // Temporal's client does not retry on its own: the series at 0
	m := scrape(t, s.metrics)
	for _, want := range []struct {
		name   string
		labels []string
		value  float64
	}{
		{"taskgate_tasks_started_total", []string{"tool=wait_and_echo"}, 2},
		{"taskgate_tasks_started_total", []string{"tool=wait_and_fail"}, 1},
		{"taskgate_tasks_started_total", []string{"tool=quick_echo"}, 1},
		{"taskgate_tasks_ended_total", []string{"tool=wait_and_echo", "state=succeeded"}, 1},
		{"taskgate_tasks_ended_total", []string{"tool=wait_and_echo", "state=cancelled"}, 1},
		{"taskgate_tasks_ended_total", []string{"tool=wait_and_fail", "state=failed"}, 1},
		{"taskgate_tasks_ended_total", []string{"tool=quick_echo", "state=succeeded"}, 1},
		{"taskgate_tasks_ended_total", nil, 4},
		{"taskgate_request_duration_seconds", []string{"method=tools/call", "dialect=extension", "outcome=ok"}, 4},
		{"taskgate_request_duration_seconds", []string{"method=tasks/get", "dialect=extension", "outcome=ok"}, float64(polls)},
		{"taskgate_request_duration_seconds", []string{"method=tasks/get", "dialect=extension", "outcome=invalid_params"}, 1},
		{"taskgate_request_duration_seconds", []string{"method=tasks/cancel", "dialect=extension", "outcome=ok"}, 1},
		{"taskgate_request_duration_seconds", []string{"method=tools/list", "dialect=extension", "outcome=ok"}, 1},
		{"taskgate_request_duration_seconds", nil, float64(requests)},
		// go-sdk answers -32602 with HTTP 400 on 2026-07-28.
		{"taskgate_http_responses_total", []string{"code=200"}, float64(requests - 1)},
		{"taskgate_http_responses_total", []string{"code=400"}, 1},
		// quick_echo, which waits for its result, starts and reads like a task (its target is no
		// Express state machine: the engine has no Run of its own for it).
		{"taskgate_engine_call_duration_seconds", []string{"operation=start", "result=ok"}, 4},
		{"taskgate_engine_call_duration_seconds", []string{"operation=run"}, 0},
		{"taskgate_engine_call_duration_seconds", []string{"operation=cancel", "result=ok"}, 1},
		{"taskgate_engine_call_duration_seconds", []string{"operation=outcome"}, 3},
		// The outcomes of the succeeded and failed tasks and of quick_echo, once each.
		{"taskgate_engine_reads_total", []string{"operation=outcome", "served=engine"}, 3},
	} {
		if got := sum(m, want.name, want.labels...); got != want.value {
			t.Errorf("%s%v = %v, want %v", want.name, want.labels, got, want.value)
		}
	}
	// Echo's second end was kept; and a sweep that confirms an end first (by its outcome) leaves
	// the reads after it to be answered from what it kept.
	for _, op := range []string{"operation=outcome", "operation=describe"} {
		if got := sum(m, "taskgate_engine_reads_total", op, "served=cached"); got < 1 || got > 4 {
			t.Errorf("taskgate_engine_reads_total[%s served=cached] = %v, want 1 to 4", op, got)
		}
	}
	// Every poll read one status, and quick_echo's wait a few (its start, then one a second); an
	// unknown id reaches no engine.
	if got := sum(m, "taskgate_engine_reads_total", "operation=describe"); got < float64(polls+1) || got > float64(polls+5) {
		t.Errorf("taskgate_engine_reads_total[operation=describe] = %v, want the %d polls' and 1 to 5 of quick_echo's wait", got, polls)
	}
	// The kept outcomes and readings are counted, within the default bound.
	if held := sum(m, "taskgate_engine_cache_bytes", "engine=local-temporal"); held <= 0 || held > tasks.DefaultCacheBytes {
		t.Errorf("taskgate_engine_cache_bytes = %v, want above 0 (an outcome is kept) and within %d", held, tasks.DefaultCacheBytes)
	}
	// The read budget is Temporal's default, and spent one token per read that reached the engine,
	// the sweeps' pages of the running tasks included (Temporal has no sweep bucket of its own).
	if b := sum(m, "taskgate_engine_read_budget", "engine=local-temporal"); b != 200 {
		t.Errorf("taskgate_engine_read_budget = %v, want Temporal's default, 200", b)
	}
	reads := sum(m, "taskgate_engine_call_duration_seconds", "operation=describe") + sum(m, "taskgate_engine_call_duration_seconds", "operation=outcome") +
		sum(m, "taskgate_engine_call_duration_seconds", "operation=sweep")
	if spent := sum(m, "taskgate_engine_read_tokens_total"); spent != reads || sum(m, "taskgate_engine_read_refusals_total") != 0 || sum(m, "taskgate_engine_throttles_total") != 0 {
		t.Errorf("%v tokens spent, %v refused, %v throttled, for %v reads that reached the engine: want as many tokens, none refused or throttled",
			spent, sum(m, "taskgate_engine_read_refusals_total"), sum(m, "taskgate_engine_throttles_total"), reads)
	}
	// The engine saw exactly the describes that no shortcut answered.
	if calls, reads := sum(m, "taskgate_engine_call_duration_seconds", "operation=describe"), sum(m, "taskgate_engine_reads_total", "operation=describe", "served=engine"); calls != reads || calls == 0 {
		t.Errorf("%v describe calls reached the engine, but %v reads were served by one", calls, reads)
	}
	// A drift check reports each tool's state, and spends the read budget without a refusal.
	s.drift.CheckNow(t.Context())
	after := scrape(t, s.metrics)
	dashboardNamesSeries(t, after)
	if got, checked := sum(after, "taskgate_tool_drift", "check=target", "tool=wait_and_echo"), sum(after, "taskgate_tool_drift_checked_timestamp_seconds", "check=target", "tool=wait_and_echo"); got != 0 || checked < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("taskgate_tool_drift of wait_and_echo's target = %v, checked at %v; want 0 (the example worker polls its queue), just now", got, checked)
	}
	if spent := sum(after, "taskgate_engine_read_tokens_total") - sum(m, "taskgate_engine_read_tokens_total"); spent <= 0 || sum(after, "taskgate_engine_read_refusals_total") != 0 {
		t.Errorf("a drift check spent %v tokens, with %v refusals; want some, and none", spent, sum(after, "taskgate_engine_read_refusals_total"))
	}
	t.Logf("%d requests, %d polls; describes: %v engine, %v shared, %v fresh, %v cached", requests, polls,
		sum(m, "taskgate_engine_reads_total", "operation=describe", "served=engine"), sum(m, "taskgate_engine_reads_total", "operation=describe", "served=shared"),
		sum(m, "taskgate_engine_reads_total", "operation=describe", "served=fresh"), sum(m, "taskgate_engine_reads_total", "operation=describe", "served=cached"))

	// One log line per request, with the execution and never a task id; a poll answered ok is
	// logged at debug, every other request at info.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != requests {
		t.Errorf("%d log lines for %d requests", len(lines), requests)
	}
	for _, line := range lines {
		var l struct{ Level, Method, Outcome string }
		json.Unmarshal([]byte(line), &l)
		if want := map[bool]string{true: "DEBUG", false: "INFO"}[l.Method == "tasks/get" && l.Outcome == "ok"]; l.Level != want {
			t.Errorf("a %s request answered %s is logged at %s, want %s", l.Method, l.Outcome, l.Level, want)
		}
	}
	for _, id := range []string{echo, fail, long} {
		if strings.Contains(logs.String(), id) {
			t.Fatalf("a task id is in the log: %s", id)
		}
	}
	// The first start's line; the fast path writes a line after its answer, so another request's
	// may come first.
	var first struct {
		Msg, Method, Dialect, Tool, Engine, Execution, Outcome string
		Latency                                                int64
	}
	ref, _ := s.tokens.Open(echo, time.Now())
	line := ""
	for _, l := range lines {
		if json.Unmarshal([]byte(l), &first) == nil && first.Method == "tools/call" && first.Execution == ref.Ref.String() {
			line = l
			break
		}
	}
	if first.Msg != "request" || first.Method != "tools/call" || first.Dialect != "extension" || first.Tool != "wait_and_echo" ||
		first.Engine != "local-temporal" || first.Execution != ref.Ref.String() || first.Outcome != "ok" || first.Latency <= 0 {
		t.Errorf("the first start's line: %q, in:\n%s", line, logs.String())
	}
}

// Every label value comes from a bounded set: unknown methods and tools read as such.
func TestLabelsStayBounded(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	tel := observe.New(observe.Options{Registry: prometheus.NewRegistry()})
	s := serve(t, tel, addr, "../examples/temporal/tools.yaml")
	c := rpctest.Modern(rpctest.HTTP{URL: s.url}, ext)
	for i := range 3 {
		c.Call(t, fmt.Sprintf("made/up/%d", i), nil)
		c.Call(t, "tools/call", map[string]any{"name": fmt.Sprintf("tool%d", i), "arguments": map[string]any{}})
	}
	m := scrape(t, s.metrics)
	for k := range m {
		if strings.Contains(k, "made/up") || strings.Contains(k, "tool0") {
			t.Errorf("a client's own word became a label: %s", k)
		}
	}
	if got := sum(m, "taskgate_request_duration_seconds", "method=tools/call", "outcome=invalid_params"); got != 3 {
		t.Errorf("calls of unknown tools: %v, want 3", got)
	}
}

// dashboardNamesSeries checks that the Grafana dashboard and docs/operations.md name only series
// that exist, and that docs/operations.md names every one.
func dashboardNamesSeries(t *testing.T, scraped map[string]float64) {
	t.Helper()
	families := map[string]bool{}
	for k := range scraped {
		if name, _, _ := strings.Cut(k, "{"); strings.HasPrefix(name, "taskgate_") {
			families[name] = true
		}
	}
	named := regexp.MustCompile(`taskgate_[a-z_]+`)
	for _, file := range []string{"../docs/grafana/taskgate.json", "../docs/operations.md"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		mentioned := map[string]bool{}
		for _, name := range named.FindAllString(string(src), -1) {
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if base := strings.TrimSuffix(name, suffix); families[base] {
					name = base
				}
			}
			if !families[name] {
				t.Errorf("%s names %s, which taskgate does not export", file, name)
			}
			mentioned[name] = true
		}
		for name := range families {
			if !mentioned[name] && strings.HasSuffix(file, ".md") {
				t.Errorf("%s does not name the series %s", file, name)
			}
		}
	}
}
