package stepfunctions

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

// The endpoint the tests run against has no RedriveExecution, so redriven executions are checked
// here on DescribeExecution answers shaped as AWS documents them.
func TestStatusOf(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	redrive := start.Add(time.Hour)
	stop := start.Add(2 * time.Hour)
	tests := []struct {
		name string
		in   sfn.DescribeExecutionOutput
		want driver.Status
	}{
		{
			"running",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusRunning, StartDate: &start},
			driver.Status{State: driver.Working, Native: "RUNNING", Started: start, Updated: start},
		},
		{
			"pending redrive",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusPendingRedrive, StartDate: &start, StopDate: &redrive,
				RedriveCount: aws.Int32(1), RedriveDate: &redrive},
			driver.Status{State: driver.Working, Native: "PENDING_REDRIVE", Started: start, Updated: redrive,
				Message: "redrive requested, not yet running; redriven 1 time, last at 2026-03-01T11:00:00Z"},
		},
		{
			"redriven, running again",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusRunning, StartDate: &start,
				RedriveCount: aws.Int32(2), RedriveDate: &redrive},
			driver.Status{State: driver.Working, Native: "RUNNING", Started: start, Updated: redrive,
				Message: "redriven 2 times, last at 2026-03-01T11:00:00Z"},
		},
		{
			"redriven, then succeeded",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusSucceeded, StartDate: &start, StopDate: &stop,
				RedriveCount: aws.Int32(1), RedriveDate: &redrive, Output: aws.String(`{"ok":true}`)},
			driver.Status{State: driver.Succeeded, Native: "SUCCEEDED", Started: start, Updated: stop,
				Message: "redriven 1 time, last at 2026-03-01T11:00:00Z"},
		},
		{
			"failed",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusFailed, StartDate: &start, StopDate: &stop,
				Error: aws.String("Example.Failure"), Cause: aws.String("out of stock")},
			driver.Status{State: driver.Failed, Native: "FAILED", Started: start, Updated: stop,
				Message: "Example.Failure: out of stock"},
		},
		{
			"timed out",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusTimedOut, StartDate: &start, StopDate: &stop},
			driver.Status{State: driver.Failed, Native: "TIMED_OUT", Started: start, Updated: stop},
		},
		{
			"aborted",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusAborted, StartDate: &start, StopDate: &stop,
				Error: aws.String("taskgate.Cancelled"), Cause: aws.String("by alice")},
			driver.Status{State: driver.Cancelled, Native: "ABORTED", Started: start, Updated: stop,
				Message: "taskgate.Cancelled: by alice"},
		},
		{
			"a status AWS may add later",
			sfn.DescribeExecutionOutput{Status: "PAUSED", StartDate: &start},
			driver.Status{State: driver.Working, Native: "PAUSED", Started: start, Updated: start},
		},
	}
	for _, tc := range tests {
		if got := statusOf(&tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: statusOf = %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		name  string
		in    sfn.DescribeExecutionOutput
		want  driver.Outcome
		ended bool
	}{
		{"running", sfn.DescribeExecutionOutput{Status: types.ExecutionStatusRunning}, driver.Outcome{}, false},
		{"pending redrive", sfn.DescribeExecutionOutput{Status: types.ExecutionStatusPendingRedrive}, driver.Outcome{}, false},
		{
			"succeeded",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusSucceeded, Output: aws.String(`{"text":"hi"}`)},
			driver.Outcome{State: driver.Succeeded, Native: "SUCCEEDED", Output: []byte(`{"text":"hi"}`)},
			true,
		},
		{
			"succeeded without output",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusSucceeded},
			driver.Outcome{State: driver.Succeeded, Native: "SUCCEEDED", Output: []byte(`null`)},
			true,
		},
		{
			"failed",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusFailed, Error: aws.String("Example.Failure"), Cause: aws.String("why")},
			driver.Outcome{State: driver.Failed, Native: "FAILED", Error: "Example.Failure", Cause: "why"},
			true,
		},
		{
			"timed out without error",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusTimedOut},
			driver.Outcome{State: driver.Failed, Native: "TIMED_OUT", Error: "States.Timeout"},
			true,
		},
		{
			"timed out with error",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusTimedOut, Error: aws.String("States.Timeout"), Cause: aws.String("after 2 s")},
			driver.Outcome{State: driver.Failed, Native: "TIMED_OUT", Error: "States.Timeout", Cause: "after 2 s"},
			true,
		},
		{
			"aborted",
			sfn.DescribeExecutionOutput{Status: types.ExecutionStatusAborted, Error: aws.String("taskgate.Cancelled"), Cause: aws.String("by bob")},
			driver.Outcome{State: driver.Cancelled, Native: "ABORTED", Error: "taskgate.Cancelled", Cause: "by bob"},
			true,
		},
	}
	for _, tc := range tests {
		got, ended := outcomeOf(&tc.in)
		if ended {
			tc.want.Status = statusOf(&tc.in) // an ended execution's status, as Describe maps it
		}
		if ended != tc.ended || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: outcomeOf = %+v, %v\nwant %+v, %v", tc.name, got, ended, tc.want, tc.ended)
		}
	}
}

// StartSyncExecution is missing from the test endpoint: its answers are mapped here as AWS
// documents them.
func TestSyncOutcomeOf(t *testing.T) {
	tests := []struct {
		in   sfn.StartSyncExecutionOutput
		want driver.Outcome
	}{
		{
			sfn.StartSyncExecutionOutput{Status: types.SyncExecutionStatusSucceeded, Output: aws.String(`[1,2]`)},
			driver.Outcome{State: driver.Succeeded, Native: "SUCCEEDED", Output: []byte(`[1,2]`)},
		},
		{
			sfn.StartSyncExecutionOutput{Status: types.SyncExecutionStatusFailed, Error: aws.String("E"), Cause: aws.String("c")},
			driver.Outcome{State: driver.Failed, Native: "FAILED", Error: "E", Cause: "c"},
		},
		{
			sfn.StartSyncExecutionOutput{Status: types.SyncExecutionStatusTimedOut},
			driver.Outcome{State: driver.Failed, Native: "TIMED_OUT", Error: "States.Timeout"},
		},
	}
	for _, tc := range tests {
		if got := syncOutcomeOf(&tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("syncOutcomeOf(%s) = %+v, want %+v", tc.in.Status, got, tc.want)
		}
	}
}

func TestFailureMessageIsShort(t *testing.T) {
	long := string(make([]rune, 500))
	if got := []rune(failure("E", long)); len(got) != len("E: ")+maxMessageCause+1 {
		t.Errorf("failure with a 500-character cause has %d characters, want it cut to %d", len(got), len("E: ")+maxMessageCause+1)
	}
}
