package temporal_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
)

// TestSamples starts workflows with different inputs as another starter than taskgate would, and
// reads their inputs back newest first, n of them; workflows of the type on another task queue
// are not the target's.
func TestSamples(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	echo := v.target(temporalexamples.WaitAndEchoName)
	if got, err := v.engine.(driver.Sampler).Samples(ctx, echo, 5); err != nil || len(got) != 0 {
		t.Fatalf("Samples of a type that never ran on the queue: %s, %v; want none", got, err)
	}
	var want []string
	for i := range 4 {
		in := temporalexamples.EchoInput{Text: fmt.Sprintf("sample %d", i)}
		run, err := sdkClient(t, v.engine).ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "someone-else/" + uuid.NewString(), TaskQueue: v.queue},
			temporalexamples.WaitAndEchoName, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Get(ctx, nil); err != nil { // one after the other: visibility lists closed runs by close time
			t.Fatal(err)
		}
		b, _ := json.Marshal(in)
		want = append([]string{string(b)}, want...)
	}
	var got []json.RawMessage
	for deadline := time.Now().Add(10 * time.Second); len(got) < 4 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if got, err = v.engine.(driver.Sampler).Samples(ctx, echo, 10); err != nil {
			t.Fatal(err)
		}
	}
	if g := joinRaw(got); g != strings.Join(want, " ") {
		t.Fatalf("Samples(10) = %s\nwant %s", g, strings.Join(want, " "))
	}
	if got, err := v.engine.(driver.Sampler).Samples(ctx, echo, 3); err != nil || joinRaw(got) != strings.Join(want[:3], " ") {
		t.Errorf("Samples(3) = %s, %v\nwant %s", joinRaw(got), err, strings.Join(want[:3], " "))
	}
	elsewhere := temporal.Workflow(temporalexamples.WaitAndEchoName, v.unpolled, 0)
	if got, err := v.engine.(driver.Sampler).Samples(ctx, elsewhere, 5); err != nil || len(got) != 0 {
		t.Errorf("Samples on another task queue: %s, %v; want none", got, err)
	}
}

func joinRaw(xs []json.RawMessage) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, " ")
}
