// Command taskgate serves the executions of workflow engines as long-running MCP tools. Run
// `taskgate help` for its commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs one command line and returns its exit status: 0 on success, 2 for a usage error, 1
// for any other failure, or the status a command chose (exitError).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return exitCode(stderr, root.ExecuteContext(ctx))
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "taskgate",
		Short: "Serve the workflows of your engines as long-running MCP tools",
		Long: "taskgate serves the executions of workflow engines (" + strings.Join(adapters.Drivers(), ", ") + ") as long-running MCP\n" +
			"tools: a mapping file says which tool starts which workflow, every call starts one\n" +
			"execution, and every poll asks the engine.",
		SilenceErrors: true, // exitCode prints them, once
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && args[0] == "dev" {
				return usageError{"dev is in the development build only: go run -tags dev ./cmd/taskgate dev (from a clone of taskgate)"}
			}
			if len(args) > 0 {
				return usageError{fmt.Sprintf("unknown command %q; run taskgate help for the commands", args[0])}
			}
			return usageError{"no command given\n\n" + cmd.UsageString()}
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(newServeCmd(), newValidateCmd(), newCallCmd(), newDiscoverCmd(), newIAMPolicyCmd(), newTokenCmd(), newVersionCmd())
	if devCommand != nil {
		root.AddCommand(devCommand())
	}
	return root
}

// devCommand is the dev command in the development build (dev.go), nil in the one that ships.
var devCommand func() *cobra.Command

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitError ends a command with its own exit status, after it said what it had to.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// args checks a command's positional arguments, as a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Sprintf("%v\n\nUsage:\n  %s", err, cmd.UseLine())}
		}
		return nil
	}
}

func exitCode(stderr io.Writer, err error) int {
	var exit exitError
	var usage usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.code
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, "taskgate:", err)
		return 2
	}
	fmt.Fprintln(stderr, "taskgate:", err)
	return 1
}
