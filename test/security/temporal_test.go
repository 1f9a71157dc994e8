package security

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

// ownQueue runs the example workflows on a task queue of the test's own, in the test's process,
// until the test ends, and names the queue. A probe that times its tasks needs its own worker: on
// the examples' queue, which the Temporal server's other test binaries poll too, a workflow task
// may go to a worker whose binary is exiting, and wait for a worker for longer than the probe.
// (TestProbesFairness once saw four workflows in a row wait 10 s with no workflow task taken.)
func ownQueue(t *testing.T) string {
	c, err := client.Dial(client.Options{HostPort: testenv.TemporalAddress(t), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	queue := "taskgate-probes-" + uuid.NewString()
	w := worker.New(c, queue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return queue
}

// engineHeld says what the Temporal server holds of the workflow behind a native task id of the
// probes' Temporal tool (WORKFLOW-ID/RUN-ID): its status, when it started and closed, and which
// worker took each of its workflow tasks when. A probe that misses an end quotes it, so that its
// failure tells taskgate's delay from the engine's or a worker's.
func engineHeld(t *testing.T, id string) string {
	cut := strings.LastIndex(id, "/")
	if cut < 0 {
		return fmt.Sprintf("%s: not a native id of a workflow", id)
	}
	workflow, run := id[:cut], id[cut+1:]
	c, err := client.Dial(client.Options{HostPort: testenv.TemporalAddress(t), Logger: quiet{}})
	if err != nil {
		return fmt.Sprintf("%s: %v", id, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, workflow, run)
	if err != nil {
		return fmt.Sprintf("%s: described: %v", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	held := fmt.Sprintf("%s: %s, started %s, closed %s", id, info.GetStatus(), stamp(info.GetStartTime().AsTime()), stamp(info.GetCloseTime().AsTime()))
	var tasks []string
	for it := c.GetWorkflowHistory(ctx, workflow, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
		e, err := it.Next()
		if err != nil {
			return fmt.Sprintf("%s; history: %v", held, err)
		}
		switch a := e.GetWorkflowTaskStartedEventAttributes(); {
		case a != nil:
			tasks = append(tasks, fmt.Sprintf("taken %s by %s", stamp(e.GetEventTime().AsTime()), a.GetIdentity()))
		case e.GetWorkflowTaskTimedOutEventAttributes() != nil:
			tasks = append(tasks, "timed out "+stamp(e.GetEventTime().AsTime()))
		}
	}
	return fmt.Sprintf("%s; workflow tasks: %s (now %s)", held, strings.Join(tasks, ", "), stamp(time.Now()))
}

func stamp(at time.Time) string {
	if at.Unix() <= 0 {
		return "never"
	}
	return at.Local().Format("15:04:05.000")
}

// quiet is a Temporal SDK logger that drops everything.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
