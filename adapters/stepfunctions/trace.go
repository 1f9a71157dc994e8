package stepfunctions

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// xrayHeader is a W3C trace context as the AWS X-Ray trace header that StartExecution and
// StartSyncExecution take: Root=1-<8 hex>-<24 hex>;Parent=<16 hex>;Sampled=<0|1> (X-Ray's trace
// id is W3C's, split after its first 8 hex digits). Nil when OpenTelemetry's W3C propagator finds
// no valid traceparent in it.
//
// The header is written here, not by contrib's X-Ray propagator
// (go.opentelemetry.io/contrib/propagators/aws/xray): its module is deprecated since v1.47.0 ("no
// longer supported"), and it writes the same line in twice the time.
func xrayHeader(fields map[string]string) *string {
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier(fields)))
	if !sc.IsValid() {
		return nil
	}
	id, sampled := sc.TraceID().String(), "0"
	if sc.IsSampled() {
		sampled = "1"
	}
	return aws.String("Root=1-" + id[:8] + "-" + id[8:] + ";Parent=" + sc.SpanID().String() + ";Sampled=" + sampled)
}

// countingRetryer tells retried of each retry the SDK's retryer decides on: the SDK asks
// RetryDelay only for an attempt it is about to retry.
type countingRetryer struct {
	aws.RetryerV2
	retried func(throttled bool)
}

func (r countingRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	r.retried(retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool())
	return r.RetryerV2.RetryDelay(attempt, err)
}
