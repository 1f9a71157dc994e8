package driver_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// A throttled call is a kind of unavailable one, whoever refused it, and says when to retry when
// it knows.
func TestThrottledIsUnavailable(t *testing.T) {
	engine := fmt.Errorf("%w: reading execution x: ThrottlingException: Rate exceeded; retry later", driver.ErrThrottled)
	budget := &driver.Throttle{RetryAfter: 1500 * time.Millisecond}
	retried := &driver.Throttle{RetryAfter: 2 * time.Second, Cause: engine}
	for _, err := range []error{engine, budget, retried, fmt.Errorf("describing: %w", retried)} {
		if !errors.Is(err, driver.ErrThrottled) || !errors.Is(err, driver.ErrUnavailable) {
			t.Errorf("%v: not both ErrThrottled and ErrUnavailable", err)
		}
	}
	if errors.Is(driver.ErrUnavailable, driver.ErrThrottled) {
		t.Error("ErrUnavailable is ErrThrottled: an unreachable engine would read as a throttling one")
	}
	for err, want := range map[error]string{
		budget:  "engine throttling: taskgate's read budget for the engine is spent for now; retry in 1.5s",
		retried: "engine throttling: reading execution x: ThrottlingException: Rate exceeded; retry later; retry in 2s",
	} {
		if err.Error() != want {
			t.Errorf("message %q\nwant    %q", err.Error(), want)
		}
	}
	var th *driver.Throttle
	if !errors.As(fmt.Errorf("describing: %w", budget), &th) || th.RetryAfter != 1500*time.Millisecond {
		t.Errorf("RetryAfter not found through wrapping: %v", th)
	}
}
