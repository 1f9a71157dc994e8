package temporal_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

const invalidResultName = "InvalidResult"

// invalidResult ends with a result that says it is JSON and is not: what a worker with its own
// payload converter can write.
func invalidResult(workflow.Context) (converter.RawValue, error) {
	return converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)},
		Data:     []byte(`{"confirm":NaN}`),
	}), nil
}

// A result that is not JSON is a failure that says so, not an error that leaves the caller
// without an outcome.
func TestAResultThatIsNotJSONIsAFailure(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	e, err := temporal.New(ctx, temporal.Config{Address: testenv.TemporalAddress(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	queue := "taskgate-test-" + uuid.NewString()
	w := worker.New(sdkClient(t, e), queue, worker.Options{})
	w.RegisterWorkflowWithOptions(invalidResult, workflow.RegisterOptions{Name: invalidResultName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	tg := temporal.Workflow(invalidResultName, queue, time.Minute)
	out, err := awaitEnd(ctx, e, tg, start(ctx, t, e, tg, nil, ""))
	want := driver.Outcome{State: driver.Failed, Native: "COMPLETED", Error: driver.InvalidOutputError,
		Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 12)"}
	if err != nil || out.State != want.State || out.Native != want.Native || out.Error != want.Error || out.Cause != want.Cause || out.Output != nil {
		t.Errorf("Wait: %+v, %v\nwant %+v", out, err, want)
	}
}
