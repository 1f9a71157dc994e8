package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskgate/taskgate/tasks/drift"
)

var (
	driftDesc = prometheus.NewDesc("taskgate_tool_drift",
		"1 when the last answer of a drift check of the tool found that the engine no longer runs what the mapping says, else 0: "+
			"check=target (the target is gone, cannot be served, or its engine warns, as when no worker polls its task queue), "+
			"check=inputs (the inputs of its latest executions no longer fit its inputSchema). A check that was skipped or has not answered yet has no series.",
		[]string{"tool", "check"}, nil)
	driftCheckedDesc = prometheus.NewDesc("taskgate_tool_drift_checked_timestamp_seconds",
		"When the check of taskgate_tool_drift last answered, in seconds since the Unix epoch: a check that could not be made (its engine did not answer) leaves it, and the state, as they were.",
		[]string{"tool", "check"}, nil)
)

// driftCollector reads the drift checks' last answers when scraped.
type driftCollector struct {
	answers func() []drift.Answer
}

func (driftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- driftDesc
	ch <- driftCheckedDesc
}

func (c driftCollector) Collect(ch chan<- prometheus.Metric) {
	for _, a := range c.answers() {
		drifted := 0.0
		if a.Drifted {
			drifted = 1
		}
		ch <- prometheus.MustNewConstMetric(driftDesc, prometheus.GaugeValue, drifted, a.Tool, a.Check)
		ch <- prometheus.MustNewConstMetric(driftCheckedDesc, prometheus.GaugeValue, float64(a.At.UnixMilli())/1000, a.Tool, a.Check)
	}
}

// WatchDrift also reports the last answer of each drift check of each tool (taskgate_tool_drift)
// and when it was given (taskgate_tool_drift_checked_timestamp_seconds).
func (t *Telemetry) WatchDrift(answers func() []drift.Answer) {
	t.registry.MustRegister(driftCollector{answers})
}
