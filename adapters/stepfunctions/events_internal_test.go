package stepfunctions

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

const noticeARN = "arn:aws:states:us-east-1:123456789012:execution:orders:run-1"

// statusEvent is an event as AWS documents it, with the detail given.
func statusEvent(status, stop string) string {
	return `{"version":"0","id":"315c1398-40ff-a850-213b-158f73e60175","detail-type":"Step Functions Execution Status Change",` +
		`"source":"aws.states","account":"123456789012","time":"2019-02-26T19:42:21Z","region":"us-east-1",` +
		`"resources":["` + noticeARN + `"],"detail":{"executionArn":"` + noticeARN + `",` +
		`"stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:orders","name":"run-1","status":"` + status + `",` +
		`"startDate":1551225014968,"stopDate":` + stop + `,"input":"{}","inputDetails":{"included":true},"output":null,"outputDetails":null}}`
}

// Each documented status reads as the listing's status of the same name would.
func TestNoticeOfStatuses(t *testing.T) {
	start := time.UnixMilli(1551225014968).UTC()
	stop := time.UnixMilli(1551225017576).UTC()
	for _, c := range []struct {
		status, stop string
		state        driver.State
		updated      time.Time
	}{
		{"RUNNING", "null", driver.Working, start},
		{"SUCCEEDED", "1551225017576", driver.Succeeded, stop},
		{"FAILED", "1551225017576", driver.Failed, stop},
		{"TIMED_OUT", "1551225017576", driver.Failed, stop},
		{"ABORTED", "1551225017576", driver.Cancelled, stop},
		{"PENDING_REDRIVE", "1551225017576", driver.Working, stop},
	} {
		l, err := noticeOf(statusEvent(c.status, c.stop))
		if err != nil {
			t.Errorf("%s: %v", c.status, err)
			continue
		}
		want := driver.Status{State: c.state, Native: c.status, Started: start, Updated: c.updated}
		if got := l.Status; l.Ref.ID != noticeARN || got.State != want.State || got.Native != want.Native ||
			!got.Started.Equal(want.Started) || !got.Updated.Equal(want.Updated) || got.Message != "" {
			t.Errorf("%s: %+v, want %s %+v", c.status, l, noticeARN, want)
		}
	}
}

// What is no status change of an execution is refused, saying why; an event of another kind is
// errOtherEvent, which is not worth a warning.
func TestNoticeOfRefuses(t *testing.T) {
	for body, other := range map[string]bool{
		``:                                      false,
		`[]`:                                    false,
		`"text"`:                                false,
		`{"Type":"Notification","Message":"{"}`: false,
		statusEvent("SUCCEEDED", `"yesterday"`): false,
		`{"source":"aws.states","detail-type":"Step Functions Execution Status Change","detail":{"executionArn":"` + noticeARN + `","status":"RUNNING"}}`: false,
		`{"source":"aws.states","detail-type":"Step Functions Execution Status Change","detail":{"executionArn":"x","status":"RUNNING","startDate":1}}`:   false,
		`{"source":"aws.s3","detail-type":"Object Created","detail":{}}`:                                                                                  true,
		`{"source":"aws.states","detail-type":"AWS API Call via CloudTrail","detail":{}}`:                                                                 true,
		`{"Type":"Notification","Message":"{\"source\":\"aws.batch\",\"detail-type\":\"x\"}"}`:                                                            true,
	} {
		_, err := noticeOf(body)
		if err == nil || (errors.Is(err, errOtherEvent) != other) {
			t.Errorf("noticeOf(%s): %v, want an error (another kind of event: %v)", body, err, other)
		}
	}
}

// Of several notices of one execution in a receive, the latest tells: an end over a running
// status, else the later change; notices of other executions keep their order.
func TestNoticesKeepTheLatest(t *testing.T) {
	ev := &statusEvents{log: slog.New(slog.DiscardHandler)}
	msg := func(body string) sqstypes.Message { return sqstypes.Message{Body: aws.String(body)} }
	other := `{"source":"aws.states","detail-type":"Step Functions Execution Status Change","detail":{"executionArn":"` +
		"arn:aws:states:us-east-1:123456789012:execution:orders:run-2" + `","status":"RUNNING","startDate":1551225014968}}`
	got := ev.notices([]sqstypes.Message{
		msg(statusEvent("SUCCEEDED", "1551225017576")), msg(other), msg(statusEvent("RUNNING", "null")), msg("garbage"),
	})
	if len(got) != 2 || got[0].Ref.ID != noticeARN || got[0].Status.Native != "SUCCEEDED" || got[1].Status.Native != "RUNNING" {
		t.Errorf("notices: %+v, want run-1 SUCCEEDED then run-2 RUNNING", got)
	}
}

// Queue prefixes: SQS names are 80 characters of letters, digits, - and _, and 16 of them are the
// random suffix.
func TestValidQueuePrefix(t *testing.T) {
	for p, ok := range map[string]bool{
		"taskgate-": true, "a": true, "A_b-9": true, string(make([]byte, 0)): false,
		"a.b": false, "a b": false, "ä": false,
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":  true,
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": false,
	} {
		if validQueuePrefix(p) != ok {
			t.Errorf("validQueuePrefix(%q) = %v", p, !ok)
		}
		if ok && len(p+randomSuffix()) > 80 {
			t.Errorf("%q makes a name longer than 80", p)
		}
	}
}
