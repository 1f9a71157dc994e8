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

// charge is what one request's engine calls are billed to (nil pay: nobody).
type charge struct {
	pay func()
	// paid is spent by the first engine call.
	paid atomic.Bool
}

// Charging is ctx with each engine call of its request after the first paid for by pay (a token
// of its caller's rate, say).
func Charging(ctx context.Context, pay func()) context.Context {
	ctx, r := withRequest(ctx)
	r.charge.pay = pay
	r.charge.paid.Store(true)
	return ctx
}

// bill is the hook that charges every engine call but a Check to the request that makes it. It
// comes after the readings and the read budget: a read they answer, or one the budget refuses,
// makes no engine call and costs nothing. Check is left out: only the service itself checks
// targets.
func bill(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
	if c.Op == adapters.OpCheck {
		return ctx, nil, nil
	}
	if r := requestOf(ctx); r != nil && r.charge.pay != nil && !r.charge.paid.CompareAndSwap(true, false) {
		r.charge.pay()
	}
	return ctx, nil, nil
}
