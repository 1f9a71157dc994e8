// Package mcpserver is taskgate's MCP surface: tools/list and tools/call for the mapped tools, and
// the task methods of each dialect in docs/protocol.md, served on the official go-sdk. It keeps
// no task state: a task id is a token around the engine's own reference, and every read asks the
// engine.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/budget"
	"github.com/taskgate/taskgate/adapters/coalesce"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// Version is reported as serverInfo.version; the taskgate binary sets it to its own version
// before it builds a server.
var Version = "dev"

// Config is what a Server serves.
type Config struct {
	Mapping *mapping.Set
	// Engines by engine block name; every tool's engine must be present.
	Engines map[string]adapters.Engine
	// Tokens issues and opens task ids (token.Sealed, or token.Native).
	Tokens token.Codec
	Logger *slog.Logger
	// NotFoundGrace is how long after a task's creation an engine's "not found" still reads as a
	// task not yet visible (eventually consistent engines). Default 10s.
	NotFoundGrace time.Duration
	// EndedCacheSize bounds the cache of executions' statuses and outcomes per engine. Default 4096.
	EndedCacheSize int
	// FreshFor is how long a running execution's status answers reads that come with no task
	// (default 250ms); a task's polls reuse it for the tool's polling interval at the task's age.
	// Negative: every read asks the engine.
	FreshFor time.Duration
	// Replicas is how many taskgate processes share each engine block's read budget
	// (mapping.Engine.Budget): this one spends its share. Default 1.
	Replicas int
	// NoTaskClients says how clients with no task support get async tools. Default NoTaskHandles.
	NoTaskClients NoTaskMode
	// Limits bound what callers may ask of the engines and of the process.
	Limits Limits
	// Audit gets one line per start, cancel and answer of a task. Default: Logger.
	Audit *slog.Logger
	// HTTPAuth, when set, makes every HTTP request carry a bearer token it accepts. Without it,
	// every caller is the local principal.
	HTTPAuth *HTTPAuth
	// AllowedOrigins are the browser origins allowed besides a page's own and, on a loopback
	// listener, loopback pages ("*" allows any). AllowedHosts, when set, are the only Host
	// headers served (host, or host:port).
	AllowedOrigins, AllowedHosts []string
	// Observer, when set, is told of every request and of tasks' starts and ends.
	Observer Observer
}

// HTTPAuth is how HTTP callers authenticate (go-sdk's auth middleware): a request without a token
// Verify accepts, or without Scopes, is refused with 401 and a Bearer challenge.
type HTTPAuth struct {
	Verify auth.TokenVerifier
	// Scopes are required of every caller.
	Scopes []string
	// ResourceMetadataURL is named in the challenge, for clients to find the authorization server
	// (RFC 9728).
	ResourceMetadataURL string
	// ClockSkew tolerates clocks that disagree by this much on a token's expiry.
	ClockSkew time.Duration
}

// Server is one taskgate MCP server. Any number of them may serve the same mapping and engines.
type Server struct {
	mcp     *mcp.Server
	set     *mapping.Set
	engines map[string]adapters.Engine
	tokens  token.Codec
	log     *slog.Logger
	grace   time.Duration
	noTask  NoTaskMode
	now     func() time.Time
	audit   *slog.Logger
	// front is the HTTP transport; rates are its and stdio's rate limits (Config.Limits).
	front *httpFront
	rates *rateLimits
	// conns are the open stdio connections by id: notifications go back on them.
	conns sync.Map
	// unknownTokens are client tokens that named no operation (a shortcut only).
	unknownTokens unknownTokens
	// retention is, by tool name, how long its engine keeps ended executions (from CheckTargets).
	retention sync.Map
	// reads and budgets are the engine wrappers of engines, by engine block name (budgets only
	// for the blocks with a budget).
	reads    map[string]*coalesce.Engine
	budgets  map[string]*budget.Engine
	observer Observer
	// impl is the server's name and version, as go-sdk reports them.
	impl *mcp.Implementation
}

// New builds a server. It makes no engine call; see CheckTargets.
func New(cfg Config) (*Server, error) {
	if cfg.Mapping == nil || cfg.Tokens == nil {
		return nil, fmt.Errorf("mcpserver: a mapping and a token codec are required")
	}
	s := &Server{
		set: cfg.Mapping, tokens: cfg.Tokens, log: cfg.Logger,
		grace: cfg.NotFoundGrace, now: time.Now, engines: map[string]adapters.Engine{},
		noTask: cfg.NoTaskClients, observer: cfg.Observer,
		reads: map[string]*coalesce.Engine{}, budgets: map[string]*budget.Engine{},
	}
	if s.noTask == "" {
		s.noTask = NoTaskHandles
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.audit = cfg.Audit; s.audit == nil {
		s.audit = s.log
	}
	s.unknownTokens = newUnknownTokens()
	limits := cfg.Limits.withDefaults()
	s.rates = newRateLimits(limits)
	s.front = &httpFront{log: s.log, auth: cfg.HTTPAuth, origins: cfg.AllowedOrigins, hosts: cfg.AllowedHosts, rates: s.rates,
		inFlight: newShares(int64(limits.MaxInFlight), int64(limits.MaxInFlightPerPrincipal)),
		bodies:   newShares(limits.BodyBudget, limits.BodyBudgetPerPrincipal),
		maxWait:  max(limits.MaxWait, 0), now: s.now, tool: cfg.Mapping.Tool}
	if s.grace == 0 {
		s.grace = 10 * time.Second
	}
	size := cfg.EndedCacheSize
	if size == 0 {
		size = 4096
	}
	fresh := cfg.FreshFor
	if fresh == 0 {
		fresh = 250 * time.Millisecond
	}
	for _, t := range cfg.Mapping.Tools {
		e, ok := cfg.Engines[t.Engine]
		if !ok {
			return nil, fmt.Errorf("mcpserver: tool %q uses engine %q, which is not connected", t.Name, t.Engine)
		}
		if _, done := s.engines[t.Engine]; !done {
			var b adapters.Budget
			if block, ok := cfg.Mapping.Engines[t.Engine]; ok {
				b = block.Budget.Split(cfg.Replicas)
			}
			s.wrap(t.Engine, billed{e}, b, coalesce.Options{Size: size, Fresh: fresh})
		}
	}

	// The SDK knows no tools: the middleware answers tools/list and tools/call from the mapping.
	opts := &mcp.ServerOptions{Logger: s.log, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}
	opts.Capabilities.AddExtension(extensionTasks, nil)
	opts.Capabilities.Experimental = map[string]any{experimentalSEP1391: map[string]any{}}
	s.impl = &mcp.Implementation{Name: "taskgate", Version: Version}
	s.mcp = mcp.NewServer(s.impl, opts)
	for _, t := range cfg.Mapping.Tools {
		if isHandleTool(t.Name) {
			return nil, fmt.Errorf("mcpserver: tool %q (%s): the name is taken by taskgate's handle tools; rename it", t.Name, t.Source)
		}
	}
	if err := s.addTaskMethods(); err != nil {
		return nil, err
	}
	s.mcp.AddReceivingMiddleware(s.middleware)
	return s, nil
}

// TargetError is a tool whose target its engine did not confirm: unreachable (Err wraps
// adapters.ErrUnavailable), missing, or not servable as mapped.
type TargetError struct {
	Tool, Source, Engine string
	Err                  error
}

func (e *TargetError) Error() string { return fmt.Sprintf("tool %q (%s): %v", e.Tool, e.Source, e.Err) }

func (e *TargetError) Unwrap() error { return e.Err }

// wrap puts the engine block called name under its read budget, when it has one, and the reuse
// of readings, which reuses them longer as the budget's load grows.
func (s *Server) wrap(name string, e adapters.Engine, b adapters.Budget, o coalesce.Options) {
	if s.observer != nil {
		o.Ended = s.ended
	}
	if !b.Unlimited() {
		be := budget.New(e, b)
		s.budgets[name], e, o.Stretch = be, be, be.Stretch
	}
	s.reads[name] = coalesce.New(e, o)
	s.engines[name] = s.reads[name]
}

// CheckTargets asks each engine whether every tool's target exists and can be served as mapped.
// It returns the warnings worth printing and every problem found, each a *TargetError.
func (s *Server) CheckTargets(ctx context.Context) ([]string, error) {
	var warnings []string
	var problems []error
	for _, t := range s.set.Tools {
		info, err := s.engines[t.Engine].Check(ctx, t.Target)
		switch {
		case err != nil:
			problems = append(problems, &TargetError{Tool: t.Name, Source: t.Source, Engine: t.Engine, Err: err})
			continue
		case info.SyncOnly != "" && t.TaskSupport != mapping.TaskForbidden:
			problems = append(problems, &TargetError{Tool: t.Name, Source: t.Source, Engine: t.Engine,
				Err: fmt.Errorf("%s, so it cannot back a task: set `taskSupport: forbidden`", info.SyncOnly)})
		}
		s.retention.Store(t.Name, info.Retention)
		for _, w := range info.Warnings {
			warnings = append(warnings, fmt.Sprintf("tool %q: %s", t.Name, w))
		}
	}
	return warnings, errors.Join(problems...)
}

// Reads are, by engine block name, the engine reads the server has made since New, by how each
// was served (an engine call, or a shortcut).
func (s *Server) Reads() map[string]coalesce.Counts {
	reads := make(map[string]coalesce.Counts, len(s.reads))
	for name, e := range s.reads {
		reads[name] = e.Counts()
	}
	return reads
}

// Budgets are, by engine block name, what the read budgets of the blocks that have one did.
func (s *Server) Budgets() map[string]budget.Stats {
	stats := make(map[string]budget.Stats, len(s.budgets))
	for name, b := range s.budgets {
		stats[name] = b.Stats()
	}
	return stats
}

// MCP is the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }
