package main

import (
	"encoding/json"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
)

// The child's counting keeps a driver's sweeps, counted as reads, and gives none to a driver
// that has none.
func TestCountKeepsSweeps(t *testing.T) {
	c := &counters{inFlight: map[string]int{}}
	eng := memengine.New(memengine.Options{})
	counted := count(eng, c)
	sw, ok := counted.(adapters.Sweeper)
	if !ok {
		t.Fatal("count over an engine that sweeps: no adapters.Sweeper")
	}
	job := memengine.Job(memengine.Echo, 0)
	r, err := counted.Start(t.Context(), job, adapters.StartRequest{Input: json.RawMessage(`{"seconds":60}`)})
	if err != nil {
		t.Fatal(err)
	}
	listed, _, err := sw.Sweep(t.Context(), job, []adapters.Ref{r}, "")
	if err != nil || len(listed) != 1 {
		t.Fatalf("Sweep through count: %v, %v, want the execution", listed, err)
	}
	if got := (childCounts{Sweep: c.sweep.Load()}).Reads(); got != 1 {
		t.Errorf("reads counted after one sweep: %d, want 1", got)
	}
	if _, ok := count(struct{ adapters.Engine }{eng}, c).(adapters.Sweeper); ok {
		t.Error("count over an engine that does not sweep: an adapters.Sweeper")
	}
}
