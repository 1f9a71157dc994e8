package instrument

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/adapters/pace"
)

func TestResultOf(t *testing.T) {
	for err, want := range map[error]string{
		nil:              "ok",
		context.Canceled: "cancelled",
		fmt.Errorf("x: %w", context.DeadlineExceeded):          "cancelled",
		fmt.Errorf("x: %w", adapters.ErrNotFound):              "not_found",
		fmt.Errorf("x: %w", adapters.ErrNotEnded):              "not_ended",
		fmt.Errorf("x: %w", adapters.ErrEnded):                 "ended",
		adapters.ErrKeyConflict:                                "key_conflict",
		adapters.ErrInvalid:                                    "invalid",
		fmt.Errorf("%w: refused", adapters.ErrUnavailable):     "unavailable",
		fmt.Errorf("%w: rate exceeded", adapters.ErrThrottled): "throttled",
		&adapters.Throttle{RetryAfter: time.Second}:            "throttled",
		errors.New("something else"):                           "error",
	} {
		if got := resultNames[resultOf(err)]; got != want {
			t.Errorf("resultOf(%v) = %s, want %s", err, got, want)
		}
	}
}

// starts records the requests of the starts it passes to the in-memory engine.
type starts struct {
	adapters.Conn
	reqs []adapters.StartRequest
}

func (s *starts) Start(ctx context.Context, t adapters.Target, req adapters.StartRequest) (adapters.Ref, error) {
	s.reqs = append(s.reqs, req)
	return s.Conn.Start(ctx, t, req)
}

// A caller's trace context reaches the engine even when taskgate makes no spans of its own.
func TestStartCarriesTheCallersTraceWithoutTracing(t *testing.T) {
	mem := memengine.New(memengine.Options{})
	defer mem.Close()
	inner := &starts{Conn: mem}
	e := adapters.NewEngine(inner, adapters.EngineOptions{Hooks: []adapters.Hook{
		Hook("mem", NewMetrics(prometheus.NewRegistry()), nil, propagation.TraceContext{})}})
	target := memengine.Job(memengine.Echo, 0)
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	caller := trace.ContextWithRemoteSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true}))
	for _, ctx := range []context.Context{caller, context.Background()} {
		if _, err := e.Start(ctx, target, adapters.StartRequest{Input: []byte(`{"seconds":0,"text":"t"}`)}, pace.Pace{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := inner.reqs[0].Trace["traceparent"]; got != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Errorf("the start's traceparent: %q", got)
	}
	if inner.reqs[1].Trace != nil {
		t.Errorf("a start without trace context carried %v", inner.reqs[1].Trace)
	}
}
