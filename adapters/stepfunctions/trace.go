package stepfunctions

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// xrayHeader is the W3C traceparent of a trace context as the AWS X-Ray trace header that
// StartExecution and StartSyncExecution take: Root=1-<8 hex>-<24 hex>;Parent=<16 hex>;Sampled=<0|1>
// (X-Ray's trace id is W3C's, split after its first 8 hex digits). Nil when there is no valid
// traceparent of version 00.
func xrayHeader(trace map[string]string) *string {
	parts := strings.Split(trace["traceparent"], "-")
	if len(parts) != 4 || parts[0] != "00" || !lowerHex(parts[1], 32) || !lowerHex(parts[2], 16) || !lowerHex(parts[3], 2) ||
		strings.Trim(parts[1], "0") == "" || strings.Trim(parts[2], "0") == "" {
		return nil
	}
	flags, _ := strconv.ParseUint(parts[3], 16, 8)
	return aws.String("Root=1-" + parts[1][:8] + "-" + parts[1][8:] + ";Parent=" + parts[2] + ";Sampled=" + strconv.FormatUint(flags&1, 10))
}

// lowerHex reports whether s is n lower-case hex digits, as W3C Trace Context writes them.
func lowerHex(s string, n int) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == n && strings.ToLower(s) == s
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
