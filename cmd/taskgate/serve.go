package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/token"
)

// transportFlags are the flags shared by serve and dev.
type transportFlags struct {
	stdio                  bool
	http                   string
	tokenFormat, tokenKeys string
	noTaskClients          string
	mode                   mcpserver.NoTaskMode
}

// check validates the flags before anything connects.
func (f *transportFlags) check() error {
	mode, err := mcpserver.ParseNoTaskMode(f.noTaskClients)
	if err != nil {
		return usageError{err.Error()}
	}
	f.mode = mode
	return nil
}

func (f *transportFlags) register(fs *pflag.FlagSet, defaultHTTP string) {
	fs.BoolVar(&f.stdio, "stdio", false, "serve one MCP client on standard input/output")
	fs.StringVar(&f.http, "http", defaultHTTP, "serve stateless Streamable HTTP on `ADDR`, at /mcp")
	fs.StringVar(&f.tokenFormat, "token-format", "sealed", "task ids: sealed (encrypted, tamper-proof) or native (the engine's own id)")
	fs.StringVar(&f.tokenKeys, "token-keys", "", "token keys `ID:BASE64[,...]` (default $TASKGATE_TOKEN_KEYS); the first one seals")
	fs.StringVar(&f.noTaskClients, "no-task-clients", "handles", "how clients with no task support get async tools: handles (a handle and task_status/task_result/task_cancel tools), wait (the call waits for the result), hide (only sync tools)")
}

func newServeCmd() *cobra.Command {
	var configs []string
	var tf transportFlags
	cmd := &cobra.Command{
		Use:   "serve --config PATH (--stdio | --http ADDR)",
		Short: "Serve a mapping file or folder",
		Long: "Serves the tools of mapping files (a folder: its *.yaml and *.yml files) over stdio or\n" +
			"stateless Streamable HTTP. Engine settings the mapping leaves out come from each engine's\n" +
			"own environment variables and profiles.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(configs) == 0 {
				return usageError{"serve needs --config PATH (a mapping file or folder)"}
			}
			if tf.stdio == (tf.http != "") {
				return usageError{"serve needs exactly one of --stdio or --http ADDR"}
			}
			if err := tf.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			set, err := mapping.Load(configs...)
			if err != nil {
				return err
			}
			tokens, err := codec(set, tf.tokenFormat, tf.tokenKeys, "")
			if err != nil {
				return err
			}
			engines, err := connect(ctx, set, adapters.OpenOptions{})
			if err != nil {
				return err
			}
			defer closeAll(engines)
			return serve(ctx, set, engines, tokens, tf, cmd.ErrOrStderr(), nil)
		},
	}
	cmd.Flags().StringArrayVar(&configs, "config", nil, "mapping file or folder (repeatable)")
	tf.register(cmd.Flags(), "")
	return cmd
}

// newServer builds the MCP server and checks every tool's target, printing the warnings.
func newServer(ctx context.Context, set *mapping.Set, engines map[string]adapters.Engine, tokens token.Codec, mode mcpserver.NoTaskMode, stderr io.Writer) (*mcpserver.Server, error) {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := mcpserver.New(mcpserver.Config{Mapping: set, Engines: engines, Tokens: tokens, Logger: log, NoTaskClients: mode})
	if err != nil {
		return nil, err
	}
	checkCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	warnings, err := srv.CheckTargets(checkCtx)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "taskgate: warning:", w)
	}
	return srv, err
}

// httpServer serves MCP on /mcp and a health check on /healthz.
func httpServer(srv *mcpserver.Server) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// serve checks the targets and serves until ctx ends. ready, if set, is told the endpoint.
func serve(ctx context.Context, set *mapping.Set, engines map[string]adapters.Engine, tokens token.Codec, tf transportFlags, stderr io.Writer, ready func(endpoint string)) error {
	srv, err := newServer(ctx, set, engines, tokens, tf.mode, stderr)
	if err != nil {
		return err
	}
	if tf.stdio {
		if ready != nil {
			ready("stdio")
		}
		err := srv.ServeStdio(ctx)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", tf.http)
	if err != nil {
		return fmt.Errorf("--http %s: %w", tf.http, err)
	}
	hs := httpServer(srv)
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
	}()
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(stderr, "taskgate: serving %d tools on %s\n", len(set.Tools), endpoint)
	if ready != nil {
		ready(endpoint)
	}
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
