// Command soak runs taskgate as production does, for minutes or hours, while it breaks what
// taskgate stands on, and checks that no client loses a result (issue 20). On loopback it runs:
//
//   - replicas of `taskgate serve` (one binary, shared token keys) behind a round-robin front of
//     its own, so that every request may land on another replica;
//   - a Temporal dev server with a database file, restarted once during the run, and the Step
//     Functions endpoint of SFN_ENDPOINT; the replicas reach each through a TCP fault proxy
//     (test/faults);
//   - the example Temporal worker (examples/temporal/worker), in a process of its own;
//   - a few hundred clients of every dialect, each starting tools with unique inputs, polling as
//     SDKs do (following the suggested interval, retrying what is marked retryable), answering
//     questions, cancelling, starting with an idempotency key twice, and checking every result;
//   - faults on a schedule: SIGKILL of a replica every few minutes, the Temporal restart, and
//     latency, bandwidth limits, connection resets and a blackhole between the replicas and each
//     engine.
//
// Then it asks each engine how many executions every call started, prints a summary and writes
// it as JSON. The exit status is 1 when a result was lost, duplicated or wrong.
//
//	scripts/soak -duration 3m -json soak.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	// The SDKs' informational lines would mix with the progress.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !sum.Passed {
		os.Exit(1)
	}
}

type options struct {
	duration, drain time.Duration
	clients         int
	replicas        int
	sfnShare        float64
	jsonFile        string
	taskgate        string
	worker          string
	temporalCLI     string
	sfnEndpoint     string
	killEvery       time.Duration
	killDown        time.Duration
	outage          time.Duration
	requestTimeout  time.Duration
	only            map[string]bool
	seed            uint64
	work            string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 3*time.Minute, "how long clients start new calls; the faults fall within it")
	fs.DurationVar(&o.drain, "drain", 2*time.Minute, "how long calls still open at the end may take to finish")
	fs.IntVar(&o.clients, "clients", 210, "concurrent clients, spread evenly over the dialects")
	fs.IntVar(&o.replicas, "replicas", 3, "taskgate replicas behind the front")
	fs.Float64Var(&o.sfnShare, "sfn-share", 0.3, "share of the calls that go to Step Functions")
	fs.StringVar(&o.jsonFile, "json", "", "write the summary as JSON to `FILE`")
	fs.StringVar(&o.taskgate, "taskgate", "", "the taskgate binary (default: built from this module)")
	fs.StringVar(&o.worker, "worker", "", "the example worker binary, examples/temporal/worker (default: built from this module)")
	fs.StringVar(&o.temporalCLI, "temporal-cli", "", "the Temporal CLI (default: $TEMPORAL_CLI, which scripts/with-engines sets, else temporal on PATH)")
	fs.StringVar(&o.sfnEndpoint, "sfn-endpoint", os.Getenv("SFN_ENDPOINT"), "the Step Functions endpoint (default $SFN_ENDPOINT)")
	fs.DurationVar(&o.killEvery, "kill-every", 0, "time between replica kills (default: a twelfth of -duration, between 1m and 4m)")
	fs.DurationVar(&o.killDown, "kill-down", 5*time.Second, "how long a killed replica stays down")
	fs.DurationVar(&o.outage, "outage", 10*time.Second, "how long the Temporal server stays stopped")
	fs.DurationVar(&o.requestTimeout, "request-timeout", 20*time.Second, "how long a client waits for an answer before it retries")
	fs.Func("faults", "only these kinds of fault, comma-separated: "+strings.Join(faultKinds, ", ")+" (default: all)", func(v string) error {
		o.only = map[string]bool{}
		for _, k := range strings.Split(v, ",") {
			if !slices.Contains(faultKinds, k) {
				return fmt.Errorf("unknown fault %q: want some of %s", k, strings.Join(faultKinds, ", "))
			}
			o.only[k] = true
		}
		return nil
	})
	fs.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()), "seed of the clients' choices")
	fs.StringVar(&o.work, "work", "", "folder for the logs and databases (default: a new temporary folder, kept)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.sfnEndpoint == "" {
		return o, errors.New("no Step Functions endpoint: set SFN_ENDPOINT or -sfn-endpoint (scripts/soak starts one)")
	}
	if o.duration < time.Minute {
		return o, errors.New("-duration must be at least 1m: the faults need room")
	}
	if o.clients < 1 || o.replicas < 1 {
		return o, errors.New("-clients and -replicas must be at least 1")
	}
	if o.killEvery == 0 {
		o.killEvery = min(max(o.duration/12, time.Minute), 4*time.Minute)
	}
	if o.temporalCLI == "" {
		o.temporalCLI = findTemporalCLI()
	}
	return o, nil
}

// findTemporalCLI is the CLI scripts/with-engines names in TEMPORAL_CLI, else temporal on PATH.
func findTemporalCLI() string {
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p
	}
	return "temporal"
}
