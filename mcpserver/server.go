// Package mcpserver is taskgate's MCP server on the official go-sdk: its transports (an HTTP
// front with a fast path for polls and starts, and stdio), which know no task rule, and the
// limits they apply. Each request goes to the task dialects of docs/protocol.md (package
// dialects), which translate it into a call of the task service (package tasks) and its answer
// back into the caller's words. docs/architecture.md follows one request through.
package mcpserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mcpserver/dialects"
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

// NoTaskMode says how tools that run only as tasks are served to clients that support no kind of
// task: handles, wait or hide (dialects.NoTaskMode).
type NoTaskMode = dialects.NoTaskMode

// The NoTaskModes.
const (
	NoTaskHandles = dialects.NoTaskHandles
	NoTaskWait    = dialects.NoTaskWait
	NoTaskHide    = dialects.NoTaskHide
)

// ParseNoTaskMode reads a --no-task-clients value.
func ParseNoTaskMode(s string) (NoTaskMode, error) { return dialects.ParseNoTaskMode(s) }

// Server is one taskgate MCP server. Any number of them may serve the same task service.
type Server struct {
	mcp *mcp.Server
	// impl is the server's name and version, as go-sdk reports them.
	impl *mcp.Implementation
	log  *slog.Logger
	now  func() time.Time
	// dialects serve every request once a transport has carried it to them.
	dialects *dialects.Router
	observer Observer
	// methodNames are the methods an observer is told by name (Request.Method).
	methodNames map[string]string
	// front is the HTTP transport; rates are its and stdio's rate limits (Config.Limits).
	front *httpFront
	rates *rateLimits
	// conns are the open stdio connections.
	conns conns
	// closing closes when the server shuts down (Shutdown), which ends the listen streams.
	closing   chan struct{}
	closeOnce sync.Once
}

// New builds a server. It makes no engine call.
func New(cfg Config) (*Server, error) {
	if cfg.Tasks == nil {
		return nil, fmt.Errorf("mcpserver: a task service is required")
	}
	s := &Server{log: cfg.Logger, now: time.Now, observer: cfg.Observer, closing: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	limits := cfg.Limits.withDefaults()
	var err error
	s.dialects, err = dialects.New(dialects.Config{Tasks: cfg.Tasks, Logger: s.log, NoTaskClients: cfg.NoTaskClients,
		Followed: newShares(int64(limits.MaxFollowed), int64(limits.MaxFollowedPerPrincipal)), MaxListen: limits.MaxListen})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	s.methodNames = methodNames(s.dialects.Methods())
	s.rates = newRateLimits(limits, s.now, append(s.dialects.Methods(), listenMethod))
	s.front = &httpFront{log: s.log, auth: cfg.HTTPAuth, origins: cfg.AllowedOrigins, hosts: cfg.AllowedHosts, rates: s.rates,
		inFlight:        newShares(int64(limits.MaxInFlight), int64(limits.MaxInFlightPerPrincipal)),
		bodies:          newShares(limits.BodyBudget, limits.BodyBudgetPerPrincipal),
		unauthenticated: newShares(limits.BodyBudget/16, limits.BodyBudget/16),
		maxWait:         max(limits.MaxWait, 0), now: s.now, tool: cfg.Tasks.Mapping().Tool}

	// The SDK knows no tools: the dialects answer tools/list and tools/call from the mapping.
	opts := &mcp.ServerOptions{Logger: s.log, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}
	s.dialects.Declare(opts.Capabilities)
	s.impl = &mcp.Implementation{Name: "taskgate", Version: Version}
	s.mcp = mcp.NewServer(s.impl, opts)
	if err := s.dialects.AddMethods(s.mcp); err != nil {
		return nil, err
	}
	s.mcp.AddReceivingMiddleware(s.middleware)
	return s, nil
}

// HTTPHandler serves stateless Streamable HTTP: any replica answers any request.
func (s *Server) HTTPHandler() http.Handler {
	return s.front.serve(s.fastPath(s.sdkHTTP()))
}

// sdkHTTP is go-sdk's stateless Streamable HTTP handler. It refuses non-loopback Hosts on a
// loopback listener; a list of hosts replaces that check, for a reverse proxy on the same machine.
func (s *Server) sdkHTTP() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log, DisableLocalhostProtection: s.front.hostsListed()})
}

// Shutdown ends every listen stream with its result, as a server that shuts down gracefully must;
// the HTTP server calls it as it shuts down (http.Server.RegisterOnShutdown). Other requests go
// on to their answers.
func (s *Server) Shutdown() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }
