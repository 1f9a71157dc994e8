//go:build dev

package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/devenv"
	"github.com/taskgate/taskgate/mapping"
)

// dev runs the built-in example on local engines (package devenv, which brings the engines' worker
// SDKs, the example workers and what installs the local servers). It is only in the development
// build, `go build -tags dev`: the binary that ships serves engines and links none of that.
func init() { devCommand = newDevCmd }

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
	setup, stop, err := o.tf.setUp(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	if o.tf.stdio {
		o.tf.http = ""
		stdout = stderr // standard output carries the protocol
	}
	dev, err := devenv.Start(ctx, devenv.Options{Configs: o.configs, TemporalPort: o.temporalPort,
		SFNEndpoint: o.sfnEndpoint, SFNRole: o.sfnRole, Restate: o.restate, RestatePort: o.restatePort, Log: stderr})
	if err != nil {
		return err
	}
	defer dev.Close()
	set, err := mapping.Loader{Env: dev.Env}.Load(dev.Mappings...)
	if err == nil {
		err = set.CheckNeeds(dev.Env)
	}
	if err != nil {
		return err
	}
	tokens, err := codec(set, o.tf.tokenFormat, o.tf.tokenKeys, filepath.Join(dev.Dir, "token-keys"))
	if err != nil {
		return err
	}
	engines, err := connect(ctx, set, adapters.OpenOptions{Env: dev.Env}, setup.tel)
	if err != nil {
		return err
	}
	defer closeAll(engines)
	return serve(ctx, set, engines, tokens, o.tf, setup, stderr, func(endpoint string) {
		printWelcome(stdout, endpoint, dev)
	})
}

func printWelcome(w io.Writer, endpoint string, dev *devenv.Env) {
	var b strings.Builder
	fmt.Fprintf(&b, "\ntaskgate dev is running the built-in example.\n")
	if endpoint == "stdio" {
		fmt.Fprintf(&b, "  MCP:         on standard input/output\n")
	} else {
		fmt.Fprintf(&b, "  MCP:         %s\n", endpoint)
	}
	fmt.Fprintf(&b, "  Temporal:    %s\n", dev.Temporal)
	if dev.TemporalUI != "" {
		fmt.Fprintf(&b, "  Temporal UI: %s\n", dev.TemporalUI)
	}
	if dev.RestateAdmin != "" {
		fmt.Fprintf(&b, "  Restate:     %s (admin %s)\n", dev.RestateIngress, dev.RestateAdmin)
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
