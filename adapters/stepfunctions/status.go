package stepfunctions

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

// timeoutError is the error a timed-out execution reports when the engine gives none.
const timeoutError = "States.Timeout"

// maxMessageCause bounds how much of a failure cause a status message repeats.
const maxMessageCause = 200

func stateOf(s types.ExecutionStatus) driver.State {
	switch s {
	case types.ExecutionStatusSucceeded:
		return driver.Succeeded
	case types.ExecutionStatusFailed, types.ExecutionStatusTimedOut:
		return driver.Failed
	case types.ExecutionStatusAborted:
		return driver.Cancelled
	default:
		// RUNNING, PENDING_REDRIVE, and any status AWS adds later: not ended as far as we know.
		return driver.Working
	}
}

// statusOf maps one DescribeExecution answer. A redriven execution keeps its ARN and reports the
// status of its latest run, so the message says how often and when it was redriven.
func statusOf(d *sfn.DescribeExecutionOutput) driver.Status {
	st := driver.Status{
		State:   stateOf(d.Status),
		Native:  string(d.Status),
		Started: aws.ToTime(d.StartDate),
		Updated: latest(aws.ToTime(d.StartDate), d.RedriveDate, d.StopDate),
	}
	var msg []string
	if d.Status == types.ExecutionStatusPendingRedrive {
		msg = append(msg, "redrive requested, not yet running")
	}
	if n := aws.ToInt32(d.RedriveCount); n > 0 {
		msg = append(msg, fmt.Sprintf("redriven %d %s, last at %s", n, plural(n, "time", "times"),
			aws.ToTime(d.RedriveDate).UTC().Format(time.RFC3339)))
	}
	if st.State == driver.Failed || st.State == driver.Cancelled {
		if e := failure(aws.ToString(d.Error), aws.ToString(d.Cause)); e != "" {
			msg = append(msg, e)
		}
	}
	st.Message = strings.Join(msg, "; ")
	return st
}

// latest is the latest of started and the times that are set.
func latest(started time.Time, times ...*time.Time) time.Time {
	for _, t := range times {
		if t != nil && t.After(started) {
			started = *t
		}
	}
	return started
}

// outcomeOf maps one DescribeExecution answer to an outcome; ended is false while it runs.
func outcomeOf(d *sfn.DescribeExecutionOutput) (o driver.Outcome, ended bool) {
	o = driver.Outcome{State: stateOf(d.Status), Native: string(d.Status)}
	switch d.Status {
	case types.ExecutionStatusSucceeded:
		o = driver.SucceededWith(o.Native, []byte(aws.ToString(d.Output)))
	case types.ExecutionStatusFailed, types.ExecutionStatusTimedOut, types.ExecutionStatusAborted:
		o.Error, o.Cause = aws.ToString(d.Error), aws.ToString(d.Cause)
		if d.Status == types.ExecutionStatusTimedOut && o.Error == "" {
			o.Error = timeoutError
		}
	default:
		return driver.Outcome{}, false
	}
	o.Status = statusOf(d)
	return o, true
}

// syncOutcomeOf maps a StartSyncExecution answer (Express state machines).
func syncOutcomeOf(d *sfn.StartSyncExecutionOutput) driver.Outcome {
	if d.Status == types.SyncExecutionStatusSucceeded {
		return driver.SucceededWith(string(d.Status), []byte(aws.ToString(d.Output)))
	}
	o := driver.Outcome{State: driver.Failed, Native: string(d.Status), Error: aws.ToString(d.Error), Cause: aws.ToString(d.Cause)}
	if d.Status == types.SyncExecutionStatusTimedOut && o.Error == "" {
		o.Error = timeoutError
	}
	return o
}

func failure(name, cause string) string {
	if r := []rune(cause); len(r) > maxMessageCause {
		cause = string(r[:maxMessageCause]) + "…"
	}
	switch {
	case name != "" && cause != "":
		return name + ": " + cause
	case name != "":
		return name
	default:
		return cause
	}
}

func plural(n int32, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
