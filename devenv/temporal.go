package devenv

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
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

// The Temporal CLI's module, built in a folder of its own with these as its go.mod and go.sum: a
// release of the CLI with a dependency pinned past a bug of that release (go.mod.in says which).
var (
	//go:embed temporalcli/go.mod.in
	temporalCLIMod []byte
	//go:embed temporalcli/go.sum.in
	temporalCLISum []byte
)

// temporalCLIDir is the folder of the tools (TASKGATE_TOOLS, else cache) that the CLI is built
// into, named after its go.sum as scripts/with-engines names it, so that a change of the pinned
// module builds it anew.
func temporalCLIDir(cache string) string {
	sum := sha256.Sum256(temporalCLISum)
	return filepath.Join(toolsDir(cache), "temporal-cli-"+hex.EncodeToString(sum[:6]))
}

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
	dir := temporalCLIDir(cache)
	bin := filepath.Join(dir, "temporal")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(logTo, "taskgate: building the Temporal CLI into %s (once; about 3 minutes)\n", dir)
	if err := buildTemporalCLI(ctx, bin, logTo); err != nil {
		return "", fmt.Errorf("building the Temporal CLI: %w; or install `temporal` on PATH, or set TEMPORAL_ADDRESS to a running server", err)
	}
	return bin, nil
}

// buildTemporalCLI builds the CLI's module into bin, whole or not at all: another taskgate dev
// starting meanwhile (clients spawn one each) finds none, or all of it.
func buildTemporalCLI(ctx context.Context, bin string, logTo io.Writer) error {
	src, err := os.MkdirTemp("", "taskgate-temporal-cli-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	if err := errors.Join(os.WriteFile(filepath.Join(src, "go.mod"), temporalCLIMod, 0o644),
		os.WriteFile(filepath.Join(src, "go.sum"), temporalCLISum, 0o644), os.MkdirAll(filepath.Dir(bin), 0o755)); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "github.com/temporalio/cli/cmd/temporal")
	cmd.Dir, cmd.Env = src, append(os.Environ(), "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("go build github.com/temporalio/cli/cmd/temporal: %w", err)
	}
	return os.Rename(tmp, bin)
}
