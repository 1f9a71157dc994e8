package temporal

import (
	"context"
	"errors"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/taskgate/taskgate/adapters"
)

// TestFailTellsRetryableFromNot: the server throttling is worth a retry, and is told apart from
// the server being unreachable; gRPC's own message size limit (the same code, without the server's
// cause) never is.
func TestFailTellsRetryableFromNot(t *testing.T) {
	e := &Engine{address: "127.0.0.1:7233", namespace: "default"}
	for _, c := range []struct {
		err  error
		want error
	}{
		{serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "namespace rate limit exceeded"), adapters.ErrThrottled},
		{status.Error(codes.ResourceExhausted, "grpc: received message larger than max (5242880 vs. 4194304)"), adapters.ErrInvalid},
		{status.Error(codes.Unavailable, "connection refused"), adapters.ErrUnavailable},
		{serviceerror.NewNotFound("workflow not found"), adapters.ErrNotFound},
	} {
		got := e.fail(context.Background(), "reading", c.err)
		if !errors.Is(got, c.want) {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
		retryable := c.want == adapters.ErrUnavailable || c.want == adapters.ErrThrottled
		if retryable != errors.Is(got, adapters.ErrUnavailable) {
			t.Errorf("%v: retryable %v, want %v", c.err, !retryable, retryable)
		}
		if c.want != adapters.ErrThrottled && errors.Is(got, adapters.ErrThrottled) {
			t.Errorf("%v is marked throttled", c.err)
		}
	}
}
