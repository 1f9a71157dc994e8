// Package instrument is an adapters.Hook that measures every call that reaches an engine
// (Prometheus: calls by engine, operation and result, with their latency) and, when a tracer is
// given, traces it (an OpenTelemetry span per call), and that makes a start carry the caller's
// trace context into the engine (adapters.StartRequest.Trace). As the last hook of an
// adapters.Engine, it sees the calls that really reach the engine, not the polls that a shared
// call or the readings answered, nor the reads a budget refused.
package instrument

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgate/taskgate/adapters"
)

// Metrics are the engine series of one Prometheus registry, shared by every wrapped engine.
type Metrics struct {
	calls   *prometheus.HistogramVec
	retries *prometheus.CounterVec
}

// NewMetrics registers the engine series with reg:
//
//   - taskgate_engine_call_duration_seconds{engine, operation, result}: the latency of each call
//     that reached the engine (its _count: the calls). operation is check, start, describe,
//     outcome, list, sweep, sample, cancel, answer or run (adapters.Op); result is ok,
//     not_found, not_ended, ended, key_conflict, invalid, throttled (the engine refused the call
//     for its rate), unavailable (unreachable, after the client's own retries), cancelled (the
//     caller gave up) or error.
//   - taskgate_engine_retries_total{engine, reason}: retries the engine's client made on its own
//     (the AWS SDK's), reason throttled or error.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "taskgate_engine_call_duration_seconds",
			Help:    "Latency of the calls that reached a workflow engine, by engine block, operation and result.",
			Buckets: []float64{.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"engine", "operation", "result"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskgate_engine_retries_total",
			Help: "Retries an engine's client made on its own (the AWS SDK's), by engine block and reason (throttled or error).",
		}, []string{"engine", "reason"}),
	}
	reg.MustRegister(m.calls, m.retries)
	return m
}

// Retried is the adapters.OpenOptions.Retried of the engine block named engine.
func (m *Metrics) Retried(engine string) func(throttled bool) {
	throttled, failed := m.retries.WithLabelValues(engine, "throttled"), m.retries.WithLabelValues(engine, "error")
	return func(t bool) {
		if t {
			throttled.Inc()
		} else {
			failed.Inc()
		}
	}
}

type result int

const (
	resOK result = iota
	resNotFound
	resNotEnded
	resEnded
	resKeyConflict
	resInvalid
	resThrottled
	resUnavailable
	resCancelled
	resError
	nResults
)

var resultNames = [nResults]string{"ok", "not_found", "not_ended", "ended", "key_conflict", "invalid", "throttled", "unavailable", "cancelled", "error"}

// resultOf classifies an engine call's error by the contract's sentinels.
func resultOf(err error) result {
	switch {
	case err == nil:
		return resOK
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return resCancelled
	case errors.Is(err, adapters.ErrNotFound):
		return resNotFound
	case errors.Is(err, adapters.ErrNotEnded):
		return resNotEnded
	case errors.Is(err, adapters.ErrEnded):
		return resEnded
	case errors.Is(err, adapters.ErrKeyConflict):
		return resKeyConflict
	case errors.Is(err, adapters.ErrInvalid):
		return resInvalid
	case errors.Is(err, adapters.ErrThrottled):
		return resThrottled
	case errors.Is(err, adapters.ErrUnavailable):
		return resUnavailable
	}
	return resError
}

// engine measures the calls of one engine block.
type engine struct {
	name       string
	metrics    *Metrics
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// series are the histogram's series of this engine, resolved on first use.
	series [adapters.NumOps][nResults]atomic.Pointer[prometheus.Observer]
}

// Hook measures the calls to the engine block called name. tracer, when not nil, makes a span of
// every call; propagator writes a start's trace context (the caller's span, or the start's own
// when tracing) into its StartRequest.
func Hook(name string, m *Metrics, tracer trace.Tracer, propagator propagation.TextMapPropagator) adapters.Hook {
	e := &engine{name: name, metrics: m, tracer: tracer, propagator: propagator}
	return e.call
}

// call begins a call: a span when tracing, and the start's trace context. The func it returns
// ends it, with its error.
func (e *engine) call(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
	start := time.Now()
	var span trace.Span
	if e.tracer != nil {
		ctx, span = e.tracer.Start(ctx, "engine "+c.Op.String(), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("taskgate.engine", e.name), attribute.String("taskgate.engine.operation", c.Op.String()),
				attribute.String("taskgate.target", c.Target.Name)))
	}
	if c.Request != nil {
		e.trace(ctx, c.Request)
	}
	return ctx, func(err error) error {
		r := resultOf(err)
		e.observer(c.Op, r).Observe(time.Since(start).Seconds())
		if span != nil {
			span.SetAttributes(attribute.String("taskgate.result", resultNames[r]))
			if r != resOK {
				span.SetStatus(codes.Error, resultNames[r])
			}
			span.End()
		}
		return err
	}, nil
}

func (e *engine) observer(o adapters.Op, r result) prometheus.Observer {
	p := &e.series[o][r]
	if h := p.Load(); h != nil {
		return *h
	}
	h := e.metrics.calls.WithLabelValues(e.name, o.String(), resultNames[r])
	p.Store(&h)
	return h
}

// trace writes the trace context of ctx, if it has one, into req.
func (e *engine) trace(ctx context.Context, req *adapters.StartRequest) {
	if e.propagator == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	carrier := propagation.MapCarrier{}
	e.propagator.Inject(ctx, carrier)
	if len(carrier) > 0 {
		req.Trace = carrier
	}
}
