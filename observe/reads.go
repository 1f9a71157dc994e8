package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskgate/taskgate/adapters/budget"
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

var cacheBytesDesc = prometheus.NewDesc("taskgate_engine_cache_bytes",
	"About how many bytes of executions' readings and outcomes this process keeps to answer reads again, by engine block (at most its share of --cache-budget).",
	[]string{"engine"}, nil)

// cacheCollector reads the bytes the server's caches hold when scraped.
type cacheCollector struct {
	held func() map[string]int64
}

func (cacheCollector) Describe(ch chan<- *prometheus.Desc) { ch <- cacheBytesDesc }

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for engine, n := range c.held() {
		ch <- prometheus.MustNewConstMetric(cacheBytesDesc, prometheus.GaugeValue, float64(n), engine)
	}
}

var (
	budgetDesc = prometheus.NewDesc("taskgate_engine_read_budget",
		"The read budget of an engine block in this process, in reads per second (its mapping budget, split by --replicas).",
		[]string{"engine"}, nil)
	rateDesc = prometheus.NewDesc("taskgate_engine_read_rate",
		"The reads per second the budget allows now: the budget, less after the engine throttled reads (cut to 70% on a throttle, a tenth given back per quiet second).",
		[]string{"engine"}, nil)
	tokensDesc = prometheus.NewDesc("taskgate_engine_read_tokens_total",
		"Tokens of the read budget spent: engine calls made by reads of executions.",
		[]string{"engine"}, nil)
	refusalsDesc = prometheus.NewDesc("taskgate_engine_read_refusals_total",
		"Reads the budget refused for want of a token (answered from the newest reading, or, with none, a retryable error).",
		[]string{"engine"}, nil)
	throttlesDesc = prometheus.NewDesc("taskgate_engine_throttles_total",
		"Reads the engine itself throttled (ThrottlingException, ResourceExhausted).",
		[]string{"engine"}, nil)
	loadDesc = prometheus.NewDesc("taskgate_engine_read_load",
		"By how much the running tasks' readings outlast their polling curves so that what they ask fits the rate (1: not at all); the pollIntervalMs told to clients grows with it.",
		[]string{"engine"}, nil)
)

// budgetCollector reads the server's read budgets when scraped.
type budgetCollector struct {
	budgets func() map[string]budget.Stats
}

func (budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{budgetDesc, rateDesc, tokensDesc, refusalsDesc, throttlesDesc, loadDesc} {
		ch <- d
	}
}

func (c budgetCollector) Collect(ch chan<- prometheus.Metric) {
	for engine, s := range c.budgets() {
		ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, s.Budget.ReadsPerSecond, engine)
		ch <- prometheus.MustNewConstMetric(rateDesc, prometheus.GaugeValue, s.Rate, engine)
		ch <- prometheus.MustNewConstMetric(tokensDesc, prometheus.CounterValue, float64(s.Spent), engine)
		ch <- prometheus.MustNewConstMetric(refusalsDesc, prometheus.CounterValue, float64(s.Refused), engine)
		ch <- prometheus.MustNewConstMetric(throttlesDesc, prometheus.CounterValue, float64(s.Throttled), engine)
		ch <- prometheus.MustNewConstMetric(loadDesc, prometheus.GaugeValue, s.Stretch, engine)
	}
}

var (
	sweepsDesc = prometheus.NewDesc("taskgate_engine_sweeps_total",
		"What the sweeps of running tasks did, by engine block and what: pages (listing calls made), confirms (reads of tasks a sweep no longer showed running), failures (sweeps the engine or the budget refused), notices (receives from the block's event source).",
		[]string{"engine", "what"}, nil)
	listingDesc = prometheus.NewDesc("taskgate_engine_sweep_listing_seconds_total",
		"Time the sweeps' listing calls took, by engine block, waits for the read budget's tokens included: rising by about a second a second, the sweeps list as often as the budget lets them, and readings age.",
		[]string{"engine"}, nil)
	followedDesc = prometheus.NewDesc("taskgate_engine_swept_tasks",
		"Running tasks the sweeps follow now (asked about in the last two minutes), by engine block.",
		[]string{"engine"}, nil)
	sweepGroupDesc = prometheus.NewDesc("taskgate_engine_sweep_group_tasks",
		"Running tasks the sweeps follow now, by engine block, sweep group (the targets one listing call reads, as the driver names them: one state machine, or every target of a block whose engine lists across them) and how they are kept fresh: listing (a listing per round) or reads (the tasks' own reads at their curves, when the group's listing takes more calls than its tasks).",
		[]string{"engine", "group", "how"}, nil)
)

// sweepsCollector reads what the sweeps did when scraped.
type sweepsCollector struct {
	sweeps func() map[string]coalesce.SweepCounts
}

func (sweepsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sweepsDesc
	ch <- listingDesc
	ch <- followedDesc
	ch <- sweepGroupDesc
}

func (c sweepsCollector) Collect(ch chan<- prometheus.Metric) {
	for engine, n := range c.sweeps() {
		for what, v := range map[string]uint64{"pages": n.Pages, "confirms": n.Confirms, "failures": n.Failures, "notices": n.Notices} {
			ch <- prometheus.MustNewConstMetric(sweepsDesc, prometheus.CounterValue, float64(v), engine, what)
		}
		ch <- prometheus.MustNewConstMetric(listingDesc, prometheus.CounterValue, n.Listing.Seconds(), engine)
		ch <- prometheus.MustNewConstMetric(followedDesc, prometheus.GaugeValue, float64(n.Followed), engine)
		for group, g := range n.Groups {
			how := "listing"
			if g.ByReads {
				how = "reads"
			}
			ch <- prometheus.MustNewConstMetric(sweepGroupDesc, prometheus.GaugeValue, float64(g.Followed), engine, group, how)
		}
	}
}
