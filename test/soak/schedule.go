package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/taskgate/taskgate/test/faults"
)

// The kinds of fault the soak injects, as -faults names them.
const (
	faultKill    = "kill"    // SIGKILL of one replica, restarted a few seconds later
	faultRestart = "restart" // the Temporal server stopped, then started on its database
	faultLatency = "latency"
	faultBand    = "bandwidth"
	faultReset   = "resets"
	faultHole    = "blackhole"
	faultStall   = "stall" // open connections silenced for good; new ones pass
)

// Network faults: what each does to the proxy, and for how long.
var networkFaults = map[string]struct {
	faults faults.Faults
	lasts  time.Duration
}{
	faultLatency: {faults.Faults{Latency: 500 * time.Millisecond}, 40 * time.Second},
	faultBand:    {faults.Faults{BytesPerSecond: 16 << 10}, 40 * time.Second},
	// Resets: every open connection reset every few seconds (resetEvery) for this long.
	faultReset: {faults.Faults{}, 15 * time.Second},
	faultHole:  {faults.Faults{Blackhole: true}, 30 * time.Second},
	// Stall is one act (faults.Proxy.Stall); its time is for the replicas to get over it.
	faultStall: {faults.Faults{}, 30 * time.Second},
}

// resetEvery is how often the resets fault resets the open connections.
const resetEvery = 3 * time.Second

// faultKinds are all the kinds, in the order -faults lists them.
var faultKinds = []string{faultKill, faultRestart, faultLatency, faultBand, faultReset, faultHole, faultStall}

// networkOrder is the order in which network faults follow each other, alternating engines.
var networkOrder = []struct{ kind, engine string }{
	{faultHole, engineTemporal}, {faultStall, engineSFN}, {faultReset, engineSFN}, {faultLatency, engineTemporal}, {faultBand, engineSFN},
	{faultHole, engineSFN}, {faultStall, engineTemporal}, {faultReset, engineTemporal}, {faultLatency, engineSFN}, {faultBand, engineTemporal},
}

// event is one scheduled fault.
type event struct {
	at     time.Duration // from the start of the clients
	kind   string
	engine string        // the engine a network fault or restart is on
	lasts  time.Duration // how long the fault stands (the outage, for a kill or restart)
	victim int           // the replica a kill ends
}

func (e event) String() string {
	switch e.kind {
	case faultKill:
		return fmt.Sprintf("%v: SIGKILL replica %d, restarted after %v", e.at, e.victim, e.lasts)
	case faultRestart:
		return fmt.Sprintf("%v: stop the Temporal server for %v, then start it again", e.at, e.lasts)
	}
	return fmt.Sprintf("%v: %s between the replicas and %s for %v", e.at, e.kind, e.engine, e.lasts)
}

// planOptions shape the schedule.
type planOptions struct {
	// from and to bound the faults: none starts before from, and all have ended by to.
	from, to time.Duration
	// killEvery is the time between replica kills; killDown how long a killed replica stays down.
	killEvery, killDown time.Duration
	// outage is how long the Temporal server stays stopped.
	outage time.Duration
	// gap is the quiet time between two network faults (and around the Temporal restart).
	gap      time.Duration
	replicas int
	// only, when not empty, keeps the plan to these kinds of fault.
	only map[string]bool
}

// allows reports whether the plan may hold faults of kind.
func (o planOptions) allows(kind string) bool { return len(o.only) == 0 || o.only[kind] }

// plan lays out the faults: network faults one after the other in networkOrder with gaps between
// them, the one Temporal restart in the gap nearest the middle, and replica kills every killEvery
// on every replica but the first, which lives through the whole run so that its memory over time
// is measured without a restart.
func plan(o planOptions) []event {
	var events []event
	middle := (o.from + o.to) / 2
	order := slices.DeleteFunc(slices.Clone(networkOrder), func(n struct{ kind, engine string }) bool { return !o.allows(n.kind) })
	restarted := !o.allows(faultRestart)
	at, next := o.from, 0
	for {
		if !restarted && at+o.outage+o.gap >= middle {
			events = append(events, event{at: at, kind: faultRestart, engine: engineTemporal, lasts: o.outage})
			restarted = true
			at += o.outage + o.gap
			continue
		}
		if len(order) == 0 {
			if !restarted {
				at = middle
				continue
			}
			break
		}
		n := order[next%len(order)]
		lasts := networkFaults[n.kind].lasts
		if at+lasts > o.to {
			break
		}
		events = append(events, event{at: at, kind: n.kind, engine: n.engine, lasts: lasts})
		at += lasts + o.gap
		next++
	}
	if !restarted && o.from+o.outage <= o.to {
		events = append(events, event{at: max(o.from, middle-o.outage/2), kind: faultRestart, engine: engineTemporal, lasts: o.outage})
	}
	if o.replicas > 1 && o.killEvery > 0 && o.allows(faultKill) {
		victim := 1
		for at := o.from + o.killEvery/4; at+o.killDown <= o.to; at += o.killEvery {
			events = append(events, event{at: at, kind: faultKill, lasts: o.killDown, victim: victim})
			victim = victim%(o.replicas-1) + 1
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return int(a.at - b.at) })
	return events
}
