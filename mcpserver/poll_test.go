package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestPollIntervalGrowsWithTheTaskAge reads one running task through ids created at other times
// (the age is the token's createdAt): the suggested interval follows the tool's curve in every
// dialect that carries one.
func TestPollIntervalGrowsWithTheTaskAge(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	id := call(t, c, "echo_unpolled", map[string]any{"seconds": 3600, "text": "aging"})["taskId"].(string)
	wf, run := e.workflow(t, id)
	defer testenv.As[client.Client](t, e.engine).TerminateWorkflow(context.Background(), wf, run, "test cleanup")
	claims, err := e.tokens.Open(id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	legacy := rpctest.Legacy(rpctest.HTTP{URL: e.url})
	for _, c2 := range []struct {
		age  time.Duration
		want float64
	}{
		{0, 1000}, {time.Minute, 1000}, {5 * time.Minute, 5000}, {20 * time.Minute, 20000}, {2 * time.Hour, 30000},
	} {
		aged := claims
		aged.Created = time.Now().Add(-c2.age).UTC().Truncate(time.Millisecond)
		agedID := e.tokens.Issue(aged)
		got := c.Decode(t, "tasks/get", map[string]any{"taskId": agedID})
		// The age goes on while the request runs: at most a few milliseconds more.
		if ms := got["pollIntervalMs"].(float64); ms < c2.want || ms > c2.want+50 {
			t.Errorf("tasks/get of a task %s old: pollIntervalMs %v, want %v", c2.age, ms, c2.want)
		}
		lt := legacy.Decode(t, "tasks/get", map[string]any{"taskId": agedID})
		if ms := lt["pollInterval"].(float64); ms < c2.want || ms > c2.want+50 {
			t.Errorf("2025-11-25 tasks/get of a task %s old: pollInterval %v, want %v", c2.age, ms, c2.want)
		}
	}
}
