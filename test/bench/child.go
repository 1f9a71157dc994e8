package main

// The taskgate side of the bench: the bench runs itself again as a child process (selected by the
// TASKGATE_BENCH_CHILD environment variable, which holds a childConfig) that serves the bench's
// mapping through mcpserver, exactly as `taskgate serve` does, with three additions that only the
// bench build has: every engine is wrapped so that calls are counted at the engine boundary, a
// debug listener reports those counts and the goroutine count (GET /debug/bench), and it starts and
// stops CPU profiles and writes heap profiles on request (and serves net/http/pprof). A child of
// its own keeps taskgate's memory, CPU and profiles apart from the load generator's.

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	rpprof "runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/builtin" // the engine kinds taskgate is built with, as in cmd/taskgate
	"github.com/taskgate/taskgate/adapters/coalesce"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/observe"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

//go:embed tools.yaml
var toolsYAML []byte

// benchTools is the bench's mapping, tools.yaml.
func benchTools() (*mapping.Set, error) { return mapping.Parse("test/bench/tools.yaml", toolsYAML) }

// childEnv holds the JSON childConfig of a child process; the bench (and its test binary) checks
// it first thing.
const childEnv = "TASKGATE_BENCH_CHILD"

// readyLine starts the line a child prints on stderr once it serves, followed by its base URL.
const readyLine = "bench-child ready "

type childConfig struct {
	// Stdio serves MCP on standard input/output; else on http://BASE/mcp.
	Stdio bool
	// FreshFor is tasks.Config.FreshFor (0: the service's default).
	FreshFor time.Duration
	// Keys are the token keys (token.ParseKeys), shared with the bench so that it can open the
	// ids it is given and mint ids of its own.
	Keys string
	// PerRef also counts engine reads per execution (the engine-economy figure).
	PerRef bool
	// MemProfileRate, when set, is runtime.MemProfileRate (finer allocation profiles).
	MemProfileRate int
	// Budgets replace the read budgets of the engine blocks they name (the zero Budget:
	// unlimited); the others keep the mapping's (its kind's default).
	Budgets map[string]adapters.Budget
	// Env are variables set for the child (the engines' addresses, through a proxy).
	Env map[string]string
	// Mapping, when set, is the mapping file the child serves instead of tools.yaml (its text,
	// ${VAR}s expanded in the child).
	Mapping string
	// Replicas is serve's --replicas: how many processes share each engine block's read budget
	// (0: one).
	Replicas int
}

// counters count the calls that reach the engines.
type counters struct {
	describe, outcome, start, cancel, sweep atomic.Int64
	perRefOn                                bool
	mu                                      sync.Mutex
	inFlight                                map[string]int
	maxInFlight                             int
	perRef                                  map[string]int64
	// blocks are the reads by engine block; sweeps what each block's sweeps did.
	blocks map[string]*blockCounts
	sweeps func() map[string]coalesce.SweepCounts
}

// blockCounts are the reads that reached one engine block.
type blockCounts struct {
	Describe, Outcome, Sweep atomic.Int64
	// sweepTime is the time the sweep calls took at the engine, below every hook (nanoseconds).
	sweepTime atomic.Int64
}

// childCounts is what GET /debug/bench answers.
type childCounts struct {
	Describe, Outcome, Start, Cancel int64
	// Sweep counts the listing pages read for many executions at once (driver.Sweeper).
	Sweep int64
	// MaxInFlight is the most engine reads ever in flight at once for one execution, since the
	// last ?reset=1.
	MaxInFlight int
	Goroutines  int
	// HeapInuse is runtime.MemStats.HeapInuse, after a garbage collection when asked (?gc=1).
	HeapInuse uint64
	// PerRef is the engine reads per execution (with ?refs=1, when the child counts them).
	PerRef map[string]int64 `json:",omitempty"`
	// Blocks are the reads by engine block: describe, outcome and sweep calls, and the
	// milliseconds the sweep calls took at the engine.
	Blocks map[string][4]int64 `json:",omitempty"`
	// Sweeps are what each block's sweeps did.
	Sweeps map[string]coalesce.SweepCounts `json:",omitempty"`
}

// Reads counts the engine reads: Describe, Outcome and Sweep calls.
func (c childCounts) Reads() int64 { return c.Describe + c.Outcome + c.Sweep }

func (c *counters) enter(r adapters.Ref) func() {
	k := r.String()
	c.mu.Lock()
	c.inFlight[k]++
	c.maxInFlight = max(c.maxInFlight, c.inFlight[k])
	if c.perRefOn {
		c.perRef[k]++
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.inFlight[k]--; c.inFlight[k] == 0 {
			delete(c.inFlight, k)
		}
		c.mu.Unlock()
	}
}

func (c *counters) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	out := childCounts{Describe: c.describe.Load(), Outcome: c.outcome.Load(), Start: c.start.Load(),
		Cancel: c.cancel.Load(), Sweep: c.sweep.Load()}
	c.mu.Lock()
	out.MaxInFlight = c.maxInFlight
	if q.Get("reset") == "1" { // from now on: what is in flight now, and what comes
		c.maxInFlight = 0
		for _, n := range c.inFlight {
			c.maxInFlight = max(c.maxInFlight, n)
		}
	}
	if q.Get("refs") == "1" && c.perRefOn {
		out.PerRef = make(map[string]int64, len(c.perRef))
		for k, v := range c.perRef {
			out.PerRef[k] = v
		}
	}
	c.mu.Unlock()
	out.Blocks = map[string][4]int64{}
	for name, b := range c.blocks {
		out.Blocks[name] = [4]int64{b.Describe.Load(), b.Outcome.Load(), b.Sweep.Load(), time.Duration(b.sweepTime.Load()).Milliseconds()}
	}
	if c.sweeps != nil {
		out.Sweeps = c.sweeps()
	}
	if q.Get("gc") == "1" {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	out.HeapInuse = m.HeapInuse
	out.Goroutines = runtime.NumGoroutine()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// of is the hook that counts every call that reaches the engine block name, nearest the engine:
// in all and in the block's counts.
func (c *counters) of(name string) adapters.Hook {
	b := &blockCounts{}
	c.mu.Lock()
	c.blocks[name] = b
	c.mu.Unlock()
	return func(ctx context.Context, call *adapters.Call) (context.Context, func(error) error, error) {
		switch call.Op {
		case adapters.OpDescribe, adapters.OpOutcome:
			if call.Op == adapters.OpDescribe {
				c.describe.Add(1)
				b.Describe.Add(1)
			} else {
				c.outcome.Add(1)
				b.Outcome.Add(1)
			}
			exit := c.enter(call.Ref)
			return ctx, func(err error) error { exit(); return err }, nil
		case adapters.OpStart:
			c.start.Add(1)
		case adapters.OpCancel:
			c.cancel.Add(1)
		case adapters.OpSweep:
			c.sweep.Add(1)
			b.Sweep.Add(1)
			began := time.Now()
			return ctx, func(err error) error { b.sweepTime.Add(int64(time.Since(began))); return err }, nil
		}
		return ctx, nil, nil
	}
}

// floorAnswers answer a tasks/get with the result the bench stored under the path's name (PUT), a
// copy of taskgate's own answer, doing nothing else, or first the one engine read the bench named
// with it (?engine=BLOCK&ref=ID), made with the SDK client that taskgate's engine holds: what an
// HTTP poll costs before any of taskgate's work (the poll figure's "HTTP floor" rows).
type floorAnswers struct {
	// reads are the direct reads of the engine blocks that have one, by block name.
	reads   map[string]func(ctx context.Context, id string) error
	answers sync.Map // name -> floorAnswer
}

type floorAnswer struct {
	result json.RawMessage
	read   func(ctx context.Context) error // nil: none
}

// directReads are the direct status reads of the engines that taskgate reads through an SDK
// client: one DescribeWorkflowExecution, one DescribeExecution.
func directReads(engines map[string]adapters.Conn) map[string]func(ctx context.Context, id string) error {
	reads := map[string]func(ctx context.Context, id string) error{}
	for name, e := range engines {
		var tc client.Client
		var sc *sfn.Client
		switch {
		case driver.As(e, &tc):
			reads[name] = func(ctx context.Context, id string) error {
				_, err := describeWorkflow(ctx, tc, adapters.Ref{ID: id})
				return err
			}
		case driver.As(e, &sc):
			reads[name] = func(ctx context.Context, id string) error {
				_, err := describeExecution(ctx, sc, id)
				return err
			}
		}
	}
	return reads
}

func (f *floorAnswers) store(w http.ResponseWriter, r *http.Request) {
	result, err := io.ReadAll(r.Body)
	if err != nil || !json.Valid(result) {
		http.Error(w, "want a JSON result", http.StatusBadRequest)
		return
	}
	a := floorAnswer{result: result}
	if block := r.URL.Query().Get("engine"); block != "" {
		read, ok := f.reads[block]
		if !ok {
			http.Error(w, "no direct read of engine "+block, http.StatusBadRequest)
			return
		}
		ref := r.URL.Query().Get("ref")
		a.read = func(ctx context.Context) error { return read(ctx, ref) }
	}
	f.answers.Store(r.PathValue("name"), a)
}

func (f *floorAnswers) answer(w http.ResponseWriter, r *http.Request) {
	var req struct{ ID any }
	stored, ok := f.answers.Load(r.PathValue("name"))
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !ok {
		http.Error(w, "nothing stored under this name, or a request that is not JSON", http.StatusBadRequest)
		return
	}
	a := stored.(floorAnswer)
	if a.read != nil {
		if err := a.read(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": a.result})
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
}

// floorStarts answer a tools/call of a tool after one Start of its target, made with taskgate's
// own driver and nothing else of taskgate's (no schema, no task id: the answer's taskId is the
// engine's own reference): what a start over HTTP costs before any of taskgate's work.
func floorStarts(set *mapping.Set, engines map[string]adapters.Conn) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     any
			Params struct{ Arguments json.RawMessage }
		}
		t, ok := set.Tool(r.PathValue("tool"))
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !ok {
			http.Error(w, "no such tool, or a request that is not JSON", http.StatusBadRequest)
			return
		}
		ref, err := engines[t.Engine].Start(r.Context(), t.Target, adapters.StartRequest{Input: req.Params.Arguments})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"result": map[string]any{"resultType": "task", "taskId": ref.ID, "status": "working"}})
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
	}
}

// childMain runs a child process until it is told to stop (SIGTERM, or the end of standard input
// on stdio) and returns its exit code.
func childMain(spec string) int {
	if err := serveChild(spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	return 0
}

func serveChild(spec string) error {
	var cfg childConfig
	if err := json.Unmarshal([]byte(spec), &cfg); err != nil {
		return fmt.Errorf("%s: %w", childEnv, err)
	}
	if cfg.MemProfileRate > 0 {
		runtime.MemProfileRate = cfg.MemProfileRate
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// As `taskgate serve` with its default flags: the server's own log at warn, a line per request
	// but polls answered ok (--log-level info) and the metrics, on stderr; no traces (no OTEL_*
	// endpoint).
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tel := observe.New(observe.Options{Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	set, err := benchTools()
	if cfg.Mapping != "" {
		set, err = mapping.Parse("bench-child.yaml", []byte(cfg.Mapping))
	}
	if err != nil {
		return err
	}
	for name, b := range cfg.Budgets {
		set.Engines[name].Budget = b
	}
	counts := &counters{inFlight: map[string]int{}, perRefOn: cfg.PerRef, perRef: map[string]int64{}, blocks: map[string]*blockCounts{}}
	engines := map[string]adapters.Conn{}
	for name, e := range set.Engines {
		eng, err := e.Config.Open(ctx, adapters.OpenOptions{Retried: tel.Retried(name)})
		if err != nil {
			return fmt.Errorf("engine %s: %w", name, err)
		}
		defer eng.Close()
		engines[name] = eng
	}
	keys, err := token.ParseKeys(cfg.Keys)
	if err != nil {
		return err
	}
	tokens, err := token.NewSealed(keys)
	if err != nil {
		return err
	}
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: tokens, Logger: log, FreshFor: cfg.FreshFor, Replicas: cfg.Replicas,
		Hooks: func(name string) []adapters.Hook { return []adapters.Hook{tel.Engine(name), counts.of(name)} }, Observer: tel})
	if err != nil {
		return err
	}
	counts.sweeps = svc.Sweeps
	// Rate limits off, and room for every request of the fleet's clients in flight: they would
	// limit the bench (they have tests of their own).
	srv, err := mcpserver.New(mcpserver.Config{Tasks: svc, Logger: log, Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1, MaxInFlight: 8192}, Observer: tel})
	if err != nil {
		return err
	}
	tel.Watch(svc)
	checkCtx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err = svc.CheckTargets(checkCtx) // warnings (no worker polls the unpolled queue) are expected
	cancel()
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/debug/bench", counts.serve)
	prof := &profiler{}
	mux.HandleFunc("/debug/bench/cpu", prof.cpu)
	mux.HandleFunc("/debug/bench/heap", prof.heap)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if !cfg.Stdio {
		mux.Handle("/mcp", tel.HTTP(srv.HTTPHandler()))
		floor := &floorAnswers{reads: directReads(engines)}
		mux.HandleFunc("PUT /floor/{name}", floor.store)
		mux.HandleFunc("POST /floor/{name}", floor.answer)
		mux.HandleFunc("POST /floor-start/{tool}", floorStarts(set, engines))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// As serve's defaults: an idle keep-alive connection is closed after a minute (without an
	// IdleTimeout, net/http would close it after ReadHeaderTimeout), and so is a new one that has
	// not sent its first request (net/http alone would close it after ReadHeaderTimeout, though the
	// bench's client may hold it unused, in its idle pool, for 30 s).
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go hs.Serve(mcpserver.AwaitFirstRequest(hs, ln))
	fmt.Fprintf(os.Stderr, "%shttp://%s\n", readyLine, ln.Addr())
	if cfg.Stdio {
		err = srv.ServeStdio(ctx)
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			err = nil
		}
	} else {
		<-ctx.Done()
	}
	prof.stop()
	shut, cancelShut := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelShut()
	hs.Shutdown(shut)
	return err
}

// profiler starts and stops the child's CPU profile and writes heap profiles, on request of the
// bench: GET /debug/bench/cpu?start=FILE, /debug/bench/cpu?stop=1, /debug/bench/heap?file=FILE.
type profiler struct {
	mu   sync.Mutex
	file *os.File
}

func (p *profiler) cpu(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if path := r.URL.Query().Get("start"); path != "" {
		if p.file != nil {
			http.Error(w, "a CPU profile is already running", http.StatusConflict)
			return
		}
		f, err := os.Create(path)
		if err == nil {
			if err = rpprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		p.file = f
		return
	}
	if err := p.stopLocked(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (p *profiler) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

func (p *profiler) stopLocked() error {
	if p.file == nil {
		return nil
	}
	rpprof.StopCPUProfile()
	err := p.file.Close()
	p.file = nil
	return err
}

// heap writes the allocation profile (alloc_space and inuse_space since the child started), after
// a garbage collection so that inuse is current.
func (p *profiler) heap(w http.ResponseWriter, r *http.Request) {
	runtime.GC()
	f, err := os.Create(r.URL.Query().Get("file"))
	if err == nil {
		err = rpprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
