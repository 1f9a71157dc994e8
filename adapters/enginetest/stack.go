package enginetest

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/budget"
	"github.com/taskgate/taskgate/adapters/coalesce"
	"github.com/taskgate/taskgate/adapters/instrument"
	"github.com/taskgate/taskgate/adapters/pace"
)

// Stack is c as taskgate serves it (package tasks builds the same per engine block): readings
// shared and reused (adapters/coalesce) over the driver's default read budget, when it has one,
// and its sweep budget (adapters/budget), over the instrumentation (adapters/instrument, on a registry of its own).
// The charge of each call to its caller is the task service's, and left out.
func Stack(c adapters.Conn, info adapters.DriverInfo) *adapters.Engine {
	o := coalesce.Options{Size: 1024, Fresh: 250 * time.Millisecond, VisibilityLag: adapters.VisibilityLagOf(c)}
	var hooks []adapters.Hook
	if !info.Budget.Unlimited() {
		b := budget.New(info.Budget, info.SweepBudget)
		hooks, o.Stretch = append(hooks, b.Hook), b.Stretch
	}
	hooks = append(hooks, instrument.Hook("conformance", instrument.NewMetrics(prometheus.NewRegistry()), nil, propagation.TraceContext{}))
	return adapters.NewEngine(c, adapters.EngineOptions{Hooks: hooks, Readings: coalesce.New(o)})
}

// suite is a Harness and the Stack over its Conn, which the tests read through.
type suite struct {
	Harness
	engine *adapters.Engine
}

// Engine is the Stack over the harness's Conn.
func (s *suite) Engine() *adapters.Engine { return s.engine }

// unpaced is an Engine read as a Conn, for checks that hold of both: with no task's pace, as a
// driver's own calls are made.
type unpaced struct{ *adapters.Engine }

func (u unpaced) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	return u.Engine.Describe(ctx, t, r, pace.Pace{})
}

func (u unpaced) Start(ctx context.Context, t adapters.Target, req adapters.StartRequest) (adapters.Ref, error) {
	return u.Engine.Start(ctx, t, req, pace.Pace{})
}
