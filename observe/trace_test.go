package observe_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/observe"
)

// tracedQueue is polled only by this test's worker, which traces with Temporal's OpenTelemetry
// interceptor.
const tracedQueue = "taskgate-observe-traced"

const tracedTools = `engines:
  local-temporal:
    temporal: {}
tools:
  - name: traced_summary
    description: SummarizeDataset on a queue whose worker traces.
    engine: local-temporal
    workflow: {type: SummarizeDataset, taskQueue: ` + tracedQueue + `}
    input: '{name, values, stepSeconds: 0}'
    inputSchema: {type: object}
`

// TestOneTraceFromTheAgentIntoTheActivities: an agent's tools/call, sent with a W3C traceparent,
// is one trace with taskgate's request span, its engine call, the workflow the call started (whose
// start header carries that call's span) and the workflow's activities, as the worker's
// OpenTelemetry interceptor records them.
func TestOneTraceFromTheAgentIntoTheActivities(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

	we, err := temporal.New(context.Background(), temporal.Config{Address: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer we.Close()
	tracing, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("worker")})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(testenv.As[client.Client](t, we), tracedQueue, worker.Options{Interceptors: []interceptor.WorkerInterceptor{tracing}})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	file := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(file, []byte(tracedTools), 0o600)
	tel := observe.New(observe.Options{Registry: prometheus.NewRegistry(), Tracer: tp})
	s := serve(t, tel, addr, file)

	const agentTrace, agentSpan = "5e0c63257de34c92bf9efcd03927272e", "0f57b4e0e5a7d6c1"
	agent := rpctest.Modern(rpctest.HTTP{URL: s.url, Header: map[string][]string{"Traceparent": {"00-" + agentTrace + "-" + agentSpan + "-01"}}}, ext)
	id := agent.Decode(t, "tools/call", map[string]any{"name": "traced_summary",
		"arguments": map[string]any{"name": "traced", "values": []float64{3, 1, 2}}})["taskId"].(string)
	poller := rpctest.Modern(rpctest.HTTP{URL: s.url}, ext)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if poller.Decode(t, "tasks/get", map[string]any{"taskId": id})["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the traced workflow did not complete in 30s")
		}
	}

	byName := func(name string) []tracetest.SpanStub {
		var found []tracetest.SpanStub
		for _, s := range spans.GetSpans() {
			if s.Name == name || strings.HasPrefix(s.Name, name+":") {
				found = append(found, s)
			}
		}
		return found
	}
	var call tracetest.SpanStub
	for _, s := range byName("tools/call") {
		if s.SpanContext.TraceID().String() == agentTrace {
			call = s
		}
	}
	if !call.SpanContext.IsValid() || call.Parent.SpanID().String() != agentSpan || call.SpanKind != trace.SpanKindServer {
		t.Fatalf("no server span of tools/call under the agent's span: %+v", call)
	}
	for _, a := range call.Attributes {
		if strings.Contains(a.Value.String(), id) {
			t.Errorf("the request span carries the task id in %s", a.Key)
		}
	}
	var start tracetest.SpanStub
	for _, s := range byName("engine start") {
		if s.Parent.SpanID() == call.SpanContext.SpanID() {
			start = s
		}
	}
	if start.SpanContext.TraceID() != call.SpanContext.TraceID() {
		t.Fatalf("no engine start span under the request's: %v", byName("engine start"))
	}

	// The workflow's start header holds the engine call's span, as the interceptor reads it.
	claims, _ := s.tokens.Open(id, time.Now())
	wf, run, _ := temporal.WorkflowOf(claims.Ref)
	history := testenv.As[client.Client](t, s.engine).GetWorkflowHistory(context.Background(), wf, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := history.Next()
	if err != nil {
		t.Fatal(err)
	}
	var carried map[string]string
	payload := first.GetWorkflowExecutionStartedEventAttributes().GetHeader().GetFields()["_tracer-data"]
	if err := converter.GetDefaultDataConverter().FromPayload(payload, &carried); err != nil {
		t.Fatalf("the start header's _tracer-data: %v", err)
	}
	if want := "00-" + agentTrace + "-" + start.SpanContext.SpanID().String() + "-01"; carried["traceparent"] != want {
		t.Errorf("the workflow's start header carries %v, want traceparent %s", carried, want)
	}

	// The worker's spans of the workflow and its three activities are in the agent's trace.
	var workflowSpans, activitySpans int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		workflowSpans, activitySpans = 0, 0
		for _, s := range byName("RunWorkflow") {
			if s.SpanContext.TraceID().String() == agentTrace {
				workflowSpans++
			}
		}
		for _, s := range byName("RunActivity") {
			if s.SpanContext.TraceID().String() == agentTrace {
				activitySpans++
			}
		}
		if workflowSpans >= 1 && activitySpans >= 3 {
			break
		}
	}
	if workflowSpans < 1 || activitySpans < 3 {
		names := []string{}
		for _, s := range spans.GetSpans() {
			names = append(names, s.Name+" "+s.SpanContext.TraceID().String())
		}
		t.Fatalf("in the agent's trace: %d workflow spans and %d activity spans, want 1 and 3; spans: %q", workflowSpans, activitySpans, names)
	}
	raw, _ := json.Marshal(carried)
	t.Logf("one trace %s: request span, engine start span, workflow header %s, %d workflow and %d activity spans", agentTrace, raw, workflowSpans, activitySpans)
}
