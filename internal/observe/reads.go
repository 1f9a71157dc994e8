package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskgate/taskgate/adapters/coalesce"
)

var readsDesc = prometheus.NewDesc("taskgate_engine_reads_total",
	"Reads of executions (polls) by engine block, operation (describe, outcome) and how they were served: "+
		"engine (a call of their own), shared (another poll's call in flight), fresh (a running execution's reading within the task's polling interval), "+
		"stale (a reading past it: the read budget's load stretched the interval, or the engine or the budget throttled the read), cached (an ended execution's).",
	[]string{"engine", "operation", "served"}, nil)

// readsCollector reads the server's read counters when scraped: polls cost nothing more.
type readsCollector struct {
	reads func() map[string]coalesce.Counts
}

func (readsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- readsDesc }

func (c readsCollector) Collect(ch chan<- prometheus.Metric) {
	for engine, counts := range c.reads() {
		for op, s := range map[string]coalesce.Served{"describe": counts.Describe, "outcome": counts.Outcome} {
			for served, n := range map[string]uint64{"engine": s.Engine, "shared": s.Shared, "fresh": s.Fresh, "stale": s.Stale, "cached": s.Cached} {
				ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(n), engine, op, served)
			}
		}
	}
}
