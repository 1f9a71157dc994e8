package mcpserver

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/taskgate/taskgate/adapters"
)

// Engine work is charged to whoever causes it: each engine call a request makes takes one from
// its principal's rate, so that a request that costs the engine N calls (a client token looked up
// across N tools, a tasks/list over many pages) costs its principal N requests' worth, and its
// next requests wait until that is paid. The request's admission (rateLimits.allow) paid for its
// first call.

type chargeKey struct{}

// charge is what one request's engine calls are billed to.
type charge struct {
	bucket *rate.Limiter
	now    func() time.Time
	// paid is spent by the first engine call.
	paid atomic.Bool
}

// charged is ctx with its request's engine calls billed to bucket, nil for methods not limited.
func charged(ctx context.Context, bucket *rate.Limiter, now func() time.Time) context.Context {
	if bucket == nil {
		return ctx
	}
	c := &charge{bucket: bucket, now: now}
	c.paid.Store(true)
	return context.WithValue(ctx, chargeKey{}, c)
}

// bill charges one engine call to ctx's request: free for its first, one token of its
// principal's rate for each other, in debt when the bucket is empty.
func bill(ctx context.Context) {
	c, _ := ctx.Value(chargeKey{}).(*charge)
	if c == nil || c.paid.CompareAndSwap(true, false) {
		return
	}
	c.bucket.ReserveN(c.now(), 1) // never cancelled: the call is made, and the debt stands
}

// billed bills every call of an engine to the request that makes it. It sits below the shortcuts
// (package coalesce): a read they answer makes no engine call and costs nothing. Check is left
// out: only the server itself checks targets.
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
