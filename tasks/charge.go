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

// Payer pays for the engine calls of one caller (a token of its rate, say). The transport makes
// one per caller and keeps it while the caller is active, so that it also names whom a call is
// charged to: the sweeps keep one context per tool and Payer for every task they follow (carried),
// not one per task.
type Payer struct{ pay func() }

// NewPayer is a Payer that pays for each engine call with pay.
func NewPayer(pay func()) *Payer { return &Payer{pay: pay} }

// charge is what one request's engine calls are billed to (nil payer: nobody).
type charge struct {
	payer *Payer
	// paid is spent by the first engine call.
	paid atomic.Bool
}

// Charging is ctx with each engine call of its request after the first paid for by p.
func Charging(ctx context.Context, p *Payer) context.Context {
	ctx, r := withRequest(ctx)
	r.charge.payer = p
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
	if r := requestOf(ctx); r != nil && r.charge.payer != nil && !r.charge.paid.CompareAndSwap(true, false) {
		r.charge.payer.pay()
	}
	return ctx, nil, nil
}
