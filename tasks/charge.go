package tasks

import (
	"context"
	"sync/atomic"

	"github.com/taskgate/taskgate/adapters"
)

// Engine work is charged to whoever causes it: each engine call a request makes after its first
// is paid for by the request's transport (Charging), so that a request that costs the engine N
// calls (a client key looked up across N tools, a listing over many pages) costs its caller N
// requests' worth. The request's admission paid for its first call.

type chargeKey struct{}

// charge is what one request's engine calls are billed to.
type charge struct {
	pay func()
	// paid is spent by the first engine call.
	paid atomic.Bool
}

// Charging is ctx with each engine call of its request after the first paid for by pay (a token
// of its caller's rate, say).
func Charging(ctx context.Context, pay func()) context.Context {
	c := &charge{pay: pay}
	c.paid.Store(true)
	return context.WithValue(ctx, chargeKey{}, c)
}

// bill charges one engine call to ctx's request.
func bill(ctx context.Context) {
	c, _ := ctx.Value(chargeKey{}).(*charge)
	if c == nil || c.paid.CompareAndSwap(true, false) {
		return
	}
	c.pay()
}

// billed bills every call of an engine to the request that makes it. It sits below the shortcuts
// (package coalesce): a read they answer makes no engine call and costs nothing. Check is left
// out: only the service itself checks targets.
type billed struct{ adapters.Engine }

func (e billed) Start(ctx context.Context, t adapters.Target, r adapters.StartRequest) (adapters.Ref, error) {
	bill(ctx)
	return e.Engine.Start(ctx, t, r)
}

func (e billed) Describe(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Status, error) {
	bill(ctx)
	return e.Engine.Describe(ctx, t, r)
}

func (e billed) Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	bill(ctx)
	return e.Engine.Outcome(ctx, t, r)
}

func (e billed) Wait(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	bill(ctx)
	return e.Engine.Wait(ctx, t, r)
}

func (e billed) Run(ctx context.Context, t adapters.Target, r adapters.StartRequest) (adapters.Ref, adapters.Outcome, error) {
	bill(ctx)
	return e.Engine.Run(ctx, t, r)
}

func (e billed) List(ctx context.Context, t adapters.Target, caller, page string, limit int) ([]adapters.Listed, string, error) {
	bill(ctx)
	return e.Engine.List(ctx, t, caller, page, limit)
}

func (e billed) Cancel(ctx context.Context, t adapters.Target, r adapters.Ref, reason string) error {
	bill(ctx)
	return e.Engine.Cancel(ctx, t, r, reason)
}

func (e billed) Answer(ctx context.Context, t adapters.Target, r adapters.Ref, key string, a adapters.Answer) error {
	bill(ctx)
	return e.Engine.Answer(ctx, t, r, key, a)
}
