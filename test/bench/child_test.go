package main

import (
	"encoding/json"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/adapters/pace"
)

// The counting hook counts a sweep's page as an engine read, in all and of its block, as the
// fleet figure's reads rows count it.
func TestCountCountsSweeps(t *testing.T) {
	c := &counters{inFlight: map[string]int{}, blocks: map[string]*blockCounts{}}
	eng := adapters.NewEngine(memengine.New(memengine.Options{}), adapters.EngineOptions{Hooks: []adapters.Hook{c.of("mem")}})
	job := memengine.Job(memengine.Echo, 0)
	r, err := eng.Start(t.Context(), job, adapters.StartRequest{Input: json.RawMessage(`{"seconds":60}`)}, pace.Pace{})
	if err != nil {
		t.Fatal(err)
	}
	listed, _, err := eng.Sweep(t.Context(), adapters.SweepOptions{Targets: []adapters.Target{job}, Refs: []adapters.Ref{r}})
	if err != nil || len(listed) != 1 {
		t.Fatalf("Sweep: %v, %v, want the execution", listed, err)
	}
	if got := (childCounts{Sweep: c.sweep.Load()}).Reads(); got != 1 || c.blocks["mem"].Sweep.Load() != 1 {
		t.Errorf("reads counted after one sweep: %d, of the block %d, want 1", got, c.blocks["mem"].Sweep.Load())
	}
}
