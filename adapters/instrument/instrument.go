// Package instrument wraps an adapters.Engine so that every call that reaches the engine is
// measured (Prometheus: calls by engine, operation and result, with their latency) and, when a
// tracer is given, traced (an OpenTelemetry span per call), and so that a start carries the
// caller's trace context into the engine (adapters.StartRequest.Trace). Wrapped under
// adapters/coalesce, it sees the calls that really reach the engine, not the polls that a shared
// call or a cache answered.
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
//     outcome, wait (which lasts until the execution ends), run, list, cancel or answer; result is ok,
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

type op int

const (
	opCheck op = iota
	opStart
	opDescribe
	opOutcome
	opWait
	opRun
	opList
	opCancel
	opAnswer
	nOps
)

var opNames = [nOps]string{"check", "start", "describe", "outcome", "wait", "run", "list", "cancel", "answer"}

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

// Engine is the wrapped engine.
type Engine struct {
	adapters.Engine
	name       string
	metrics    *Metrics
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// series are the histogram's series of this engine, resolved on first use.
	series [nOps][nResults]atomic.Pointer[prometheus.Observer]
}

// Wrap measures the calls to e, the engine block called name. tracer, when not nil, makes a span
// of every call; propagator writes a start's trace context (the caller's span, or the start's
// own when tracing) into the StartRequest.
func Wrap(e adapters.Engine, name string, m *Metrics, tracer trace.Tracer, propagator propagation.TextMapPropagator) *Engine {
	return &Engine{Engine: e, name: name, metrics: m, tracer: tracer, propagator: propagator}
}

// call begins a call: a span when tracing. The func it returns ends it, with its error.
func (e *Engine) call(ctx context.Context, o op, t adapters.Target) (context.Context, func(error)) {
	start := time.Now()
	var span trace.Span
	if e.tracer != nil {
		ctx, span = e.tracer.Start(ctx, "engine "+opNames[o], trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("taskgate.engine", e.name), attribute.String("taskgate.engine.operation", opNames[o]),
				attribute.String("taskgate.target", t.Name)))
	}
	return ctx, func(err error) {
		r := resultOf(err)
		e.observer(o, r).Observe(time.Since(start).Seconds())
		if span != nil {
			span.SetAttributes(attribute.String("taskgate.result", resultNames[r]))
			if r != resOK {
				span.SetStatus(codes.Error, resultNames[r])
			}
			span.End()
		}
	}
}

func (e *Engine) observer(o op, r result) prometheus.Observer {
	p := &e.series[o][r]
	if h := p.Load(); h != nil {
		return *h
	}
	h := e.metrics.calls.WithLabelValues(e.name, opNames[o], resultNames[r])
	p.Store(&h)
	return h
}

// traced is req with the trace context of ctx, if it has one.
func (e *Engine) traced(ctx context.Context, req adapters.StartRequest) adapters.StartRequest {
	if e.propagator == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return req
	}
	carrier := propagation.MapCarrier{}
	e.propagator.Inject(ctx, carrier)
	if len(carrier) > 0 {
		req.Trace = carrier
	}
	return req
}

func (e *Engine) Check(ctx context.Context, t adapters.Target) (adapters.TargetInfo, error) {
	ctx, done := e.call(ctx, opCheck, t)
	info, err := e.Engine.Check(ctx, t)
	done(err)
	return info, err
}

func (e *Engine) Start(ctx context.Context, t adapters.Target, req adapters.StartRequest) (adapters.Ref, error) {
	ctx, done := e.call(ctx, opStart, t)
	r, err := e.Engine.Start(ctx, t, e.traced(ctx, req))
	done(err)
	return r, err
}

func (e *Engine) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	ctx, done := e.call(ctx, opDescribe, t)
	st, err := e.Engine.Describe(ctx, t, r)
	done(err)
	return st, err
}

func (e *Engine) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	ctx, done := e.call(ctx, opOutcome, t)
	o, err := e.Engine.Outcome(ctx, t, r)
	done(err)
	return o, err
}

func (e *Engine) Wait(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	ctx, done := e.call(ctx, opWait, t)
	o, err := e.Engine.Wait(ctx, t, r)
	done(err)
	return o, err
}

func (e *Engine) Run(ctx context.Context, t adapters.Target, req adapters.StartRequest) (adapters.Ref, adapters.Outcome, error) {
	ctx, done := e.call(ctx, opRun, t)
	r, o, err := e.Engine.Run(ctx, t, e.traced(ctx, req))
	done(err)
	return r, o, err
}

func (e *Engine) List(ctx context.Context, t adapters.Target, caller, page string, limit int) ([]adapters.Listed, string, error) {
	ctx, done := e.call(ctx, opList, t)
	l, next, err := e.Engine.List(ctx, t, caller, page, limit)
	done(err)
	return l, next, err
}

func (e *Engine) Cancel(ctx context.Context, t adapters.Target, r adapters.Ref, reason string) error {
	ctx, done := e.call(ctx, opCancel, t)
	err := e.Engine.Cancel(ctx, t, r, reason)
	done(err)
	return err
}

func (e *Engine) Answer(ctx context.Context, t adapters.Target, r adapters.Ref, key string, a adapters.Answer) error {
	ctx, done := e.call(ctx, opAnswer, t)
	err := e.Engine.Answer(ctx, t, r, key, a)
	done(err)
	return err
}
