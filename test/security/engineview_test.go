package security

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/internal/testenv"
)

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
