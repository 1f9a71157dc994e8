package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/mapping"
)

// temporalCLI is the Temporal CLI release that builds from the Go module proxy (see README).
const temporalCLI = "github.com/temporalio/cli/cmd/temporal@v1.5.1"

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var tf transportFlags
	tf.register(fs, "127.0.0.1:8080")
	port := fs.Int("temporal-port", 7233, "port of the local Temporal dev server (its web UI is on port+1000)")
	sfnEndpoint := fs.String("sfn-endpoint", "", "also create the Step Functions examples in this endpoint (e.g. a local emulator) and serve them")
	sfnRole := fs.String("sfn-role-arn", "arn:aws:iam::123456789012:role/taskgate-examples", "execution role for the Step Functions examples")
	var configs listFlag
	fs.Var(&configs, "config", "serve this mapping file or folder (repeatable) instead of the built-in example's, next to the example worker")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if err := tf.check(); err != nil {
		return err
	}
	if tf.stdio {
		tf.http = ""
		stdout = stderr // standard output carries the protocol
	}
	state, err := devDir()
	if err != nil {
		return err
	}

	address, ui := os.Getenv("TEMPORAL_ADDRESS"), ""
	if address == "" {
		srv, err := startTemporal(ctx, state, *port, stderr)
		if err != nil {
			return err
		}
		defer srv.Stop()
		address = srv.FrontendHostPort()
		ui = fmt.Sprintf("http://127.0.0.1:%d", *port+1000)
		os.Setenv("TEMPORAL_ADDRESS", address)
	}

	files := []string(configs)
	if len(files) == 0 {
		files = []string{filepath.Join(state, "temporal-tools.yaml")}
		if err := os.WriteFile(files[0], temporalexamples.Mapping, 0o600); err != nil {
			return err
		}
	}
	if *sfnEndpoint != "" {
		f, err := ensureSFNExamples(ctx, state, *sfnEndpoint, *sfnRole, stderr)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	set, err := mapping.Load(files...)
	if err != nil {
		return err
	}
	config, err := os.UserConfigDir()
	if err != nil {
		return err
	}
	tokens, err := codec(set, tf.tokenFormat, tf.tokenKeys, filepath.Join(config, "taskgate", "dev-token-keys"))
	if err != nil {
		return err
	}
	engines, err := connect(ctx, set, adapters.OpenOptions{})
	if err != nil {
		return err
	}
	defer closeAll(engines)

	workerClient, err := client.Dial(client.Options{HostPort: address, Namespace: os.Getenv("TEMPORAL_NAMESPACE"),
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))})
	if err != nil {
		return fmt.Errorf("connecting the example worker to %s: %w", address, err)
	}
	defer workerClient.Close()
	w := worker.New(workerClient, temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the example worker: %w", err)
	}
	defer w.Stop()
	awaitPollers(ctx, workerClient, temporalexamples.TaskQueue)

	return serve(ctx, set, engines, tokens, tf, stderr, func(endpoint string) {
		printWelcome(stdout, endpoint, address, ui)
	})
}

// ensureSFNExamples creates (or updates) the example state machines in the endpoint and returns the
// mapping file that serves them.
func ensureSFNExamples(ctx context.Context, state, endpoint, role string, stderr io.Writer) (string, error) {
	if os.Getenv("AWS_REGION") == "" {
		os.Setenv("AWS_REGION", "us-east-1")
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		// Local emulators accept any credentials; real endpoints get the standard chain.
		os.Setenv("AWS_ACCESS_KEY_ID", "taskgate-dev")
		os.Setenv("AWS_SECRET_ACCESS_KEY", "taskgate-dev")
	}
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Region: os.Getenv("AWS_REGION"), Endpoint: endpoint})
	if err != nil {
		return "", err
	}
	arns, err := sfnexamples.Ensure(ctx, e.Client(), role)
	if err != nil {
		return "", fmt.Errorf("creating the Step Functions examples in %s: %w", endpoint, err)
	}
	// The mapping names the machines by ARN: take the account from one the endpoint gave.
	if parts := strings.Split(arns[sfnexamples.WaitAndEcho], ":"); len(parts) > 4 {
		os.Setenv("SFN_ACCOUNT", parts[4])
	}
	os.Setenv("SFN_ENDPOINT", endpoint)
	fmt.Fprintf(stderr, "taskgate: %d Step Functions example state machines ready in %s\n", len(arns), endpoint)
	f := filepath.Join(state, "stepfunctions-tools.yaml")
	return f, os.WriteFile(f, sfnexamples.Mapping, 0o600)
}

// awaitPollers gives the worker just started a moment to poll its queue, so that the startup check
// does not warn about a queue that is about to be served.
func awaitPollers(ctx context.Context, c client.Client, queue string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		d, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil || len(d.GetPollers()) > 0 || ctx.Err() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func devDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "taskgate", "dev")
	return dir, os.MkdirAll(dir, 0o700)
}

// startTemporal starts a local Temporal dev server whose history persists in the dev folder, so a
// restarted `taskgate dev` still finds the workflows behind earlier task ids.
func startTemporal(ctx context.Context, state string, port int, stderr io.Writer) (*testsuite.DevServer, error) {
	cli, err := temporalBinary(ctx, stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "taskgate: starting a Temporal dev server on 127.0.0.1:%d\n", port)
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: cli,
		ClientOptions: &client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", port),
			// Standard output may carry the MCP protocol (--stdio): the launcher logs to stderr.
			Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))},
		DBFilename: filepath.Join(state, "temporal.db"),
		EnableUI:   true,
		UIPort:     fmt.Sprint(port + 1000),
		LogLevel:   "error",
		Stdout:     io.Discard,
		Stderr:     stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the Temporal dev server on port %d: %w (is another one running? set TEMPORAL_ADDRESS to use it, or pick --temporal-port)", port, err)
	}
	return srv, nil
}

// temporalBinary finds the Temporal CLI on PATH or in taskgate's tool cache, building it into the
// cache once when it is missing.
func temporalBinary(ctx context.Context, stderr io.Writer) (string, error) {
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	dir := os.Getenv("TASKGATE_TOOLS")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, ".cache", "taskgate-tools")
	}
	bin := filepath.Join(dir, "bin", "temporal")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(stderr, "taskgate: building the Temporal CLI into %s (once; about 3 minutes)\n", filepath.Dir(bin))
	cmd := exec.CommandContext(ctx, "go", "install", temporalCLI)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Dir(bin), "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the Temporal CLI (go install %s): %w; or install `temporal` on PATH, or set TEMPORAL_ADDRESS to a running server", temporalCLI, err)
	}
	return bin, nil
}

func printWelcome(w io.Writer, endpoint, temporalAddr, ui string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\ntaskgate dev is running the built-in example.\n")
	if endpoint == "stdio" {
		fmt.Fprintf(&b, "  MCP:         on standard input/output\n")
	} else {
		fmt.Fprintf(&b, "  MCP:         %s\n", endpoint)
	}
	fmt.Fprintf(&b, "  Temporal:    %s\n", temporalAddr)
	if ui != "" {
		fmt.Fprintf(&b, "  Temporal UI: %s\n", ui)
	}
	fmt.Fprintf(&b, "\nClient config (e.g. .mcp.json):\n")
	if endpoint == "stdio" {
		fmt.Fprintf(&b, "  {\"mcpServers\": {\"taskgate\": {\"command\": \"taskgate\", \"args\": [\"dev\", \"--stdio\"]}}}\n")
	} else {
		fmt.Fprintf(&b, "  {\"mcpServers\": {\"taskgate\": {\"type\": \"http\", \"url\": %q}}}\n", endpoint)
	}
	fmt.Fprintf(&b, "\nCtrl-C stops everything taskgate dev started.\n")
	io.WriteString(w, b.String())
}
