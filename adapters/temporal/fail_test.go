package temporal

import (
	"context"
	"errors"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/taskgate/taskgate/adapters/driver"
)

// TestFailTellsRetryableFromNot: the server throttling is worth a retry, and is told apart from
// the server being unreachable; gRPC's own message size limit (the same code, without the server's
// cause) never is.
func TestFailTellsRetryableFromNot(t *testing.T) {
	e := &conn{address: "127.0.0.1:7233", namespace: "default"}
	for _, c := range []struct {
		err  error
		want error
	}{
		{serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "namespace rate limit exceeded"), driver.ErrThrottled},
		{status.Error(codes.ResourceExhausted, "grpc: received message larger than max (5242880 vs. 4194304)"), driver.ErrInvalid},
		{status.Error(codes.Unavailable, "connection refused"), driver.ErrUnavailable},
		{serviceerror.NewNotFound("workflow not found"), driver.ErrNotFound},
	} {
		got := e.fail(context.Background(), "reading", c.err)
		if !errors.Is(got, c.want) {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
		retryable := c.want == driver.ErrUnavailable || c.want == driver.ErrThrottled
		if retryable != errors.Is(got, driver.ErrUnavailable) {
			t.Errorf("%v: retryable %v, want %v", c.err, !retryable, retryable)
		}
		if c.want != driver.ErrThrottled && errors.Is(got, driver.ErrThrottled) {
			t.Errorf("%v is marked throttled", c.err)
		}
	}
}

// TestNamespaceMissingAfterItWasServed: "namespace not found" is a setting to fix, unless the
// namespace was served before: then it is the frontend's namespace cache refreshing, which a
// retry mends (the soak, test/soak, lost four starts to it on a Temporal dev server).
func TestNamespaceMissingAfterItWasServed(t *testing.T) {
	e := &conn{address: "127.0.0.1:7233", namespace: "default"}
	missing := serviceerror.NewNamespaceNotFound("default")
	if got := e.fail(context.Background(), "start WaitAndEcho", missing); errors.Is(got, driver.ErrUnavailable) ||
		got.Error() != `temporal: start WaitAndEcho: namespace "default" does not exist on 127.0.0.1:7233: create it (temporal operator namespace create) or fix the namespace setting: Namespace default is not found.` {
		t.Errorf("never served: %v, want the setting to fix, not retryable", got)
	}
	e.namespaceSeen.Store(true)
	if got := e.fail(context.Background(), "start WaitAndEcho", missing); !errors.Is(got, driver.ErrUnavailable) {
		t.Errorf("served before: %v, want ErrUnavailable", got)
	}
}
