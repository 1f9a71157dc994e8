// Command worker runs taskgate's example workflows on the task queue taskgate-examples, for a
// deployment of taskgate whose mapping serves them (terraform/examples/kubernetes-temporal). It
// connects as the Temporal CLI and taskgate do: the profile of TEMPORAL_CONFIG_FILE and the
// variables TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and TEMPORAL_TLS_*.
//
//	TEMPORAL_ADDRESS=127.0.0.1:7233 go run ./examples/temporal/worker
package main

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/worker"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return fmt.Errorf("reading the Temporal connection (TEMPORAL_* variables, TEMPORAL_CONFIG_FILE): %w", err)
	}
	c, err := client.Dial(opts)
	if err != nil {
		return fmt.Errorf("connecting to the Temporal frontend at %s: %w; set TEMPORAL_ADDRESS", opts.HostPort, err)
	}
	defer c.Close()
	w := worker.New(c, temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	return w.Run(worker.InterruptCh())
}
