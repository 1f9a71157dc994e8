// Command taskgate serves existing Temporal workflows and Step Functions state machines as
// long-running MCP tools. Run `taskgate help` for its subcommands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `taskgate serves Temporal workflows and Step Functions state machines as long-running MCP tools.

Usage:
  taskgate dev [--stdio | --http ADDR] [--sfn-endpoint URL] [--config PATH]  run the built-in example (or PATH) on a local Temporal dev server
  taskgate serve --config PATH (--stdio | --http ADDR)         serve a mapping file or folder
  taskgate validate [--engines] PATH...                        check mapping files (and targets), list every error
  taskgate call TOOL --args JSON (--url URL | --config PATH)   call a tool as a task and show its progress
  taskgate discover stepfunctions [--prefix P] [--tag K=V]     draft a mapping from an account's state machines
  taskgate token new-key [--id ID]                             print a new token key for TASKGATE_TOKEN_KEYS

Run "taskgate COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return exitCode(stderr, runServe(ctx, args[1:], stdout, stderr))
	case "dev":
		return exitCode(stderr, runDev(ctx, args[1:], stdout, stderr))
	case "validate":
		return runValidate(ctx, args[1:], stdout, stderr)
	case "discover":
		return exitCode(stderr, runDiscover(ctx, args[1:], stdout, stderr))
	case "call":
		return runCall(ctx, args[1:], stdout, stderr)
	case "token":
		return exitCode(stderr, runToken(args[1:], stdout))
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "taskgate: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "taskgate:", err)
	if _, ok := err.(usageError); ok {
		return 2
	}
	return 1
}
