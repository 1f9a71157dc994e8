// Package mcpserver is taskgate's MCP surface on the official go-sdk: the transports (an HTTP
// front with a fast path for polls, and stdio), which know no task rule, and the task dialects of
// docs/protocol.md, which translate each request into a call of the task service (package tasks)
// and its answer back into the caller's words. docs/architecture.md follows one request through.
package mcpserver

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/tasks"
)

// Version is reported as serverInfo.version; the taskgate binary sets it to its own version
// before it builds a server.
var Version = "dev"

// Config is what a Server serves.
type Config struct {
	// Tasks is the task service the dialects call.
	Tasks  *tasks.Service
	Logger *slog.Logger
	// NoTaskClients says how clients with no task support get async tools. Default NoTaskHandles.
	NoTaskClients NoTaskMode
	// Limits bound what callers may ask of the engines and of the process.
	Limits Limits
	// HTTPAuth, when set, makes every HTTP request carry a bearer token it accepts. Without it,
	// every caller is the local principal.
	HTTPAuth *HTTPAuth
	// AllowedOrigins are the browser origins allowed besides a page's own and, on a loopback
	// listener, loopback pages ("*" allows any). AllowedHosts, when set, are the only Host
	// headers served (host, or host:port).
	AllowedOrigins, AllowedHosts []string
	// Observer, when set, is told of every request.
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

// Server is one taskgate MCP server. Any number of them may serve the same task service.
type Server struct {
	mcp *mcp.Server
	// impl is the server's name and version, as go-sdk reports them.
	impl  *mcp.Implementation
	tasks *tasks.Service
	log   *slog.Logger
	now   func() time.Time
	// dialects serve the calls they take and, by name, their task methods; noTask is how calls of
	// clients without tasks are served.
	dialects []dialect
	methods  map[string][]served
	noTask   NoTaskMode
	observer Observer
	// front is the HTTP transport; rates are its and stdio's rate limits (Config.Limits).
	front *httpFront
	rates *rateLimits
	// conns are the open stdio connections.
	conns conns
	// followed are the tasks that listens follow, and maxListen bounds how long one streams.
	followed  *shares
	maxListen time.Duration
	// closing closes when the server shuts down (Shutdown), which ends the listen streams.
	closing   chan struct{}
	closeOnce sync.Once
}

// New builds a server. It makes no engine call.
func New(cfg Config) (*Server, error) {
	if cfg.Tasks == nil {
		return nil, fmt.Errorf("mcpserver: a task service is required")
	}
	s := &Server{tasks: cfg.Tasks, log: cfg.Logger, now: time.Now, noTask: cfg.NoTaskClients, observer: cfg.Observer,
		closing: make(chan struct{})}
	if s.noTask == "" {
		s.noTask = NoTaskHandles
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	set := cfg.Tasks.Mapping()
	for _, t := range set.Tools {
		if isHandleTool(t.Name) {
			return nil, fmt.Errorf("mcpserver: tool %q (%s): the name is taken by taskgate's handle tools; rename it", t.Name, t.Source)
		}
	}
	limits := cfg.Limits.withDefaults()
	s.rates = newRateLimits(limits, s.now)
	s.followed, s.maxListen = newShares(int64(limits.MaxFollowed), int64(limits.MaxFollowedPerPrincipal)), limits.MaxListen
	s.front = &httpFront{log: s.log, auth: cfg.HTTPAuth, origins: cfg.AllowedOrigins, hosts: cfg.AllowedHosts, rates: s.rates,
		inFlight:        newShares(int64(limits.MaxInFlight), int64(limits.MaxInFlightPerPrincipal)),
		bodies:          newShares(limits.BodyBudget, limits.BodyBudgetPerPrincipal),
		unauthenticated: newShares(limits.BodyBudget/16, limits.BodyBudget/16),
		maxWait:         max(limits.MaxWait, 0), now: s.now, tool: set.Tool}

	// The SDK knows no tools: the middleware answers tools/list and tools/call from the mapping.
	opts := &mcp.ServerOptions{Logger: s.log, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}
	opts.Capabilities.AddExtension(extensionTasks, nil)
	opts.Capabilities.Experimental = map[string]any{experimentalSEP1391: map[string]any{}}
	s.impl = &mcp.Implementation{Name: "taskgate", Version: Version}
	s.mcp = mcp.NewServer(s.impl, opts)
	s.dialects = s.newDialects()
	if err := s.addTaskMethods(); err != nil {
		return nil, err
	}
	s.mcp.AddReceivingMiddleware(s.middleware)
	return s, nil
}

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }
