package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// summary is what a run found: the JSON it writes and the table it prints.
type summary struct {
	Run         string `json:"run"`
	Duration    string `json:"duration"`
	Clients     int    `json:"clients"`
	Replicas    int    `json:"replicaCount"`
	Seed        uint64 `json:"seed"`
	Machine     string `json:"machine"`
	LoadAverage string `json:"loadAverageAtEnd"`

	// Started counts logical calls begun; CompletedCorrectly those answered as the workflow must
	// (cancelled, for the calls that cancel); Lost those never answered by the end of the drain;
	// Duplicated the extra executions of calls with an idempotency key; Wrong the wrong answers.
	Started            int `json:"started"`
	CompletedCorrectly int `json:"completedCorrectly"`
	Lost               int `json:"lost"`
	Duplicated         int `json:"duplicated"`
	Wrong              int `json:"wrong"`
	// NonRetryableErrors are errors not marked retryable, seen by clients for work that was not
	// cancelled; those of the calls that cancel are apart.
	NonRetryableErrors          int `json:"nonRetryableErrors"`
	NonRetryableErrorsOfCancels int `json:"nonRetryableErrorsOfCancellingCalls"`
	RetryableErrors             int `json:"retryableErrors"`
	ReplicaKills                int `json:"replicaKills"`
	// Listens are the subscriptions/listen requests of clients on 2026-07-28 (Relistens: again
	// after a stream ended before its task); EndsNotified and EndsPolled the ends those clients
	// saw first in a notification and in a poll's answer.
	Listens        int `json:"listens"`
	Relistens      int `json:"relistens"`
	EndsNotified   int `json:"endsNotified"`
	EndsPolled     int `json:"endsPolled"`
	EngineRestarts int `json:"engineRestarts"`
	NetworkFaults  int `json:"networkFaults"`

	// Poll latency (every poll request, answered or given up), fault-free (after the warm-up,
	// before the first fault), outside fault windows after that, and within them.
	PollP50Ms     windows                `json:"pollP50Ms"`
	PollP99Ms     windows                `json:"pollP99Ms"`
	Polls         pollCounts             `json:"polls"`
	PollsByEngine map[string]enginePolls `json:"pollsByEngine"`
	// Lateness of correct answers past the moment the workflow ended, as the client knows it.
	AnsweredLateP50Ms float64 `json:"answeredLateP50Ms"`
	AnsweredLateP99Ms float64 `json:"answeredLateP99Ms"`
	AnsweredLateMaxMs float64 `json:"answeredLateMaxMs"`

	Executions executionCounts          `json:"executions"`
	ByDialect  map[string]*dialectStats `json:"byDialect"`
	Replica    []replicaSummary         `json:"replicas"`
	Faults     []faultRecord            `json:"faults"`
	// AuditErrors say which engines could not be asked for their executions at the end: their
	// calls' executions are not counted.
	AuditErrors []string `json:"auditErrors,omitempty"`
	// UnplannedOutages are the times an engine did not answer the soak itself outside its faults.
	UnplannedOutages []outage      `json:"unplannedOutages"`
	Series           []seriesPoint `json:"series"`

	RetryableByKind       map[string]int `json:"retryableByKind"`
	NonRetryableByMessage map[string]int `json:"nonRetryableByMessage"`
	NonRetryableOfCancels map[string]int `json:"nonRetryableOfCancellingCallsByMessage"`
	LostCalls             []string       `json:"lostCalls,omitempty"`
	WrongCalls            []string       `json:"wrongCalls,omitempty"`

	Targets []target `json:"targets"`
	// Passed: no result lost, duplicated or wrong, as far as the audit could tell (what CI gates
	// on).
	Passed bool `json:"passed"`
}

type windows struct {
	FaultFree     float64 `json:"faultFree"`
	OutsideFaults float64 `json:"outsideFaults"`
	InFaults      float64 `json:"inFaults"`
}

type enginePolls struct {
	P50Ms windows `json:"p50Ms"`
	P99Ms windows `json:"p99Ms"`
}

type pollCounts struct {
	FaultFree     int `json:"faultFree"`
	OutsideFaults int `json:"outsideFaults"`
	InFaults      int `json:"inFaults"`
	Unanswered    int `json:"unanswered"`
}

// executionCounts is what the engines hold, counted per logical call by the audit.
type executionCounts struct {
	Total int `json:"total"`
	// UnkeyedDuplicates are the extra executions of calls whose dialect has no idempotency key:
	// a start the client retried after an answer it never got.
	UnkeyedDuplicates int `json:"unkeyedDuplicates"`
	// RetriedStarts are calls whose start took more than one request; CutStarts those among
	// them with a request that may have reached a replica.
	RetriedStarts int `json:"retriedStarts"`
	CutStarts     int `json:"cutStarts"`
	// AcknowledgedWithoutExecution are calls whose start was answered and that no engine holds.
	AcknowledgedWithoutExecution int `json:"acknowledgedWithoutExecution"`
}

type dialectStats struct {
	Started           int `json:"started"`
	Correct           int `json:"correct"`
	Wrong             int `json:"wrong"`
	Lost              int `json:"lost"`
	RetriedStarts     int `json:"retriedStarts"`
	CutStarts         int `json:"cutStarts"`
	ExtraExecutions   int `json:"extraExecutions"`
	NonRetryableError int `json:"callsWithNonRetryableErrors,omitempty"`
}

type replicaSummary struct {
	Name string `json:"name"`
	// Kills is how often the replica was killed; its warm-up figures are its first process's.
	Kills         int   `json:"kills"`
	StartFailures int   `json:"startFailures"`
	IdleAtStart   usage `json:"idleAtStart"`
	WarmUp        usage `json:"afterWarmUp"`
	End           usage `json:"atEnd"`
	Idle          usage `json:"idleAfterDrain"`
}

type target struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Met  bool   `json:"met"`
}

// summarize counts the records against the engines' executions (counts, by marker, of the
// engines whose audit has no error).
func (s *soak) summarize(u []replicaUsage, counts map[string]int, audit map[string]error, planned int) *summary {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := &summary{Run: s.id, Duration: s.o.duration.String(), Clients: s.o.clients, Replicas: s.o.replicas, Seed: s.o.seed,
		Machine:     fmt.Sprintf("%d cores, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version()),
		LoadAverage: loadAverage(), ByDialect: map[string]*dialectStats{}, Faults: s.faultLog, Series: s.series, UnplannedOutages: s.outages,
		RetryableByKind: s.stats.retryables, NonRetryableByMessage: s.stats.nonRetryables, NonRetryableOfCancels: s.stats.cancelledWork,
		Listens: s.stats.listens, Relistens: s.stats.relistens, EndsNotified: s.stats.endsNotified, EndsPolled: s.stats.endsPolled}
	for _, d := range dialects {
		sum.ByDialect[d] = &dialectStats{}
	}
	var late []time.Duration
	for _, r := range s.stats.records {
		d := sum.ByDialect[r.dialect]
		sum.Started++
		d.Started++
		switch r.outcome {
		case outcomeCorrect:
			sum.CompletedCorrectly++
			d.Correct++
			if r.kind != callCancel && r.finished.After(r.due) {
				late = append(late, r.finished.Sub(r.due))
			}
		case outcomeWrong:
			sum.Wrong++
			d.Wrong++
			sum.WrongCalls = appendSample(sum.WrongCalls, fmt.Sprintf("%s %s on %s (%s): %s", r.marker, r.tool, r.engine, r.dialect, r.detail))
		default:
			sum.Lost++
			d.Lost++
			state := "started, never answered"
			if r.acked.IsZero() {
				state = fmt.Sprintf("never started (%d start requests)", r.startTries)
			}
			sum.LostCalls = appendSample(sum.LostCalls, fmt.Sprintf("%s %s on %s (%s): %s", r.marker, r.tool, r.engine, r.dialect, state))
		}
		if r.startTries > 1 {
			sum.Executions.RetriedStarts++
			d.RetriedStarts++
			if r.startCut {
				sum.Executions.CutStarts++
				d.CutStarts++
			}
		}
		if audit[r.engine] != nil {
			continue
		}
		n := counts[r.marker]
		sum.Executions.Total += n
		switch {
		case n == 0 && !r.acked.IsZero():
			sum.Executions.AcknowledgedWithoutExecution++
		case n > 1 && r.keyed:
			sum.Duplicated += n - 1
			d.ExtraExecutions += n - 1
		case n > 1:
			sum.Executions.UnkeyedDuplicates += n - 1
			d.ExtraExecutions += n - 1
		}
	}
	for _, engine := range []string{engineTemporal, engineSFN} {
		if err := audit[engine]; err != nil {
			sum.AuditErrors = append(sum.AuditErrors, err.Error())
		}
	}
	sum.NonRetryableErrors = total(s.stats.nonRetryables)
	sum.NonRetryableErrorsOfCancels = total(s.stats.cancelledWork)
	sum.RetryableErrors = total(s.stats.retryables)
	sum.AnsweredLateP50Ms, sum.AnsweredLateP99Ms, sum.AnsweredLateMaxMs = percentile(late, 50), percentile(late, 99), percentile(late, 100)
	for _, f := range s.faultLog {
		switch f.Kind {
		case faultKill:
			sum.ReplicaKills++
		case faultRestart:
			sum.EngineRestarts++
		default:
			sum.NetworkFaults++
		}
	}
	s.pollFigures(sum)
	for i, r := range s.replicas {
		r.mu.Lock()
		sum.Replica = append(sum.Replica, replicaSummary{Name: r.name(), Kills: r.kills, StartFailures: r.startFailures,
			IdleAtStart: u[i].IdleAtStart, WarmUp: u[i].WarmUp, End: u[i].End, Idle: u[i].Idle})
		r.mu.Unlock()
	}
	sum.targets(planned)
	return sum
}

// pollFigures splits the polls by fault window, for all engines and for each.
func (s *soak) pollFigures(sum *summary) {
	warm := min(max(s.o.duration/10, 20*time.Second), time.Minute)
	faultFreeFrom, faultsFrom := s.begin.Add(warm), s.begin.Add(2*warm)
	type split struct{ free, outside, in []time.Duration }
	all, byEngine := &split{}, map[string]*split{engineTemporal: {}, engineSFN: {}}
	for _, p := range s.stats.polls {
		if !p.ok {
			sum.Polls.Unanswered++
		}
		for _, sp := range []*split{all, byEngine[p.engine]} {
			switch {
			case p.at.Before(faultFreeFrom):
			case p.at.Before(faultsFrom) && !inAny(s.windows, p.at, p.d):
				sp.free = append(sp.free, p.d)
			case inAny(s.windows, p.at, p.d):
				sp.in = append(sp.in, p.d)
			default:
				sp.outside = append(sp.outside, p.d)
			}
		}
	}
	figures := func(sp *split) (p50, p99 windows) {
		return windows{percentile(sp.free, 50), percentile(sp.outside, 50), percentile(sp.in, 50)},
			windows{percentile(sp.free, 99), percentile(sp.outside, 99), percentile(sp.in, 99)}
	}
	sum.Polls.FaultFree, sum.Polls.OutsideFaults, sum.Polls.InFaults = len(all.free), len(all.outside), len(all.in)
	sum.PollP50Ms, sum.PollP99Ms = figures(all)
	sum.PollsByEngine = map[string]enginePolls{}
	for engine, sp := range byEngine {
		p50, p99 := figures(sp)
		sum.PollsByEngine[engine] = enginePolls{P50Ms: p50, P99Ms: p99}
	}
}

// targets checks the targets; Passed is the CI gate: nothing lost, duplicated or wrong.
func (sum *summary) targets(planned int) {
	add := func(name, want, got string, met bool) {
		sum.Targets = append(sum.Targets, target{name, want, got, met})
	}
	add("lost", "0", fmt.Sprint(sum.Lost), sum.Lost == 0)
	add("duplicated", "0", fmt.Sprint(sum.Duplicated), sum.Duplicated == 0)
	add("wrong", "0", fmt.Sprint(sum.Wrong), sum.Wrong == 0)
	add("non-retryable errors", "0", fmt.Sprint(sum.NonRetryableErrors), sum.NonRetryableErrors == 0)
	// A listener polls at a tenth of the pace as well, so an end it saw in a poll first is one
	// that its notification missed or brought late.
	add("ends told to listeners", "most seen first in a notification", fmt.Sprintf("%d notified first, %d polled first", sum.EndsNotified, sum.EndsPolled),
		sum.EndsNotified > sum.EndsPolled)
	add("faults injected", fmt.Sprint(planned), fmt.Sprint(len(sum.Faults)), len(sum.Faults) == planned)
	add("executions counted on every engine", "the audit asked both engines", fmt.Sprintf("%d audit errors %v", len(sum.AuditErrors), sum.AuditErrors),
		len(sum.AuditErrors) == 0)
	add("engines up outside the planned faults", "no unplanned outage", fmt.Sprintf("%d unplanned outages %v", len(sum.UnplannedOutages), sum.UnplannedOutages),
		len(sum.UnplannedOutages) == 0)
	// Memory is compared under the same load; goroutines idle, since under load their number is
	// mostly that of the requests in flight at the moment.
	for _, r := range sum.Replica {
		if r.Kills > 0 {
			continue // its first figures are another process's
		}
		rssOK := float64(r.End.RSSBytes) <= 1.1*float64(r.WarmUp.RSSBytes)
		gOK := float64(r.Idle.Goroutines) <= 1.1*float64(r.IdleAtStart.Goroutines)
		add(r.Name+" RSS at end", "within 10% of after warm-up", fmt.Sprintf("%.1f MB -> %.1f MB", mb(r.WarmUp.RSSBytes), mb(r.End.RSSBytes)), rssOK)
		add(r.Name+" goroutines idle after the drain", "within 10% of idle at start", fmt.Sprintf("%d -> %d", r.IdleAtStart.Goroutines, r.Idle.Goroutines), gOK)
	}
	p99 := sum.PollP99Ms
	add("poll p99 outside fault windows", "at most 2x the fault-free p99", fmt.Sprintf("%.1f ms (fault-free %.1f ms)", p99.OutsideFaults, p99.FaultFree),
		p99.OutsideFaults <= 2*p99.FaultFree)
	for _, f := range sum.Faults {
		if f.Kind == faultKill {
			worst := -1.0
			for _, ms := range f.KilledRecoveryMs {
				worst = max(worst, ms)
			}
			missing := slices.Contains(slices.Collect(maps.Values(f.KilledRecoveryMs)), -1) || len(f.KilledRecoveryMs) == 0
			add("recovery after killing "+f.Replica, "its first poll of each engine's task answered within 5 s of serving again",
				fmt.Sprintf("%v ms", f.KilledRecoveryMs), !missing && worst <= 5000)
			continue
		}
		if f.Kind != faultRestart {
			continue
		}
		worst := slices.Max(append(slices.Clone(f.RecoveryMs), f.ReadyMs...))
		add("recovery after the Temporal restart", "polls and /readyz within 2 s of its return on every replica",
			fmt.Sprintf("polls %v ms, /readyz %v ms", f.RecoveryMs, f.ReadyMs), worst >= 0 && worst <= 2000 && !slices.Contains(f.ReadyMs, -1) && !slices.Contains(f.RecoveryMs, -1))
	}
	// Without the audit of an engine, its duplicates are unknown.
	sum.Passed = sum.Lost == 0 && sum.Duplicated == 0 && sum.Wrong == 0 && len(sum.AuditErrors) == 0
}

func (sum *summary) print(w io.Writer) {
	fmt.Fprintf(w, "\nsoak %s: %s, %d clients, %d replicas, seed %d, load average at end %s\n", sum.Run, sum.Duration, sum.Clients, sum.Replicas, sum.Seed, sum.LoadAverage)
	fmt.Fprintf(w, "  calls: %d started, %d correct, %d lost, %d wrong; %d duplicated executions of keyed calls, %d of unkeyed ones (%d starts retried, %d of them cut)\n",
		sum.Started, sum.CompletedCorrectly, sum.Lost, sum.Wrong, sum.Duplicated, sum.Executions.UnkeyedDuplicates, sum.Executions.RetriedStarts, sum.Executions.CutStarts)
	fmt.Fprintf(w, "  errors: %d retryable, %d non-retryable (%d more of calls that cancel)\n", sum.RetryableErrors, sum.NonRetryableErrors, sum.NonRetryableErrorsOfCancels)
	fmt.Fprintf(w, "  faults: %d replica kills, %d engine restarts, %d network faults\n", sum.ReplicaKills, sum.EngineRestarts, sum.NetworkFaults)
	fmt.Fprintf(w, "  listening (2026-07-28 clients): %d listens (%d again after a stream ended early); ends seen first in a notification %d, in a poll %d\n",
		sum.Listens, sum.Relistens, sum.EndsNotified, sum.EndsPolled)
	fmt.Fprintf(w, "  polls p50/p99 ms: fault-free %.1f/%.1f (%d), outside faults %.1f/%.1f (%d), in faults %.1f/%.1f (%d)\n",
		sum.PollP50Ms.FaultFree, sum.PollP99Ms.FaultFree, sum.Polls.FaultFree, sum.PollP50Ms.OutsideFaults, sum.PollP99Ms.OutsideFaults, sum.Polls.OutsideFaults,
		sum.PollP50Ms.InFaults, sum.PollP99Ms.InFaults, sum.Polls.InFaults)
	for _, e := range []string{engineTemporal, engineSFN} {
		p := sum.PollsByEngine[e]
		fmt.Fprintf(w, "    %s: fault-free %.1f/%.1f, outside faults %.1f/%.1f, in faults %.1f/%.1f\n",
			e, p.P50Ms.FaultFree, p.P99Ms.FaultFree, p.P50Ms.OutsideFaults, p.P99Ms.OutsideFaults, p.P50Ms.InFaults, p.P99Ms.InFaults)
	}
	fmt.Fprintf(w, "  answered late past the workflow's end: p50 %.0f ms, p99 %.0f ms, max %.0f ms\n", sum.AnsweredLateP50Ms, sum.AnsweredLateP99Ms, sum.AnsweredLateMaxMs)
	for _, d := range dialects {
		c := sum.ByDialect[d]
		fmt.Fprintf(w, "  %-20s %5d started, %5d correct, %d lost, %d wrong, %d starts retried (%d cut), %d extra executions\n",
			d, c.Started, c.Correct, c.Lost, c.Wrong, c.RetriedStarts, c.CutStarts, c.ExtraExecutions)
	}
	for _, r := range sum.Replica {
		fmt.Fprintf(w, "  %s: %d kills; idle at start %.1f MB, %d goroutines; after warm-up %.1f MB, %d; at end %.1f MB, %d; idle after drain %.1f MB, %d\n",
			r.Name, r.Kills, mb(r.IdleAtStart.RSSBytes), r.IdleAtStart.Goroutines, mb(r.WarmUp.RSSBytes), r.WarmUp.Goroutines,
			mb(r.End.RSSBytes), r.End.Goroutines, mb(r.Idle.RSSBytes), r.Idle.Goroutines)
	}
	printCounts(w, "non-retryable errors", sum.NonRetryableByMessage)
	printCounts(w, "non-retryable errors of calls that cancel", sum.NonRetryableOfCancels)
	printCounts(w, "retried requests", sum.RetryableByKind)
	for _, l := range sum.LostCalls {
		fmt.Fprintf(w, "  LOST %s\n", l)
	}
	for _, l := range sum.WrongCalls {
		fmt.Fprintf(w, "  WRONG %s\n", l)
	}
	fmt.Fprintln(w, "  targets:")
	for _, t := range sum.Targets {
		verdict := "met"
		if !t.Met {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "    %-6s %s: %s (want %s)\n", verdict, t.Name, t.Got, t.Want)
	}
	if sum.Passed {
		fmt.Fprintln(w, "soak passed: nothing lost, duplicated or wrong")
	} else {
		fmt.Fprintln(w, "soak FAILED: results were lost, duplicated or wrong, or could not be counted")
	}
}

func printCounts(w io.Writer, title string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", title)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	for _, k := range keys {
		fmt.Fprintf(w, "    %6d %s\n", m[k], strings.ReplaceAll(k, "\n", " "))
	}
}

func (sum *summary) write(path string) error {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// appendSample keeps the first 50 lines of a list.
func appendSample(list []string, line string) []string {
	if len(list) >= 50 {
		return list
	}
	return append(list, line)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
