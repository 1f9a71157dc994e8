package main

import (
	"testing"
	"time"
)

// The plans of the two runs the project makes: CI's 3 minutes and the documented hour.
func TestPlanHoldsEveryKindOfFaultWithinItsBounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        planOptions
		kinds    []string // kinds the plan must hold at least once
		minKills int
	}{
		{"ci", planOptions{from: 40 * time.Second, to: 160 * time.Second, killEvery: time.Minute, killDown: 5 * time.Second,
			outage: 10 * time.Second, gap: 10 * time.Second, replicas: 3},
			[]string{faultKill, faultRestart, faultHole, faultStall, faultReset}, 2},
		{"hour", planOptions{from: 2 * time.Minute, to: 57 * time.Minute, killEvery: 4 * time.Minute, killDown: 5 * time.Second,
			outage: 10 * time.Second, gap: 90 * time.Second, replicas: 3},
			[]string{faultKill, faultRestart, faultHole, faultStall, faultReset, faultLatency, faultBand}, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := plan(tc.o)
			seen := map[string]int{}
			engines := map[string]map[string]bool{}
			for i, e := range events {
				seen[e.kind]++
				if engines[e.kind] == nil {
					engines[e.kind] = map[string]bool{}
				}
				engines[e.kind][e.engine] = true
				if e.at < tc.o.from || e.at+e.lasts > tc.o.to {
					t.Errorf("%v falls outside %v..%v", e, tc.o.from, tc.o.to)
				}
				if i > 0 && e.at < events[i-1].at {
					t.Errorf("%v comes after %v", e, events[i-1])
				}
				if e.kind == faultKill && (e.victim < 1 || e.victim >= tc.o.replicas) {
					t.Errorf("%v: only replicas 1..%d are killed; replica 0 lives through the run", e, tc.o.replicas-1)
				}
			}
			for _, k := range tc.kinds {
				if seen[k] == 0 {
					t.Errorf("no %s in the plan: %v", k, events)
				}
			}
			if seen[faultRestart] != 1 {
				t.Errorf("%d Temporal restarts, want exactly 1", seen[faultRestart])
			}
			if seen[faultKill] < tc.minKills {
				t.Errorf("%d replica kills, want at least %d", seen[faultKill], tc.minKills)
			}
			if tc.name == "hour" {
				for _, k := range []string{faultHole, faultStall, faultReset, faultLatency, faultBand} {
					if !engines[k][engineTemporal] || !engines[k][engineSFN] {
						t.Errorf("%s is not on both engines: %v", k, engines[k])
					}
				}
			}
			// Network faults and the restart never overlap: each one's effects are its own.
			var last time.Duration
			for _, e := range events {
				if e.kind == faultKill {
					continue
				}
				if e.at < last {
					t.Errorf("%v starts before the fault before it ends (%v)", e, last)
				}
				last = e.at + e.lasts
			}
		})
	}
}
