package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
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

// temporalCLI is the newest Temporal CLI release that `go install` builds from the Go module proxy
// (the go.mod of later ones has replace directives).
const temporalCLI = "github.com/temporalio/cli/cmd/temporal@v1.5.1"

// devOptions are dev's flags.
type devOptions struct {
	tf                   transportFlags
	temporalPort         int
	sfnEndpoint, sfnRole string
	restate              bool
	restatePort          int
	configs              []string
}

func newDevCmd() *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev [--stdio | --http ADDR] [--sfn-endpoint URL] [--restate] [--config PATH]",
		Short: "Run the built-in example (or your mapping) on a local Temporal dev server",
		Long: `Starts a local Temporal dev server (unless TEMPORAL_ADDRESS names one), runs the example
worker and serves the example tools, or the mapping of --config next to the example worker.
--sfn-endpoint also creates the Step Functions examples in that endpoint and serves them.
--restate also runs a Restate server (unless RESTATE_ADMIN_URL names one) with the Restate
examples' deployment, and serves them.
Everything dev builds or keeps (the Temporal CLI, the dev server's history, the token key) is
in one folder of the user's cache, <cache>/taskgate; TASKGATE_TOOLS moves the built tools.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.tf.register(cmd.Flags(), "127.0.0.1:8080")
	cmd.Flags().IntVar(&o.temporalPort, "temporal-port", 7233, "port of the local Temporal dev server (its web UI is on port+1000)")
	cmd.Flags().StringVar(&o.sfnEndpoint, "sfn-endpoint", "", "also create the Step Functions examples in this endpoint (e.g. a local emulator) and serve them")
	cmd.Flags().StringVar(&o.sfnRole, "sfn-role-arn", "arn:aws:iam::123456789012:role/taskgate-examples", "execution role for the Step Functions examples")
	cmd.Flags().BoolVar(&o.restate, "restate", false, "also run a Restate server (unless RESTATE_ADMIN_URL names one) with the Restate examples, and serve them")
	cmd.Flags().IntVar(&o.restatePort, "restate-port", 18080, "ingress port of the local Restate server (its admin API is on port+1, its node on port+2)")
	cmd.Flags().StringArrayVar(&o.configs, "config", nil, "serve this mapping file or folder (repeatable) instead of the built-in example's, next to the example worker")
	return cmd
}

func runDev(ctx context.Context, o devOptions, stdout, stderr io.Writer) error {
	if err := o.tf.check(); err != nil {
		return err
	}
	stop, err := o.tf.setUpObservability(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	if o.tf.stdio {
		o.tf.http = ""
		stdout = stderr // standard output carries the protocol
	}
	cache, err := cacheDir()
	if err != nil {
		return err
	}
	state := filepath.Join(cache, "dev")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return err
	}

	// env is the process's environment with what dev sets up: mapping files and engines read it.
	var env adapters.Env
	address, _ := env.LookupEnv("TEMPORAL_ADDRESS")
	ui := ""
	if address == "" {
		cli, err := temporalBinary(ctx, cache, stderr)
		if err != nil {
			return err
		}
		srv, err := startTemporal(ctx, cli, state, o.temporalPort, stderr)
		if err != nil {
			return err
		}
		defer srv.Stop()
		address = srv.FrontendHostPort()
		ui = fmt.Sprintf("http://127.0.0.1:%d", o.temporalPort+1000)
		env = env.With("TEMPORAL_ADDRESS=" + address)
	}

	files := o.configs
	if len(files) == 0 {
		files = []string{filepath.Join(state, "temporal-tools.yaml")}
		if err := writeAtomically(files[0], temporalexamples.Mapping); err != nil {
			return err
		}
	}
	if o.sfnEndpoint != "" {
		f, sfnEnv, err := ensureSFNExamples(ctx, env, state, o.sfnEndpoint, o.sfnRole, stderr)
		if err != nil {
			return err
		}
		files, env = append(files, f), sfnEnv
	}
	restateAt := ""
	if o.restate {
		rs, f, restateEnv, err := startRestate(ctx, env, cache, state, o.restatePort, stderr)
		if err != nil {
			return err
		}
		defer rs.Close()
		files, env = append(files, f), restateEnv
		restateAt = fmt.Sprintf("%s (admin %s)", rs.ingress, rs.admin)
	}
	set, err := mapping.Loader{Env: env}.Load(files...)
	if err == nil {
		err = set.CheckNeeds(env)
	}
	if err != nil {
		return err
	}
	tokens, err := codec(set, o.tf.tokenFormat, o.tf.tokenKeys, filepath.Join(state, "token-keys"))
	if err != nil {
		return err
	}
	engines, err := connect(ctx, set, adapters.OpenOptions{Env: env}, o.tf.tel)
	if err != nil {
		return err
	}
	defer closeAll(engines)

	namespace, _ := env.LookupEnv("TEMPORAL_NAMESPACE")
	workerClient, err := client.Dial(client.Options{HostPort: address, Namespace: namespace,
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

	return serve(ctx, set, engines, tokens, o.tf, stderr, func(endpoint string) {
		printWelcome(stdout, endpoint, address, ui, restateAt)
	})
}

// ensureSFNExamples creates (or updates) the example state machines in the endpoint and returns
// the mapping file that serves them, with env extended by what that file and its engine read.
func ensureSFNExamples(ctx context.Context, env adapters.Env, state, endpoint, role string, stderr io.Writer) (string, adapters.Env, error) {
	if region, _ := env.LookupEnv("AWS_REGION"); region == "" {
		env = env.With("AWS_REGION=us-east-1")
	}
	id, _ := env.LookupEnv("AWS_ACCESS_KEY_ID")
	profile, _ := env.LookupEnv("AWS_PROFILE")
	if id == "" && profile == "" {
		// Local emulators accept any credentials; real endpoints get the standard chain.
		env = env.With("AWS_ACCESS_KEY_ID=taskgate-dev", "AWS_SECRET_ACCESS_KEY=taskgate-dev")
	}
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Endpoint: endpoint, Env: env})
	if err != nil {
		return "", nil, err
	}
	arns, err := sfnexamples.Ensure(ctx, e.Client(), role)
	if err != nil {
		return "", nil, fmt.Errorf("creating the Step Functions examples in %s: %w", endpoint, err)
	}
	env = env.With("SFN_ENDPOINT=" + endpoint)
	// The mapping names the machines by ARN: take the account from one the endpoint gave.
	if parts := strings.Split(arns[sfnexamples.WaitAndEcho], ":"); len(parts) > 4 {
		env = env.With("SFN_ACCOUNT=" + parts[4])
	}
	fmt.Fprintf(stderr, "taskgate: %d Step Functions example state machines ready in %s\n", len(arns), endpoint)
	f := filepath.Join(state, "stepfunctions-tools.yaml")
	return f, env, writeAtomically(f, sfnexamples.Mapping)
}

// writeAtomically writes a file of the dev folder so that another dev starting at the same time
// (clients that spawn one each) never reads it half written.
func writeAtomically(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
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

// cacheDir is the one folder where taskgate keeps what it builds (bin/) and what dev keeps between
// runs (dev/): taskgate in the user's cache folder.
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's cache folder, where taskgate keeps its tools and dev state: %w; set XDG_CACHE_HOME or HOME", err)
	}
	return filepath.Join(base, "taskgate"), nil
}

// startTemporal starts a local Temporal dev server whose history persists in the dev folder, so a
// restarted `taskgate dev` still finds the workflows behind earlier task ids.
func startTemporal(ctx context.Context, cli, state string, port int, stderr io.Writer) (*testsuite.DevServer, error) {
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

// temporalBinary finds the Temporal CLI on PATH or in the tools folder (TASKGATE_TOOLS, else the
// cache folder), building it there once when it is missing.
func temporalBinary(ctx context.Context, cache string, stderr io.Writer) (string, error) {
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	dir := os.Getenv("TASKGATE_TOOLS")
	if dir == "" {
		dir = cache
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

func printWelcome(w io.Writer, endpoint, temporalAddr, ui, restateAt string) {
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
	if restateAt != "" {
		fmt.Fprintf(&b, "  Restate:     %s\n", restateAt)
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
