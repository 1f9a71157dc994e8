package mapping

import (
	"testing"
	"time"
)

// The interval over a task's life, with the defaults and with a fixed interval.
func TestPollIntervalAt(t *testing.T) {
	defaults := &Tool{PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute}
	fixed := &Tool{PollInterval: 2 * time.Second, PollIntervalMax: 2 * time.Second, PollIntervalGrowsAfter: time.Minute}
	slow := &Tool{PollInterval: 5 * time.Second, PollIntervalMax: 5 * time.Minute, PollIntervalGrowsAfter: 10 * time.Second}
	for _, c := range []struct {
		tool *Tool
		age  time.Duration
		want time.Duration
	}{
		{defaults, -time.Hour, time.Second}, // a clock ahead of the engine's
		{defaults, 0, time.Second},
		{defaults, 59 * time.Second, time.Second},
		{defaults, time.Minute, time.Second},
		{defaults, 90 * time.Second, 1500 * time.Millisecond},
		{defaults, 2 * time.Minute, 2 * time.Second},
		{defaults, 10*time.Minute + 30*time.Second, 10500 * time.Millisecond},
		{defaults, 29 * time.Minute, 29 * time.Second},
		{defaults, 30 * time.Minute, 30 * time.Second},
		{defaults, 2 * time.Hour, 30 * time.Second},
		{defaults, 1000 * time.Hour, 30 * time.Second},
		{defaults, time.Minute + 7*time.Millisecond + 500*time.Microsecond, time.Second}, // whole milliseconds
		{fixed, 0, 2 * time.Second},
		{fixed, 5 * time.Hour, 2 * time.Second},
		{slow, 10 * time.Second, 5 * time.Second},
		{slow, 20 * time.Second, 10 * time.Second},
		{slow, time.Minute, 30 * time.Second},
		{slow, 10 * time.Minute, 5 * time.Minute},
	} {
		if got := c.tool.PollIntervalAt(c.age); got != c.want {
			t.Errorf("PollIntervalAt(%s) of %s..%s growing after %s = %s, want %s", c.age,
				c.tool.PollInterval, c.tool.PollIntervalMax, c.tool.PollIntervalGrowsAfter, got, c.want)
		}
	}
}

// A reading is fresh for the polling interval at the task's age, at most MaxStaleness.
func TestFreshForIsTheIntervalAtMostMaxStaleness(t *testing.T) {
	tool := &Tool{PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute}
	if got := tool.FreshFor(10 * time.Minute); got != 10*time.Second {
		t.Errorf("FreshFor(10m) with no maxStaleness = %s, want the interval, 10s", got)
	}
	tool.MaxStaleness = 4 * time.Second
	for age, want := range map[time.Duration]time.Duration{0: time.Second, 10 * time.Minute: 4 * time.Second} {
		if got := tool.FreshFor(age); got != want {
			t.Errorf("FreshFor(%s) with a maxStaleness of 4s = %s, want %s", age, got, want)
		}
	}
}

// polls counts the polls of a client that polls a task of the tool at every suggested interval,
// from its start until age.
func polls(tool *Tool, age time.Duration) int {
	n := 0
	for t := tool.PollIntervalAt(0); t <= age; t += tool.PollIntervalAt(t) {
		n++
	}
	return n
}

// The engine calls per task that docs/mapping.md's table shows (a running task costs one Describe a
// poll), and the economy over a two-hour task: at most a tenth of a fixed 1-second poll's.
func TestPollsPerTaskHour(t *testing.T) {
	adaptive := &Tool{PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute}
	fixed := &Tool{PollInterval: time.Second, PollIntervalMax: time.Second, PollIntervalGrowsAfter: time.Minute}
	for _, c := range []struct {
		age             time.Duration
		adaptive, fixed int
	}{
		{time.Minute, 60, 60},
		{10 * time.Minute, 199, 600},
		{30 * time.Minute, 265, 1800},
		{time.Hour, 325, 3600},
		{2 * time.Hour, 445, 7200},
		{8 * time.Hour, 1165, 28800},
		{24 * time.Hour, 3085, 86400},
	} {
		a, f := polls(adaptive, c.age), polls(fixed, c.age)
		if a != c.adaptive || f != c.fixed {
			t.Errorf("polls over %s: adaptive %d, fixed %d; docs/mapping.md says %d and %d", c.age, a, f, c.adaptive, c.fixed)
		}
	}
	if a, f := polls(adaptive, 2*time.Hour), polls(fixed, 2*time.Hour); a*10 > f {
		t.Errorf("a two-hour task costs %d polls, more than a tenth of a fixed 1-second poll's %d", a, f)
	}
}
