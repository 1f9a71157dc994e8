package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/observe"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/drift"
	"github.com/taskgate/taskgate/tasks/token"
)

// transportFlags are the values of the flags shared by serve and dev, as parsed: where to listen
// and how to name tasks, and the settings setUp turns into a serverSetup.
type transportFlags struct {
	stdio                  bool
	http                   string
	tokenFormat, tokenKeys string
	noTaskClients          string
	insecureNoAuth         bool
	limits                 mcpserver.Limits
	readTimeout            time.Duration
	idleTimeout            time.Duration
	logLevel, logFormat    string
	opsHTTP                string
	metricsOnMCP           bool
	replicas               int
	cacheBudget            int64
	// requireEngines (serve's flag) exits at startup when an engine does not answer, instead of
	// serving while /readyz answers 503.
	requireEngines bool
	// driftEvery and driftSamples (serve's flags): how often to check the targets and recent
	// inputs against the mapping (0: never), and how many inputs of each target to read.
	driftEvery   time.Duration
	driftSamples int
}

// serverSetup is what the task service, the MCP server and its HTTP handler are built with: the
// settings of the flags, checked, and the logs and telemetry set up from them. call and validate
// have no flags: theirs is written out, and what it leaves zero takes the packages' defaults.
type serverSetup struct {
	mode                     mcpserver.NoTaskMode
	limits                   mcpserver.Limits
	readTimeout, idleTimeout time.Duration
	metricsOnMCP             bool
	replicas                 int
	// cacheBytes is tasks.Config.CacheBytes (0 in call's and validate's: the default).
	cacheBytes int64
	// log (at --log-level) and tel report what serve and dev do, serverLog (at warn or above:
	// go-sdk logs every stateless request's session at info) is the server's, and audit is the
	// audit log, always at info; a nil logger is made on stderr by loggers.
	log, serverLog, audit *slog.Logger
	tel                   *observe.Telemetry
	// drift repeats the drift checks (serve with --drift-every); nil when none run.
	drift *drift.Monitor
}

// check validates the flags before anything connects, and reads --no-task-clients.
func (f transportFlags) check() (mcpserver.NoTaskMode, error) {
	mode, err := mcpserver.ParseNoTaskMode(f.noTaskClients)
	if err != nil {
		return mode, usageError{err.Error()}
	}
	if f.replicas < 1 {
		return mode, usageError{fmt.Sprintf("--replicas %d: give the number of taskgate processes that serve these engines, at least 1", f.replicas)}
	}
	if f.cacheBudget == 0 {
		return mode, usageError{"--cache-budget 0: give the bytes of readings and outcomes to keep, or -1 to keep none"}
	}
	if f.driftEvery < 0 || f.driftSamples < 0 {
		return mode, usageError{fmt.Sprintf("--drift-every %s, --drift-samples %d: give how often to check for drift (0: never) and how many recent inputs of each target to read (0: none)", f.driftEvery, f.driftSamples)}
	}
	return mode, nil
}

func (f *transportFlags) register(fs *pflag.FlagSet, defaultHTTP string) {
	fs.BoolVar(&f.stdio, "stdio", false, "serve one MCP client on standard input/output")
	fs.StringVar(&f.http, "http", defaultHTTP, "serve stateless Streamable HTTP on `ADDR`, at /mcp")
	fs.StringVar(&f.tokenFormat, "token-format", "sealed", "task ids: sealed (encrypted, tamper-proof) or native (the engine's own id)")
	fs.StringVar(&f.tokenKeys, "token-keys", "", "token keys `ID:BASE64[,...]` (default $TASKGATE_TOKEN_KEYS); the first one seals")
	fs.StringVar(&f.noTaskClients, "no-task-clients", "handles", "how clients with no task support get async tools: handles (a handle and task_status/task_result/task_cancel tools), wait (the call waits for the result), hide (only sync tools)")
	fs.BoolVar(&f.insecureNoAuth, "insecure-no-auth", false, "serve HTTP beyond loopback although the mapping has no auth: block (only behind a proxy that authenticates)")
	fs.Float64Var(&f.limits.CallsPerSecond, "calls-per-second", 10, "tools/call per second and principal, in bursts of twice as many; -1: no limit")
	fs.Float64Var(&f.limits.PollsPerSecond, "polls-per-second", 50, "other task requests per second and principal, in bursts of twice as many; -1: no limit")
	fs.IntVar(&f.limits.MaxInFlight, "max-in-flight", 512, "HTTP requests served at once; more are answered 503")
	fs.IntVar(&f.limits.MaxInFlightPerPrincipal, "max-in-flight-per-principal", 0, "HTTP requests one authenticated principal has served at once, within --max-in-flight; more are answered 429 (default a quarter of --max-in-flight)")
	fs.Int64Var(&f.limits.BodyBudget, "body-budget", 16<<20, "bytes of HTTP request bodies held in memory at once; a body that does not fit is answered 503")
	fs.Int64Var(&f.limits.BodyBudgetPerPrincipal, "body-budget-per-principal", 0, "bytes of one authenticated principal's request bodies held at once, within --body-budget; a body that does not fit is answered 429 (default a quarter of --body-budget)")
	fs.IntVar(&f.limits.MaxFollowed, "max-followed", 20000, "tasks that subscriptions/listen streams follow at once; a listen past them is refused")
	fs.IntVar(&f.limits.MaxFollowedPerPrincipal, "max-followed-per-principal", 0, "tasks one authenticated principal's listens follow at once, within --max-followed (default a quarter of it)")
	fs.DurationVar(&f.limits.MaxListen, "max-listen", time.Hour, "longest a subscriptions/listen stream lives (no longer than its bearer token): then it ends with its result and the client listens again")
	fs.DurationVar(&f.limits.MaxWait, "max-wait", time.Minute, "longest an HTTP request waits for a workflow: a 2025-11-25 tasks/result (then answered with the task's status, to poll) or a call that waits for its result; negative: no bound")
	fs.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "how long a client may take to send an HTTP request, body included")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", 60*time.Second, "how long an idle HTTP connection stays open, before its first request and between requests (clients should let theirs go sooner)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `LEVEL`: debug, info (a line per request), warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text (key=value) or json")
	fs.StringVar(&f.opsHTTP, "ops-http", "", "also serve /metrics, /healthz and /readyz on `ADDR`, apart from MCP (with --stdio, the only way to reach them; with auth:, the only place of /metrics)")
	fs.BoolVar(&f.metricsOnMCP, "metrics-on-mcp-listener", false, "serve /metrics, and why /readyz is not ready, on the --http listener although the mapping has auth: (they name every tool and engine, and need no credentials)")
	fs.Int64Var(&f.cacheBudget, "cache-budget", tasks.DefaultCacheBytes, "bytes of executions' readings and outcomes kept to answer reads again, split evenly among the engine blocks (one larger than its block's share is not kept); -1: keep none")
	fs.IntVar(&f.replicas, "replicas", 1, "how many taskgate processes serve the same engines: each reads them at its share of every engine block's read budget")
}

// setUp checks the flags and sets up what the server is built with: the logs on stderr, the
// metrics, and the traces when the OTEL_* variables name an OTLP endpoint. stop flushes the traces.
func (f transportFlags) setUp(ctx context.Context, stderr io.Writer) (s *serverSetup, stop func(), err error) {
	mode, err := f.check()
	if err != nil {
		return nil, nil, err
	}
	s = &serverSetup{mode: mode, limits: f.limits, readTimeout: f.readTimeout, idleTimeout: f.idleTimeout,
		metricsOnMCP: f.metricsOnMCP, replicas: f.replicas, cacheBytes: f.cacheBudget}
	if s.log, err = observe.NewLogger(stderr, f.logLevel, f.logFormat); err != nil {
		return nil, nil, usageError{err.Error()}
	}
	var level slog.Level
	level.UnmarshalText([]byte(f.logLevel)) // valid: NewLogger read it
	s.serverLog, _ = observe.NewLogger(stderr, max(level, slog.LevelWarn).String(), f.logFormat)
	s.audit, _ = observe.NewLogger(stderr, "info", f.logFormat)
	tp, err := observe.TracerProvider(ctx, os.Getenv, version)
	if err != nil {
		return nil, nil, err
	}
	opts, stop := observe.Options{Log: s.log}, func() {}
	if tp != nil {
		opts.Tracer = tp
		stop = func() {
			flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(flush); err != nil {
				s.log.Warn("traces not flushed", "error", err)
			}
		}
	}
	s.tel = observe.New(opts)
	return s, stop, nil
}

// loggers are the server's log (warnings and errors) and its audit log, those of s or else text
// on stderr.
func (s *serverSetup) loggers(stderr io.Writer) (log, audit *slog.Logger) {
	if log, audit = s.serverLog, s.audit; log == nil {
		log, _ = observe.NewLogger(stderr, "warn", "text")
	}
	if audit == nil {
		audit, _ = observe.NewLogger(stderr, "info", "text")
	}
	return log, audit
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
			ctx := cmd.Context()
			setup, stop, err := tf.setUp(ctx, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stop()
			set, err := mapping.Load(configs...)
			if err == nil {
				err = set.CheckNeeds(nil)
			}
			if err != nil {
				return err
			}
			if err := checkOpen(set, tf); err != nil {
				return err
			}
			tokens, err := codec(set, tf.tokenFormat, tf.tokenKeys, "")
			if err != nil {
				return err
			}
			engines, err := connect(ctx, set, adapters.OpenOptions{}, setup.tel)
			if err != nil {
				return err
			}
			defer closeAll(engines)
			return serve(ctx, set, engines, tokens, tf, setup, cmd.ErrOrStderr(), nil)
		},
	}
	cmd.Flags().StringArrayVar(&configs, "config", nil, "mapping file or folder (repeatable)")
	cmd.Flags().BoolVar(&tf.requireEngines, "require-engines", false, "exit at startup when an engine does not answer (default: serve, /readyz answering 503 until it does)")
	cmd.Flags().DurationVar(&tf.driftEvery, "drift-every", time.Hour, "check every tool's target and the inputs of its latest executions against the mapping this often, and once 10s after start (metric taskgate_tool_drift, /readyz on --ops-http); 0: never")
	cmd.Flags().IntVar(&tf.driftSamples, "drift-samples", drift.DefaultSamples, "how many of each target's latest executions a drift check reads the inputs of; 0: none")
	tf.register(cmd.Flags(), "")
	return cmd
}

// newTasks builds the task service over the engines: measured and traced, with s.tel.
func newTasks(set *mapping.Set, engines map[string]adapters.Conn, tokens token.Codec, s *serverSetup, stderr io.Writer) (*tasks.Service, error) {
	log, audit := s.loggers(stderr)
	cfg := tasks.Config{Mapping: set, Engines: engines, Tokens: tokens, Logger: log, Audit: audit, Replicas: s.replicas, CacheBytes: s.cacheBytes}
	if s.tel != nil {
		cfg.Hooks, cfg.Observer = s.tel.EngineHooks, s.tel
	}
	svc, err := tasks.New(cfg)
	if err != nil {
		return nil, err
	}
	if s.tel != nil {
		s.tel.Watch(svc)
	}
	return svc, nil
}

// newServer builds the task service and the MCP server over it.
func newServer(set *mapping.Set, engines map[string]adapters.Conn, tokens token.Codec, s *serverSetup, a *httpAuth, stderr io.Writer) (*mcpserver.Server, *tasks.Service, error) {
	svc, err := newTasks(set, engines, tokens, s, stderr)
	if err != nil {
		return nil, nil, err
	}
	log, _ := s.loggers(stderr)
	cfg := mcpserver.Config{Tasks: svc, Logger: log, NoTaskClients: s.mode, Limits: s.limits}
	if a != nil {
		cfg.HTTPAuth, cfg.AllowedOrigins, cfg.AllowedHosts = a.config, a.origins, a.hosts
	}
	if s.tel != nil {
		cfg.Observer = s.tel
	}
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return srv, svc, nil
}

// checkTargets checks every tool's target against its engine, printing the warnings.
func checkTargets(ctx context.Context, svc *tasks.Service, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	warnings, err := svc.CheckTargets(ctx)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "taskgate: warning:", w)
	}
	return err
}

// targetProblems are the problems of a check of the targets, one a tool.
func targetProblems(err error) []*tasks.TargetError {
	var problems []*tasks.TargetError
	var each []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		each = j.Unwrap()
	} else if err != nil {
		each = []error{err}
	}
	for _, e := range each {
		var te *tasks.TargetError
		if errors.As(e, &te) {
			problems = append(problems, te)
		}
	}
	return problems
}

// unreachableOnly reports whether err is engines that did not answer, and nothing a restart
// could not cure by itself (a missing target, a wrong credential).
func unreachableOnly(err error) bool {
	problems := targetProblems(err)
	for _, p := range problems {
		if !errors.Is(p, adapters.ErrUnavailable) {
			return false
		}
	}
	return len(problems) > 0
}

// notReadyReason names, for /readyz, each engine that failed the check and how; the details
// (addresses, sources, the engine's words) are in the log.
func notReadyReason(err error) string {
	how := map[string]string{}
	for _, p := range targetProblems(err) {
		if errors.Is(p, adapters.ErrUnavailable) {
			how[p.Engine] = "does not answer"
		} else if how[p.Engine] == "" {
			how[p.Engine] = "does not serve every mapped target"
		}
	}
	if len(how) == 0 {
		return "the check of the engines failed; the server's log says why"
	}
	var parts []string
	for _, engine := range slices.Sorted(maps.Keys(how)) {
		parts = append(parts, fmt.Sprintf("engine %q %s", engine, how[engine]))
	}
	return strings.Join(parts, ", ") + "; the server's log says why"
}

// awaitEngines checks the targets again, after pauses that double from a second up to half a
// minute, until they pass or ctx ends, and logs what changes.
func awaitEngines(ctx context.Context, svc *tasks.Service, log *slog.Logger, stderr io.Writer) {
	last := ""
	for pause := time.Second; ; pause = min(2*pause, 30*time.Second) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		err := checkTargets(ctx, svc, stderr)
		switch {
		case err == nil:
			log.Info("engines ready: every mapped target answers")
			return
		case ctx.Err() != nil:
			return
		case err.Error() != last && !unreachableOnly(err):
			log.Error("the engines answer, but do not serve every mapped target; /readyz answers 503 until they do", "error", err)
		default:
			log.Debug("engines not ready yet", "error", err, "next_check_in", min(2*pause, 30*time.Second))
		}
		last = err.Error()
	}
}

// httpServer serves MCP on /mcp, the operations endpoints (/healthz, /readyz and /metrics; when the
// mapping has auth: and --metrics-on-mcp-listener is not given, no /metrics and no reason for
// /readyz's 503: they name tools and engines, and go unauthenticated) and, with OAuth, the
// protected resource metadata. A request's head must arrive within 10 s of its first bytes, the
// whole request within the read timeout, and an idle connection closes: a client that trickles
// bytes holds nothing for long (serve waits for a new connection's first request as long as for an
// idle one's next: mcpserver.AwaitFirstRequest). There is no write timeout: tasks/result and
// waiting calls answer within --max-wait.
func httpServer(srv *mcpserver.Server, svc *tasks.Service, a *httpAuth, s *serverSetup) *http.Server {
	mux := http.NewServeMux()
	if s.tel != nil {
		mux.Handle("/mcp", s.tel.HTTP(srv.HTTPHandler()))
	} else {
		mux.Handle("/mcp", srv.HTTPHandler())
	}
	operations(mux, svc, s, a == nil || s.metricsOnMCP)
	if a != nil && a.metadata != nil {
		for _, p := range a.paths {
			mux.Handle(p, a.metadata)
		}
	}
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: s.readTimeout, IdleTimeout: s.idleTimeout}
}

// operations adds liveness (/healthz: the process answers), readiness (/readyz: every engine
// answers and serves the mapped targets, checked at most every 5 seconds) and, for serve and dev,
// the metrics (/metrics). Without details, a 503 of /readyz names no engine and there are no
// metrics: the log has the reasons.
func operations(mux *http.ServeMux, svc *tasks.Service, s *serverSetup, details bool) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	ready := &observe.Readiness{Log: s.log, Check: func(ctx context.Context) error {
		_, err := svc.CheckTargets(ctx)
		return err
	}}
	if details {
		ready.Reason = notReadyReason
		if s.drift != nil {
			ready.Detail = s.drift.Detail
		}
	}
	mux.Handle("/readyz", ready)
	if s.tel != nil && details {
		mux.Handle("/metrics", s.tel.Metrics())
	}
}

// watchDrift repeats the drift checks every --drift-every, for the metrics and /readyz.
func watchDrift(ctx context.Context, svc *tasks.Service, tf transportFlags, s *serverSetup) {
	if tf.driftEvery <= 0 {
		return
	}
	s.drift = drift.NewMonitor(drift.NewChecker(svc, tf.driftSamples), tf.driftEvery, s.log)
	if s.tel != nil {
		s.tel.WatchDrift(s.drift.Answers)
	}
	go s.drift.Run(ctx)
}

// serveOperations serves operations on addr (--ops-http) until ctx ends.
func serveOperations(ctx context.Context, addr string, svc *tasks.Service, s *serverSetup, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--ops-http %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	operations(mux, svc, s, true)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: s.readTimeout, IdleTimeout: s.idleTimeout}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	go hs.Serve(ln)
	fmt.Fprintf(stderr, "taskgate: metrics and health on http://%s (/metrics, /healthz, /readyz)\n", ln.Addr())
	return nil
}

// checkOpen refuses to serve HTTP beyond loopback with no one authenticated, unless told to.
func checkOpen(set *mapping.Set, tf transportFlags) error {
	if tf.stdio || set.Auth != nil || loopback(tf.http) || tf.insecureNoAuth {
		return nil
	}
	return usageError{fmt.Sprintf("--http %s listens beyond loopback, and the mapping has no auth: block: anyone who reaches the port could start workflows. "+
		"Add auth: (oauth: or apiKeys:) to the mapping, listen on 127.0.0.1, or pass --insecure-no-auth when a proxy in front authenticates", tf.http)}
}

// loopback reports whether an --http address listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serve checks the targets and serves, where tf says, until ctx ends. ready, if set, is told the
// endpoint.
func serve(ctx context.Context, set *mapping.Set, engines map[string]adapters.Conn, tokens token.Codec, tf transportFlags, s *serverSetup, stderr io.Writer, ready func(endpoint string)) error {
	if err := checkOpen(set, tf); err != nil {
		return err
	}
	log, _ := s.loggers(stderr)
	a, err := loadAuth(set.Auth, os.Getenv, log)
	if err != nil {
		return err
	}
	srv, svc, err := newServer(set, engines, tokens, s, a, stderr)
	if err != nil {
		return err
	}
	defer svc.Close()
	if err := checkTargets(ctx, svc, stderr); err != nil {
		if tf.requireEngines || !unreachableOnly(err) {
			return err
		}
		s.log.Warn("serving before the engines answer: /readyz answers 503 until they do, checked again with backoff (--require-engines exits instead)", "error", err)
		go awaitEngines(ctx, svc, s.log, stderr)
	}
	watchDrift(ctx, svc, tf, s)
	if tf.opsHTTP != "" {
		if err := serveOperations(ctx, tf.opsHTTP, svc, s, stderr); err != nil {
			return err
		}
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
	hs := httpServer(srv, svc, a, s)
	hs.RegisterOnShutdown(srv.Shutdown) // listen streams end with their result, and Shutdown need not wait for them
	// A new connection waits for its first request as long as an idle one for its next
	// (--idle-timeout): net/http would close it after ReadHeaderTimeout, while a client may hold
	// it unused for longer.
	ln = mcpserver.GuardFraming(hs, mcpserver.AwaitFirstRequest(hs, ln))
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
	}()
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(stderr, "taskgate: serving %d tools on %s\n", len(set.Tools), endpoint)
	if a != nil && !s.metricsOnMCP && s.tel != nil {
		fmt.Fprintln(stderr, "taskgate: /metrics, and why /readyz is not ready, are served on --ops-http only, since the mapping has auth: (--metrics-on-mcp-listener serves them here too)")
	}
	if ready != nil {
		ready(endpoint)
	}
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
