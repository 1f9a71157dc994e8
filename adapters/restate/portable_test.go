package restate_test

import (
	"context"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/restate"
)

// awaitEnd waits for the end of r as taskgate does: through the Engine it serves c with.
func awaitEnd(ctx context.Context, c adapters.Conn, tg adapters.Target, r adapters.Ref) (adapters.Outcome, error) {
	return enginetest.Stack(c, restate.Driver{}.Info()).Wait(ctx, tg, r)
}

// runToEnd runs an execution as taskgate does: through the Engine it serves c with.
func runToEnd(ctx context.Context, c adapters.Conn, tg adapters.Target, req adapters.StartRequest) (adapters.Ref, adapters.Outcome, error) {
	return enginetest.Stack(c, restate.Driver{}.Info()).Run(ctx, tg, req)
}
