package devenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
)

// temporalCLI is the newest Temporal CLI release that `go install` builds from the Go module proxy
// (the go.mod of later ones has replace directives).
const temporalCLI = "github.com/temporalio/cli/cmd/temporal@v1.5.1"

// startTemporal starts a local Temporal dev server, unless TEMPORAL_ADDRESS names one. Its history
// persists in the dev folder, so a restarted `taskgate dev` still finds the workflows behind
// earlier task ids.
func (e *Env) startTemporal(ctx context.Context, o Options) error {
	if e.Temporal, _ = e.Env.LookupEnv("TEMPORAL_ADDRESS"); e.Temporal != "" {
		return nil
	}
	cli, err := temporalBinary(ctx, o.Cache, o.Log)
	if err != nil {
		return err
	}
	port := o.TemporalPort
	fmt.Fprintf(o.Log, "taskgate: starting a Temporal dev server on 127.0.0.1:%d\n", port)
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  cli,
		ClientOptions: &client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", port), Logger: warnings(o.Log)},
		DBFilename:    filepath.Join(e.Dir, "temporal.db"),
		EnableUI:      true,
		UIPort:        fmt.Sprint(port + 1000),
		LogLevel:      "error",
		Stdout:        io.Discard,
		Stderr:        o.Log,
	})
	if err != nil {
		return fmt.Errorf("starting the Temporal dev server on port %d: %w (is another one running? set TEMPORAL_ADDRESS to use it, or pick --temporal-port)", port, err)
	}
	e.stop = append(e.stop, func() { srv.Stop() })
	e.Temporal = srv.FrontendHostPort()
	e.TemporalUI = fmt.Sprintf("http://127.0.0.1:%d", port+1000)
	e.Env = e.Env.With("TEMPORAL_ADDRESS=" + e.Temporal)
	return nil
}

// startWorker runs the example worker and gives it a moment to poll its queue, so that the startup
// check does not warn about a queue that is about to be served.
func (e *Env) startWorker(ctx context.Context, logTo io.Writer) error {
	namespace, _ := e.Env.LookupEnv("TEMPORAL_NAMESPACE")
	c, err := client.Dial(client.Options{HostPort: e.Temporal, Namespace: namespace, Logger: warnings(logTo)})
	if err != nil {
		return fmt.Errorf("connecting the example worker to %s: %w", e.Temporal, err)
	}
	e.stop = append(e.stop, c.Close)
	w := worker.New(c, temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the example worker: %w", err)
	}
	e.stop = append(e.stop, w.Stop)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		d, err := c.DescribeTaskQueue(ctx, temporalexamples.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil || len(d.GetPollers()) > 0 || ctx.Err() != nil {
			break
		}
	}
	return nil
}

// warnings is the Temporal SDK's logger, at warn and above: standard output may carry the MCP
// protocol (--stdio), so it writes to w.
func warnings(w io.Writer) log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// temporalBinary finds the Temporal CLI on PATH or in the tools folder, building it there once
// when it is missing.
func temporalBinary(ctx context.Context, cache string, logTo io.Writer) (string, error) {
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	bin := filepath.Join(toolsDir(cache), "bin", "temporal")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(logTo, "taskgate: building the Temporal CLI into %s (once; about 3 minutes)\n", filepath.Dir(bin))
	cmd := exec.CommandContext(ctx, "go", "install", temporalCLI)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Dir(bin), "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the Temporal CLI (go install %s): %w; or install `temporal` on PATH, or set TEMPORAL_ADDRESS to a running server", temporalCLI, err)
	}
	return bin, nil
}
