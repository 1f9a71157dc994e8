package stepfunctions_test

import (
	"context"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

// awaitEnd waits for the end of r as taskgate does: through the Engine it serves c with.
func awaitEnd(ctx context.Context, c driver.Conn, tg driver.Target, r driver.Ref) (driver.Outcome, error) {
	return enginetest.Stack(c, stepfunctions.Driver{}.Info()).Wait(ctx, tg, r, pace.Pace{})
}

// runToEnd runs an execution as taskgate does: through the Engine it serves c with.
func runToEnd(ctx context.Context, c driver.Conn, tg driver.Target, req driver.StartRequest) (driver.Ref, driver.Outcome, error) {
	return enginetest.Stack(c, stepfunctions.Driver{}.Info()).Run(ctx, tg, req, pace.Pace{})
}
