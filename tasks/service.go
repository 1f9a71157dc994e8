// Package tasks is taskgate's task service: it starts, reads, cancels, answers, lists and waits on
// the executions behind MCP tasks, over the engines the mapping names, whatever dialect a client
// speaks. It keeps no task state: a task id is a token around the engine's own reference (package
// token), and every read asks the engine, through the adapters.Engine that New builds over each
// driver's Conn (the reuse of readings, and the hooks: the read budget, the charge of each call to
// its caller, instrumentation). It imports
// no MCP package: calls come in as plain values (StartRequest, Answer), results go out as neutral
// data (Task, Result, Failure) and errors as typed ones (*Error), and package mcpserver puts them
// into each dialect's words.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/budget"
	"github.com/taskgate/taskgate/adapters/coalesce"
	"github.com/taskgate/taskgate/internal/lru"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// Config is what a Service serves.
type Config struct {
	Mapping *mapping.Set
	// Engines are the drivers' connections by engine block name; every tool's engine must be
	// present. The service does not close them.
	Engines map[string]adapters.Conn
	// Tokens issues and opens task ids (token.Sealed, or token.Native). Its Secrets also key the
	// callers recorded in the engines' records (callers.go): a mapping that authenticates callers
	// needs them, with native ids too, or an execution's id would confirm a guessed principal.
	Tokens token.Codec
	Logger *slog.Logger
	// Audit gets one line per start, cancel and answer of a task. Default: Logger.
	Audit *slog.Logger
	// EndedCacheSize bounds the cache of executions' statuses and outcomes per engine. Default
	// 65,536: the sweeps keep every running task they follow in it, and CacheBytes bounds its
	// memory.
	EndedCacheSize int
	// CacheBytes bounds the bytes of that cache across all engine blocks, each holding an equal
	// share: the count alone lets a few large outputs fill the memory. An execution whose
	// reading or outcome needs more than its block's share is not kept. Default DefaultCacheBytes;
	// negative: nothing is kept.
	CacheBytes int64
	// FreshFor is how long a running execution's status answers reads that come with no task
	// (default 250ms); a task's polls reuse it for the tool's polling interval at the task's age.
	// Negative: every read asks the engine.
	FreshFor time.Duration
	// Replicas is how many taskgate processes share each engine block's read budget
	// (mapping.Engine.Budget): this one spends its share. Default 1.
	Replicas int
	// Hooks, when set, are the hooks of each engine block (by block name) nearest the driver, so
	// that they see every call that reaches the engine (package observe measures and traces them).
	Hooks func(block string) []adapters.Hook
	// Observer, when set, is told of starts and ends.
	Observer Observer
}

// DefaultCacheBytes is the default of Config.CacheBytes: with Go's heap growing to about twice
// what it holds, 64 MiB of cached readings and outcomes leave a process within a 256 MiB
// container.
const DefaultCacheBytes = 64 << 20

// Service serves tasks over the engines. Any number of them may serve the same mapping and
// engines: nothing of a task lives in one.
type Service struct {
	set    *mapping.Set
	tokens token.Codec
	log    *slog.Logger
	audit  *slog.Logger
	now    func() time.Time
	// engines are the engines by block name; reads and budgets, their readings and read budgets,
	// which report what they did (budgets only for the blocks with a budget; blocks that read one
	// account share theirs).
	engines  map[string]*adapters.Engine
	reads    map[string]*coalesce.Readings
	budgets  map[string]*budget.Budget
	fair     map[*budget.Budget]*fairShare
	observer Observer
	callers  callers
	// clientKeys are what the client keys read or started with named (a shortcut only).
	clientKeys clientKeys
	// retention is, by tool name, how long its engine keeps ended executions (from CheckTargets).
	retention sync.Map
	// carriers are the contexts the sweeps carry (carried), shared.
	carriers *lru.Cache[carrier, context.Context]
}

// New builds a service. It makes no engine call; see CheckTargets.
func New(cfg Config) (*Service, error) {
	if cfg.Mapping == nil || cfg.Tokens == nil {
		return nil, fmt.Errorf("tasks: a mapping and a token codec are required")
	}
	if cfg.Mapping.Auth != nil && len(cfg.Tokens.Secrets()) == 0 {
		return nil, fmt.Errorf("tasks: the mapping authenticates callers, so the callers recorded in the engines need a secret: set TASKGATE_TOKEN_KEYS (also with native task ids)")
	}
	s := &Service{set: cfg.Mapping, tokens: cfg.Tokens, log: cfg.Logger, audit: cfg.Audit,
		now: time.Now, engines: map[string]*adapters.Engine{}, reads: map[string]*coalesce.Readings{},
		observer: cfg.Observer, clientKeys: newClientKeys(), callers: newCallers(cfg.Tokens.Secrets()),
		carriers: lru.New[carrier, context.Context](carriersKept)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.audit == nil {
		s.audit = s.log
	}
	size := cfg.EndedCacheSize
	if size == 0 {
		size = 1 << 16
	}
	fresh := cfg.FreshFor
	if fresh == 0 {
		fresh = 250 * time.Millisecond
	}
	blockBytes := cacheShare(cfg)
	if cfg.CacheBytes < 0 {
		size = 0
	}
	want, kinds := map[string]blockBudget{}, map[string]string{}
	for _, t := range cfg.Mapping.Tools {
		if _, ok := cfg.Engines[t.Engine]; !ok {
			return nil, fmt.Errorf("tasks: tool %q uses engine %q, which is not connected", t.Name, t.Engine)
		}
		if block, ok := cfg.Mapping.Engines[t.Engine]; ok {
			b := blockBudget{reads: block.Budget.Split(cfg.Replicas)}
			if d, ok := adapters.Lookup(block.Kind); ok {
				b.sweeps = d.Info().SweepBudget.Split(cfg.Replicas)
			}
			want[t.Engine], kinds[t.Engine] = b, block.Kind
		}
	}
	s.budgets, s.fair = readBudgets(want, kinds, cfg.Engines, s.log), map[*budget.Budget]*fairShare{}
	for _, t := range cfg.Mapping.Tools {
		c := cfg.Engines[t.Engine]
		if _, done := s.engines[t.Engine]; !done {
			s.engines[t.Engine] = s.newEngine(cfg, t.Engine, c, coalesce.Options{Size: size, Bytes: blockBytes, Fresh: fresh})
		}
	}
	return s, nil
}

// newEngine is the engine of the block called name over its Conn c. Readings are shared and reused
// above everything, longer as the budget's load grows, so that a read they answer costs nothing;
// then, from the outside in, reads are made within the block's read budget when it has one (its
// account's: see readBudgets; sweeps within its kind's sweep budget; a read it refuses is no
// engine call), each principal within its fair share of it while it is contended (fair.go); what reaches the engine is charged to the caller whose request makes it, and
// measured. When the engine sweeps, the readings of its running tasks are kept fresh a listing
// page at a time (coalesce.Readings.Sweeps).
func (s *Service) newEngine(cfg Config, name string, c adapters.Conn, o coalesce.Options) *adapters.Engine {
	var hooks []adapters.Hook
	if b, ok := s.budgets[name]; ok {
		fair, ok := s.fair[b]
		if !ok {
			fair = newFairShare(b, s.now)
			s.fair[b] = fair
		}
		hooks, o.Stretch, o.ListsApart = append(hooks, fair.Hook, b.Hook), b.Stretch, b.ListsApart()
	}
	hooks = append(hooks, bill)
	if cfg.Hooks != nil {
		hooks = append(hooks, cfg.Hooks(name)...)
	}
	o.Carry, o.VisibilityLag = s.carried, adapters.VisibilityLagOf(c)
	if s.observer != nil {
		o.Ended = s.ended
	}
	s.reads[name] = coalesce.New(o)
	e := adapters.NewEngine(c, adapters.EngineOptions{Hooks: hooks, Readings: s.reads[name]})
	if e.Supports(adapters.OpSweep) {
		s.reads[name].Sweeps(e)
	}
	return e
}

// Close stops what the service runs of its own: the sweeps of the engines' readings. The engines'
// connections are their opener's to close.
func (s *Service) Close() {
	for _, r := range s.reads {
		r.Close()
	}
}

// cacheShare is each engine block's share of cfg.CacheBytes, at least a byte (coalesce reads 0
// as no bound).
func cacheShare(cfg Config) int64 {
	total := cfg.CacheBytes
	if total == 0 {
		total = DefaultCacheBytes
	}
	blocks := map[string]bool{}
	for _, t := range cfg.Mapping.Tools {
		blocks[t.Engine] = true
	}
	return max(total/int64(max(len(blocks), 1)), 1)
}

// Mapping is the mapping the service serves.
func (s *Service) Mapping() *mapping.Set { return s.set }

type toolKey struct{}

// engine is the engine of tool, and ctx telling its hooks and readings which tool calls it.
func (s *Service) engine(ctx context.Context, tool *mapping.Tool) (context.Context, *adapters.Engine) {
	return context.WithValue(ctx, toolKey{}, tool), s.engines[tool.Engine]
}

// carried is what the sweeps of an engine's readings keep of the context of a read that followed
// an execution (coalesce.Options.Carry): which tool read it, so that an end a sweep learns is told
// as that tool's; and whom its engine calls are charged to, so that the
// outcome read that confirms its end is paid for by the caller that asked about it, as the read
// itself would have been. That is all it depends on, so the contexts are shared: each of a
// caller's tasks followed would hold one of its own else. Every call made with one is charged
// (none is a request's first, which its admission paid).
func (s *Service) carried(ctx context.Context) context.Context {
	var k carrier
	k.tool, _ = ctx.Value(toolKey{}).(*mapping.Tool)
	if r := requestOf(ctx); r != nil {
		k.payer = r.charge.payer
	}
	if out, ok := s.carriers.Get(k); ok {
		return out
	}
	out := context.Background()
	if k.tool != nil {
		out = context.WithValue(out, toolKey{}, k.tool)
	}
	if k.payer != nil {
		out = Charging(out, k.payer)
		requestOf(out).charge.paid.Store(false)
	}
	s.carriers.Update(k, func(c *context.Context) {
		if *c == nil {
			*c = out
		}
		out = *c
	})
	return out
}

// carrier is what a carried context is made of.
type carrier struct {
	tool  *mapping.Tool
	payer *Payer
}

// carriersKept bounds the carried contexts kept for reuse, the most recently used: one a tool for
// each of as many callers, at least, as are active at once. One dropped is made anew when next
// needed; the executions followed with it keep theirs.
const carriersKept = 4096

// ended tells the observer of an end that an engine call of a tool just learnt.
func (s *Service) ended(ctx context.Context, _ adapters.Target, _ adapters.Ref, st adapters.State) {
	if tool, ok := ctx.Value(toolKey{}).(*mapping.Tool); ok {
		s.observer.Ended(ctx, tool.Name, st)
	}
}

// started counts an execution that a call started.
func (s *Service) started(ctx context.Context, tool *mapping.Tool) {
	if s.observer != nil {
		s.observer.Started(ctx, tool.Name)
	}
}

// TargetError is a tool whose target its engine did not confirm: unreachable (Err wraps
// adapters.ErrUnavailable), missing, or not servable as mapped.
type TargetError struct {
	Tool, Source, Engine string
	Err                  error
}

func (e *TargetError) Error() string { return fmt.Sprintf("tool %q (%s): %v", e.Tool, e.Source, e.Err) }

func (e *TargetError) Unwrap() error { return e.Err }

// CheckTargets asks each engine whether every tool's target exists and can be served as mapped.
// It returns the warnings worth printing and every problem found, each a *TargetError.
func (s *Service) CheckTargets(ctx context.Context) ([]string, error) {
	var warnings []string
	var problems []error
	for _, t := range s.set.Tools {
		info, err := s.CheckTarget(ctx, t)
		if err != nil {
			problems = append(problems, err)
		}
		for _, w := range info.Warnings {
			warnings = append(warnings, fmt.Sprintf("tool %q: %s", t.Name, w))
		}
	}
	return warnings, errors.Join(problems...)
}

// CheckTarget asks the tool's engine whether its target exists and can be served as mapped; the
// error is a *TargetError.
func (s *Service) CheckTarget(ctx context.Context, t *mapping.Tool) (adapters.TargetInfo, error) {
	info, err := s.engines[t.Engine].Check(ctx, t.Target)
	if err != nil {
		return info, &TargetError{Tool: t.Name, Source: t.Source, Engine: t.Engine, Err: err}
	}
	s.retention.Store(t.Name, info.Retention)
	if info.SyncOnly != "" && t.TaskSupport != mapping.TaskForbidden {
		return info, &TargetError{Tool: t.Name, Source: t.Source, Engine: t.Engine,
			Err: fmt.Errorf("%s, so it cannot back a task: set `taskSupport: forbidden`", info.SyncOnly)}
	}
	return info, nil
}

// Reads are, by engine block name, the engine reads the service has made since New, by how each
// was served (an engine call, or a shortcut).
func (s *Service) Reads() map[string]coalesce.Counts {
	reads := make(map[string]coalesce.Counts, len(s.reads))
	for name, e := range s.reads {
		reads[name] = e.Counts()
	}
	return reads
}

// CacheBytes are, by engine block name, about how many bytes of readings and outcomes the
// service holds to answer reads.
func (s *Service) CacheBytes() map[string]int64 {
	held := make(map[string]int64, len(s.reads))
	for name, e := range s.reads {
		held[name] = e.Bytes()
	}
	return held
}

// Sweeps are, by engine block name, what the sweeps of the blocks whose engines sweep did.
func (s *Service) Sweeps() map[string]coalesce.SweepCounts {
	out := map[string]coalesce.SweepCounts{}
	for name, e := range s.engines {
		if e.Supports(adapters.OpSweep) {
			out[name] = s.reads[name].SweepCounts()
		}
	}
	return out
}

// Budgets are, by engine block name, what the read budgets of the blocks that have one did (blocks
// that read one account report their shared budget each).
func (s *Service) Budgets() map[string]budget.Stats {
	stats := make(map[string]budget.Stats, len(s.budgets))
	for name, b := range s.budgets {
		stats[name] = b.Stats()
	}
	return stats
}

// auditLine records one start, cancel or answer: who, which tool, which execution, and how it
// went. Task ids are bearer handles and never appear in it.
func (s *Service) auditLine(ctx context.Context, event string, tool *mapping.Tool, ref adapters.Ref, outcome string) {
	Note(ctx, tool, ref)
	s.audit.Info("audit", "event", event, "principal", Principal(ctx), "tool", tool.Name, "engine", tool.Engine,
		"execution", ref.String(), "outcome", outcome)
}

// outcome is an engine call's result in an audit line.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, adapters.ErrEnded):
		return "already ended"
	case errors.Is(err, adapters.ErrKeyConflict):
		return "refused: idempotency key conflict"
	case errors.Is(err, adapters.ErrInvalid):
		return "refused: " + err.Error()
	}
	return "failed: " + err.Error()
}
