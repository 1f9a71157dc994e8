package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/taskcall"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks/token"
)

func newCallCmd() *cobra.Command {
	var argsJSON, url string
	var configs, answers, declines, headers []string
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON] (--url URL [--header 'NAME: VALUE']... | --config PATH) [--answer KEY=JSON]... [--decline KEY]...",
		Short: "Call a tool as a task and show its progress",
		Long: `Calls one tool as a task and shows its progress until it ends, then prints its result (text, and
structured content as indented JSON) on standard output. --url calls an MCP endpoint (Streamable
HTTP); --config serves a mapping file or folder in this process to try it. Ctrl-C cancels the task.

A server with auth: wants a credential: --header 'Authorization: Bearer KEY' (repeatable, as
curl's), or for scripts the variable ` + taskcall.HeadersEnv + `, one 'NAME: VALUE' a line, so that the key
stays off the command line.

A tool may ask questions before it starts, and its task while it runs. Each question is answered
with its --answer KEY=JSON (the form's content, one JSON object) or --decline KEY if given, else
asked on the terminal one field at a time: answer, decline, dismiss, or put it off for a minute
(later). A question with no answer and no terminal to ask on ends the call, the task still waiting.
Exit status: 0 success, 1 tool error or failed/cancelled task, 2 usage error, 3 a question left
unanswered (the task goes on, its id printed), 130 interrupted.`,
		Args: func(cmd *cobra.Command, positional []string) error {
			if len(positional) != 1 {
				return usageError{fmt.Sprintf("call wants one TOOL name, got %d arguments %q\n\nUsage:\n  %s", len(positional), positional, cmd.UseLine())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, positional []string) error {
			if (url == "") == (len(configs) == 0) {
				return usageError{"call needs exactly one of --url URL (an MCP endpoint) or --config PATH (a mapping to serve in this process)"}
			}
			if len(headers) > 0 && url == "" {
				return usageError{"--header goes with --url: the mapping --config serves in this process asks for no credentials"}
			}
			call := taskcall.Call{Tool: positional[0], Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
			var err error
			if call.Arguments, err = taskcall.ParseArguments(argsJSON); err != nil {
				return usageError{err.Error()}
			}
			if call.Answers, err = taskcall.ParseAnswers(answers, declines); err != nil {
				return usageError{err.Error()}
			}
			header, err := taskcall.ParseHeaders(os.Getenv(taskcall.HeadersEnv), headers)
			if err != nil {
				return usageError{err.Error()}
			}
			if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				call.Terminal = f
			}
			return exitError{runCall(cmd.Context(), url, header, configs, call)}
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "the tool's arguments, one JSON object")
	cmd.Flags().StringVar(&url, "url", "", "MCP endpoint to call, e.g. http://127.0.0.1:8080/mcp")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "send this HTTP header with --url, like 'Authorization: Bearer KEY' (repeatable; also $"+taskcall.HeadersEnv+")")
	cmd.Flags().StringArrayVar(&configs, "config", nil, "mapping file or folder to serve in this process (repeatable)")
	cmd.Flags().StringArrayVar(&answers, "answer", nil, `answer the question KEY with the form's content, like approve='{"approve": true}' (repeatable)`)
	cmd.Flags().StringArrayVar(&declines, "decline", nil, "decline the question KEY (repeatable)")
	return cmd
}

// runCall makes the call at url, or at the mapping of configs served in this process, and
// returns the exit status.
func runCall(ctx context.Context, url string, header http.Header, configs []string, call taskcall.Call) int {
	endpoint := url
	if len(configs) > 0 {
		var stop func()
		var err error
		endpoint, stop, err = serveLoopback(ctx, configs, call.Stderr)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(call.Stderr, "taskgate call: interrupted")
				return taskcall.ExitInterrupted
			}
			fmt.Fprintln(call.Stderr, "taskgate call:", err)
			return taskcall.ExitFailed
		}
		defer stop()
	}
	return taskcall.Run(ctx, taskcall.NewClient(endpoint, header, mcpserver.Version), call)
}

// serveLoopback serves the mapping on a loopback port, as `serve --http` would, until stop.
func serveLoopback(ctx context.Context, paths []string, stderr io.Writer) (endpoint string, stop func(), err error) {
	set, err := mapping.Load(paths...)
	if err == nil {
		err = set.CheckNeeds(nil)
	}
	if err != nil {
		return "", nil, err
	}
	keys := os.Getenv("TASKGATE_TOKEN_KEYS")
	if keys == "" {
		// The task ids never leave this process: a key of its own will do.
		keys = token.NewKey("call")
	}
	tokens, err := codec(set, "sealed", keys, "")
	if err != nil {
		return "", nil, err
	}
	engines, err := connect(ctx, set, adapters.OpenOptions{}, nil)
	if err != nil {
		return "", nil, err
	}
	// No audit log: the server in this process has one caller, who sees what it does.
	setup := &serverSetup{mode: mcpserver.NoTaskHandles, audit: slog.New(slog.DiscardHandler)}
	srv, svc, err := newServer(set, engines, tokens, setup, nil, stderr)
	if err == nil {
		err = checkTargets(ctx, svc, stderr)
	}
	if err != nil {
		closeAll(engines)
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeAll(engines)
		return "", nil, err
	}
	hs := httpServer(srv, svc, nil, setup)
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", func() {
		hs.Close()
		closeAll(engines)
	}, nil
}
