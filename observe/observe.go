// Package observe is what taskgate tells its operators: Prometheus metrics, OpenTelemetry traces
// and a log line per request (Telemetry, an mcpserver.Observer and a tasks.Observer), the engines
// measured and traced (adapters/instrument, stacked by the task service: tasks.Config.Hooks),
// and readiness (Readiness). Nothing it records or exports carries a task id or a credential, and
// every metric label takes one of few values.
package observe

import (
	"context"
	"log/slog"
	"net/http"
	"net/textproto"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/instrument"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
)

// Propagation is how trace context travels: W3C Trace Context and Baggage, the fields that
// Temporal's OpenTelemetry interceptor reads by default.
var Propagation = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Options are what a Telemetry reports to.
type Options struct {
	// Registry gets the metrics. Default: a new registry with the Go runtime and process
	// collectors.
	Registry *prometheus.Registry
	// Tracer makes spans; nil traces nothing (trace context from callers still reaches the
	// engines).
	Tracer trace.TracerProvider
	// Log gets one line per request, at Info. Default: none.
	Log *slog.Logger
}

// Telemetry reports what one taskgate process does. Its methods are safe for concurrent use.
type Telemetry struct {
	registry *prometheus.Registry
	// tracer and engineTracer are nil when not tracing.
	tracer, engineTracer trace.Tracer
	log                  *slog.Logger
	engines              *instrument.Metrics
	requests             series[[3]string, prometheus.Observer]
	responses            series[int, prometheus.Counter]
	started              *prometheus.CounterVec
	ended                *prometheus.CounterVec
}

var (
	_ mcpserver.Observer = (*Telemetry)(nil)
	_ tasks.Observer     = (*Telemetry)(nil)
)

// New registers taskgate's series with o.Registry.
func New(o Options) *Telemetry {
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
		o.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	t := &Telemetry{registry: o.Registry, log: o.Log, engines: instrument.NewMetrics(o.Registry)}
	if o.Tracer != nil {
		t.tracer = o.Tracer.Tracer("github.com/taskgate/taskgate/mcpserver")
		t.engineTracer = o.Tracer.Tracer("github.com/taskgate/taskgate/adapters/instrument")
	}
	requests := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "taskgate_request_duration_seconds",
		Help:    "Latency of the MCP requests taskgate answered, by method, task dialect and outcome.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"method", "dialect", "outcome"})
	responses := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "taskgate_http_responses_total",
		Help: "HTTP responses on the MCP endpoint by status code, including the requests refused before MCP (401, 403, 413, 429, 503).",
	}, []string{"code"})
	t.started = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "taskgate_tasks_started_total",
		Help: "Executions this process started, by tool (a repeated idempotency key counts again).",
	}, []string{"tool"})
	t.ended = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "taskgate_tasks_ended_total",
		Help: "Executions this process read as ended for the first time, by tool and state (succeeded, failed, cancelled); each replica that reads an end counts it.",
	}, []string{"tool", "state"})
	o.Registry.MustRegister(requests, responses, t.started, t.ended)
	t.requests.make = func(k [3]string) prometheus.Observer { return requests.WithLabelValues(k[0], k[1], k[2]) }
	t.responses.make = func(code int) prometheus.Counter { return responses.WithLabelValues(strconv.Itoa(code)) }
	return t
}

// series are the series of a metric by their labels, made once: a lookup allocates nothing.
type series[K comparable, V any] struct {
	mu   sync.RWMutex
	m    map[K]V
	make func(K) V
}

func (s *series[K, V]) get(k K) V {
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok = s.m[k]; !ok {
		if s.m == nil {
			s.m = map[K]V{}
		}
		v = s.make(k)
		s.m[k] = v
	}
	return v
}

// Engine is the hook that measures the engine block called name, and traces it when tracing.
func (t *Telemetry) Engine(name string) adapters.Hook {
	return instrument.Hook(name, t.engines, t.engineTracer, Propagation)
}

// EngineHooks are the tasks.Config.Hooks of the engine blocks: Engine's.
func (t *Telemetry) EngineHooks(name string) []adapters.Hook { return []adapters.Hook{t.Engine(name)} }

// Retried returns the adapters.OpenOptions.Retried of the engine block called name.
func (t *Telemetry) Retried(name string) func(throttled bool) { return t.engines.Retried(name) }

// Watch also reports the reads the engines of svc served, by how (taskgate_engine_reads_total),
// what their read budgets did (taskgate_engine_read_*, taskgate_engine_throttles_total), and the
// bytes their caches hold (taskgate_engine_cache_bytes).
func (t *Telemetry) Watch(svc *tasks.Service) {
	t.registry.MustRegister(readsCollector{svc.Reads}, budgetCollector{svc.Budgets}, cacheCollector{svc.CacheBytes}, sweepsCollector{svc.Sweeps})
}

// Metrics serves the metrics in Prometheus's text format.
func (t *Telemetry) Metrics() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// Request starts the request's span when tracing.
func (t *Telemetry) Request(ctx context.Context, r *mcpserver.Request) context.Context {
	if t.tracer == nil {
		return ctx
	}
	ctx, _ = t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("mcp.method.name", r.Method)))
	return ctx
}

// Answered counts the request, ends its span and logs its line.
func (t *Telemetry) Answered(ctx context.Context, r *mcpserver.Request) {
	t.requests.get([3]string{r.Method, r.Dialect, r.Outcome}).Observe(r.Duration.Seconds())
	span := trace.SpanFromContext(ctx)
	if t.tracer != nil {
		span.SetAttributes(attribute.String("taskgate.dialect", r.Dialect), attribute.String("gen_ai.tool.name", r.Tool),
			attribute.String("taskgate.engine", r.Engine), attribute.String("taskgate.outcome", r.Outcome))
		if r.Code != 0 {
			span.SetAttributes(attribute.Int64("rpc.jsonrpc.error_code", r.Code))
		}
		if r.Outcome != "ok" && r.Outcome != "tool_error" {
			span.SetStatus(codes.Error, r.Outcome)
		}
		span.End()
	}
	level := slog.LevelInfo
	if isPoll(r.Method) && r.Outcome == "ok" {
		level = slog.LevelDebug
	}
	if !t.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("dialect", r.Dialect), slog.String("tool", r.Tool),
		slog.String("engine", r.Engine), slog.String("execution", r.Execution.String()), slog.Duration("latency", r.Duration),
		slog.String("outcome", r.Outcome)}
	if r.Code != 0 {
		attrs = append(attrs, slog.Int64("code", r.Code))
	}
	if sc := span.SpanContext(); sc.IsValid() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
	}
	t.log.LogAttrs(ctx, level, "request", attrs...)
}

// isPoll reports whether method asks a task's status: a client sends one every few seconds per
// task, so a line each at info would outweigh every other line of a busy server (2,845 polls a
// second in the fleet bench: about 70 GB of logs a day).
func isPoll(method string) bool { return method == "tasks/get" || method == "tools/async/status" }

// Started counts a started execution.
func (t *Telemetry) Started(_ context.Context, tool string) { t.started.WithLabelValues(tool).Inc() }

// Ended counts an execution read as ended.
func (t *Telemetry) Ended(_ context.Context, tool string, s adapters.State) {
	t.ended.WithLabelValues(tool, s.String()).Inc()
}

// HTTP serves next with the caller's trace context (W3C traceparent and baggage headers), and
// counts its responses by status code.
func (t *Telemetry) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if carriesTrace(r.Header) {
			if ctx := Propagation.Extract(r.Context(), propagation.HeaderCarrier(r.Header)); ctx != r.Context() {
				r = r.WithContext(ctx)
			}
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		t.responses.get(sw.status).Inc()
	})
}

// traceHeaders are the headers Propagation reads, as net/http keys them.
var traceHeaders = func() []string {
	var keys []string
	for _, f := range Propagation.Fields() {
		keys = append(keys, textproto.CanonicalMIMEHeaderKey(f))
	}
	return keys
}()

// carriesTrace reports whether h has a header Propagation reads: a request without one (most)
// skips the extraction, which costs a poll several microseconds of key canonicalization.
func carriesTrace(h http.Header) bool {
	for _, k := range traceHeaders {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}

// statusWriter remembers the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
