package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/tasks/token"
	"github.com/taskgate/taskgate/test/faults"
)

//go:embed soak.yaml
var soakMapping []byte

// settle is how long a fault window lasts past the fault's end (or the recovery the soak saw):
// polls then still feel it.
const settle = 5 * time.Second

// soak is one run.
type soak struct {
	o   options
	out io.Writer
	// id is in every marker of the run, so that executions of other runs on the same engines are
	// told apart.
	id    string
	work  string
	stats *stats
	// setUp is before anything started; begin when the clients started; stopAt when they stop
	// starting calls.
	setUp, begin, stopAt time.Time

	temporal *temporalServer
	worker   *proc
	replicas []*replica
	proxies  map[string]*faults.Proxy
	sfnARNs  map[string]string
	frontSrv *http.Server
	frontURL string
	// sentinels are long tasks, one per engine, that the recovery probes read on each replica.
	sentinels map[string]string

	// restarting is set while the soak restarts the Temporal server.
	restarting atomic.Bool

	mu       sync.Mutex
	windows  []window
	faultLog []faultRecord
	series   []seriesPoint
	outages  []outage
}

// faultRecord is one fault as it happened.
type faultRecord struct {
	AtSeconds    float64 `json:"atSeconds"`
	Kind         string  `json:"kind"`
	Engine       string  `json:"engine,omitempty"`
	Replica      string  `json:"replica,omitempty"`
	LastsSeconds float64 `json:"lastsSeconds"`
	// Connections is how many connections a resets or stall fault ended or silenced.
	Connections int `json:"connections,omitempty"`
	// RecoveryMs is, per replica, how long after the fault ended (the engine served again) the
	// replica was sent the first poll of a task on that engine that it then answered: when it
	// served again, whatever the engine's answer then took (AnsweredMs, when it arrived). -1 when
	// no poll was answered within 2 minutes.
	RecoveryMs []float64 `json:"recoveryMs,omitempty"`
	AnsweredMs []float64 `json:"answeredMs,omitempty"`
	// EngineMs is how long a restarted server took from answering to serving workflows (a
	// DescribeWorkflowExecution): the engine's own recovery, which the replicas' counts from.
	EngineMs float64 `json:"engineMs,omitempty"`
	// ReadyMs is, per replica, how long after the engine served again /readyz was asked the
	// first time it said ready.
	ReadyMs []float64 `json:"readyMs,omitempty"`
	// LastErrors are, per replica, the last error a recovery poll got, and when.
	LastErrors []string `json:"lastErrors,omitempty"`
	// KilledRecoveryMs is, by engine, how long after a killed replica served again it answered
	// the first poll of a task on that engine (one it holds no reading of): -1 when it did not
	// within 2 minutes.
	KilledRecoveryMs map[string]float64 `json:"killedRecoveryMs,omitempty"`
	Error            string             `json:"error,omitempty"`
}

// seriesPoint is every replica's usage at one moment.
type seriesPoint struct {
	AtSeconds   float64 `json:"atSeconds"`
	LoadAverage string  `json:"loadAverage"`
	Replicas    []usage `json:"replicas"`
}

func (s *soak) logf(format string, args ...any) {
	at := ""
	if !s.begin.IsZero() {
		at = fmt.Sprintf("[%4.0fs] ", time.Since(s.begin).Seconds())
	}
	fmt.Fprintf(s.out, "soak: %s%s\n", at, fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o options, out io.Writer) (*summary, error) {
	s := &soak{o: o, out: out, stats: newStats(), proxies: map[string]*faults.Proxy{}, sentinels: map[string]string{}}
	s.id = fmt.Sprintf("soak%08x", rand.Uint32())
	s.setUp = time.Now().Add(-time.Second)
	defer s.teardown()
	if err := s.setUpAll(ctx); err != nil {
		return nil, err
	}

	warm := min(max(o.duration/10, 20*time.Second), time.Minute)
	events := plan(planOptions{from: 2 * warm, to: o.duration - max(20*time.Second, o.duration/20),
		killEvery: o.killEvery, killDown: o.killDown, outage: o.outage, gap: max(10*time.Second, o.duration/40), replicas: o.replicas, only: o.only})
	s.logf("%d clients for %v, then up to %v for the calls still open; warm-up %v, fault-free %v, then %d faults:",
		o.clients, o.duration, o.drain, warm, warm, len(events))
	for _, e := range events {
		s.logf("  at %v", e)
	}

	idleAtStart := make([]usage, len(s.replicas))
	for i, r := range s.replicas {
		idleAtStart[i], _ = r.usage(ctx)
	}
	s.begin = time.Now()
	s.stopAt = s.begin.Add(o.duration)
	clientCtx, stopClients := context.WithDeadline(ctx, s.stopAt.Add(o.drain))
	defer stopClients()
	var clients sync.WaitGroup
	tr := mcpclient.HTTP{URL: s.frontURL, Client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	for i := range o.clients {
		c := &client{id: i, rng: rand.New(rand.NewPCG(o.seed, uint64(i))), run: s, sfnRate: o.sfnShare,
			s: newSession(dialects[i%len(dialects)], tr, o.requestTimeout)}
		clients.Add(1)
		go func() {
			defer clients.Done()
			// Clients arrive over the first seconds, not in one burst.
			if sleep(clientCtx, time.Duration(c.rng.IntN(5000))*time.Millisecond) {
				c.loop(clientCtx)
			}
		}()
	}

	usages := s.watch(ctx, warm)
	sfnEngine, err := stepfunctions.New(ctx, stepfunctions.Config{Endpoint: o.sfnEndpoint})
	if err != nil {
		return nil, err
	}
	var sfnClient *sfn.Client
	driver.As(sfnEngine, &sfnClient)
	guardCtx, stopGuard := context.WithCancel(ctx)
	defer stopGuard()
	go s.guard(guardCtx, sfnClient, &s.restarting)
	var faultsDone sync.WaitGroup
	for _, e := range events {
		faultsDone.Add(1)
		go func() {
			defer faultsDone.Done()
			if sleep(ctx, time.Until(s.begin.Add(e.at))) {
				s.inject(ctx, e)
			}
		}()
	}
	faultsDone.Wait()
	s.logf("faults done; clients stop starting calls at %v", o.duration)
	clients.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.logf("clients done")
	stopGuard()
	done := time.Now()
	u := usages()
	for i := range s.replicas {
		u[i].IdleAtStart = idleAtStart[i]
	}

	for _, r := range s.replicas { // for whoever reads why a run failed: sweeps, budget, readings
		if err := r.saveMetrics(ctx, filepath.Join(s.work, r.name()+".metrics")); err != nil {
			s.logf("%v", err)
		}
	}
	// An engine that cannot be audited (it went away) leaves its calls' executions uncounted.
	counts, audit := map[string]int{}, map[string]error{}
	audit[engineTemporal] = s.auditTemporal(ctx, counts)
	audit[engineSFN] = s.auditSFN(ctx, sfnClient, s.sfnARNs, counts)
	// Idle: once the front has closed its idle connections to the replicas (after 30 s).
	if !sleep(ctx, time.Until(done.Add(35*time.Second))) {
		return nil, ctx.Err()
	}
	for i, r := range s.replicas {
		u[i].Idle, _ = r.usage(ctx)
	}
	sum := s.summarize(u, counts, audit, len(events))
	sum.print(out)
	if o.jsonFile != "" {
		if err := sum.write(o.jsonFile); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// setUpAll starts everything the clients need: engines, worker, proxies, replicas, front.
func (s *soak) setUpAll(ctx context.Context) error {
	o := s.o
	s.work = o.work
	if s.work == "" {
		var err error
		if s.work, err = os.MkdirTemp("", "taskgate-soak-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(s.work, 0o755); err != nil {
		return err
	}
	s.logf("run %s; logs in %s", s.id, s.work)

	bin, err := s.binary(ctx, o.taskgate, "taskgate", "github.com/taskgate/taskgate/cmd/taskgate")
	if err != nil {
		return err
	}
	workerBin, err := s.binary(ctx, o.worker, "worker", "github.com/taskgate/taskgate/examples/temporal/worker")
	if err != nil {
		return err
	}
	if _, err := os.Stat(o.temporalCLI); err != nil {
		return fmt.Errorf("no Temporal CLI at %s: run scripts/with-engines once (it builds it), or pass -temporal-cli", o.temporalCLI)
	}

	port, err := freePort()
	if err != nil {
		return err
	}
	s.temporal = &temporalServer{cli: o.temporalCLI, db: workFile(s.work, "temporal.db"), logPath: workFile(s.work, "temporal.log"), port: port}
	s.logf("starting a Temporal dev server on %s", s.temporal.addr())
	if err := s.temporal.start(ctx); err != nil {
		return err
	}
	if s.worker, err = startProc("worker", workFile(s.work, "worker.log"), []string{"TEMPORAL_ADDRESS=" + s.temporal.addr()}, workerBin); err != nil {
		return err
	}

	sfnEngine, err := stepfunctions.New(ctx, stepfunctions.Config{Endpoint: o.sfnEndpoint})
	if err != nil {
		return err
	}
	var sfnClient *sfn.Client
	driver.As(sfnEngine, &sfnClient)
	if s.sfnARNs, err = sfnexamples.Ensure(ctx, sfnClient, "arn:aws:iam::123456789012:role/taskgate-soak"); err != nil {
		return fmt.Errorf("creating the Step Functions examples in %s: %w", o.sfnEndpoint, err)
	}
	sfnHost := strings.TrimPrefix(strings.TrimPrefix(o.sfnEndpoint, "http://"), "https://")
	for engine, target := range map[string]string{engineTemporal: s.temporal.addr(), engineSFN: sfnHost} {
		p, err := faults.Listen(target)
		if err != nil {
			return err
		}
		s.proxies[engine] = p
	}

	files := map[string][]byte{"temporal-tools.yaml": temporalexamples.Mapping, "stepfunctions-tools.yaml": sfnexamples.Mapping, "soak.yaml": soakMapping}
	// All clients are one principal (no auth:), so the per-principal rate limits are off; the
	// waiting calls are bounded by their tools' timeout (2 minutes), not by the server's default.
	args := []string{"serve", "--log-level", "warn", "--calls-per-second", "-1", "--polls-per-second", "-1",
		"--max-in-flight", "4096", "--max-wait", "3m"}
	for name, data := range files {
		path, err := writeFile(s.work, name, data)
		if err != nil {
			return err
		}
		args = append(args, "--config", path)
	}
	account := strings.Split(s.sfnARNs[sfnexamples.WaitAndEcho], ":")[4]
	env := []string{
		"TASKGATE_TOKEN_KEYS=" + token.NewKey("soak"),
		"TEMPORAL_ADDRESS=" + s.proxies[engineTemporal].Addr(),
		"SFN_ENDPOINT=http://" + s.proxies[engineSFN].Addr(),
		"SFN_ACCOUNT=" + account,
		"AWS_REGION=us-east-1",
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		env = append(env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test")
	}
	var backends []string
	for i := range o.replicas {
		port, err := freePort()
		if err != nil {
			return err
		}
		r := &replica{index: i, addr: fmt.Sprintf("127.0.0.1:%d", port), bin: bin, env: env,
			args: append(slices.Clone(args), "--http", fmt.Sprintf("127.0.0.1:%d", port)),
			log:  workFile(s.work, fmt.Sprintf("replica-%d.log", i))}
		if err := r.start(ctx); err != nil {
			return err
		}
		s.replicas = append(s.replicas, r)
		backends = append(backends, r.addr)
	}
	s.logf("%d replicas serving", len(s.replicas))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.frontSrv = &http.Server{Handler: newFront(backends)}
	go s.frontSrv.Serve(ln)
	s.frontURL = "http://" + ln.Addr().String() + "/mcp"

	// The sentinels: an hour-long echo on each engine, read by the recovery probes.
	boot := newSession(dialectExtension, mcpclient.HTTP{URL: s.frontURL}, time.Minute)
	for engine, tool := range map[string]string{engineTemporal: "wait_and_echo", engineSFN: "sfn_wait_and_echo"} {
		st, err := boot.start(ctx, tool, map[string]any{"seconds": 3600, "text": s.id + "-sentinel-" + engine}, "", 0)
		if err != nil {
			return fmt.Errorf("starting the %s sentinel: %w", engine, err)
		}
		s.sentinels[engine] = st.id
	}
	return nil
}

// binary is path, or else pkg built into the work folder as name.
func (s *soak) binary(ctx context.Context, path, name, pkg string) (string, error) {
	if path != "" {
		return path, nil
	}
	path = workFile(s.work, name)
	s.logf("building %s", name)
	build := exec.CommandContext(ctx, "go", "build", "-o", path, pkg)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	return path, nil
}

// teardown stops everything the run started, the sentinels first.
func (s *soak) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.frontURL != "" {
		boot := newSession(dialectExtension, mcpclient.HTTP{URL: s.frontURL}, 10*time.Second)
		for _, id := range s.sentinels {
			boot.cancel(ctx, id)
		}
	}
	if s.frontSrv != nil {
		s.frontSrv.Close()
	}
	for _, r := range s.replicas {
		r.stop()
	}
	if s.worker != nil {
		s.worker.stop()
	}
	for _, p := range s.proxies {
		p.Close()
	}
	if s.temporal != nil {
		s.temporal.stop()
	}
}

// inject brings about one fault, waits for its end and for the replicas to recover, and records
// its window.
func (s *soak) inject(ctx context.Context, e event) {
	rec := faultRecord{AtSeconds: time.Since(s.begin).Seconds(), Kind: e.kind, Engine: e.engine, LastsSeconds: e.lasts.Seconds()}
	from := time.Now()
	s.logf("%v", e)
	switch e.kind {
	case faultKill:
		r := s.replicas[e.victim]
		rec.Replica = r.name()
		r.kill()
		sleep(ctx, e.lasts)
		if err := r.start(ctx); err != nil {
			rec.Error = err.Error()
			break
		}
		rec.KilledRecoveryMs = s.killedRecovery(ctx, r)
		s.logf("%s serves again; first polls of each engine's task answered after %v ms", r.name(), rec.KilledRecoveryMs)
	case faultRestart:
		s.restarting.Store(true)
		defer s.restarting.Store(false)
		s.temporal.stop()
		sleep(ctx, e.lasts)
		if err := s.temporal.start(ctx); err != nil {
			rec.Error = err.Error()
			break
		}
		answered := time.Now()
		for !temporalServes(ctx, s.temporal.addr()) && sleep(ctx, 50*time.Millisecond) {
		}
		back := time.Now()
		rec.EngineMs = float64(back.Sub(answered).Milliseconds())
		s.logf("the Temporal server answers again, and serves workflows %v later", back.Sub(answered).Round(time.Millisecond))
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); rec.ReadyMs = s.readyRecovery(ctx, back) }()
		go func() {
			defer wg.Done()
			rec.RecoveryMs, rec.AnsweredMs, rec.LastErrors = s.pollRecovery(ctx, engineTemporal, back)
		}()
		wg.Wait()
	default:
		p := s.proxies[e.engine]
		switch e.kind {
		case faultReset:
			for end := time.Now().Add(e.lasts); time.Now().Before(end); sleep(ctx, resetEvery) {
				rec.Connections += p.Reset()
			}
		case faultStall:
			rec.Connections = p.Stall()
		default:
			p.Set(networkFaults[e.kind].faults)
			sleep(ctx, e.lasts)
			p.Set(faults.Faults{})
		}
		rec.RecoveryMs, rec.AnsweredMs, rec.LastErrors = s.pollRecovery(ctx, e.engine, time.Now())
		if e.kind == faultStall {
			sleep(ctx, time.Until(from.Add(e.lasts)))
		}
	}
	if len(rec.RecoveryMs) > 0 || len(rec.ReadyMs) > 0 {
		s.logf("%s over: recovery %v ms (polls; answered at %v ms), %v ms (/readyz)", e.kind, rec.RecoveryMs, rec.AnsweredMs, rec.ReadyMs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.windows = append(s.windows, window{from, time.Now().Add(settle)})
	s.faultLog = append(s.faultLog, rec)
}

// pollRecovery is, per replica, when after since the first poll of the engine's sentinel that
// it answered was sent, and when that answer arrived (polls one after the other, each given 5 s,
// as the machine may be loaded; -1 when none within 2 minutes). The errors are the last each
// replica answered before.
func (s *soak) pollRecovery(ctx context.Context, engine string, since time.Time) (sent, answered []float64, errs []string) {
	return s.perReplica(ctx, since, func(ctx context.Context, r *replica) error {
		probe := newSession(dialectExtension, mcpclient.HTTP{URL: r.url("/mcp")}, 5*time.Second)
		_, err := probe.poll(ctx, s.sentinels[engine])
		return err
	})
}

// killedRecovery is, by engine, how long the replica r, just started, took to answer a poll of the
// engine's sentinel: its first read of it, amid the polls of every client it serves.
func (s *soak) killedRecovery(ctx context.Context, r *replica) map[string]float64 {
	out := map[string]float64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	since := time.Now()
	for engine, id := range s.sentinels {
		wg.Go(func() {
			probe := newSession(dialectExtension, mcpclient.HTTP{URL: r.url("/mcp")}, 5*time.Second)
			ms := -1.0
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
				if _, err := probe.poll(ctx, id); err == nil {
					ms = float64(time.Since(since).Milliseconds())
					break
				}
				if !sleep(ctx, 50*time.Millisecond) {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			out[engine] = ms
		})
	}
	wg.Wait()
	return out
}

// readyRecovery is, per replica, when after since /readyz was asked the first time it said ready.
func (s *soak) readyRecovery(ctx context.Context, since time.Time) []float64 {
	sent, _, _ := s.perReplica(ctx, since, func(ctx context.Context, r *replica) error {
		return get(ctx, r.url("/readyz"))
	})
	return sent
}

// perReplica tries each replica every 50 ms until try succeeds: when, after since, the try that
// succeeded began and ended, and the error of the last one that failed.
func (s *soak) perReplica(ctx context.Context, since time.Time, try func(context.Context, *replica) error) (sent, answered []float64, errs []string) {
	n := len(s.replicas)
	sent, answered, errs = make([]float64, n), make([]float64, n), make([]string, n)
	ms := func(t time.Time) float64 { return float64(t.Sub(since).Milliseconds()) }
	var wg sync.WaitGroup
	for i, r := range s.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent[i], answered[i] = -1, -1
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
				begin := time.Now()
				err := try(ctx, r)
				if err == nil {
					sent[i], answered[i] = ms(begin), ms(time.Now())
					return
				}
				errs[i] = fmt.Sprintf("%.0f ms: %v", ms(time.Now()), err)
				if !sleep(ctx, 50*time.Millisecond) {
					return
				}
			}
		}()
	}
	wg.Wait()
	return sent, answered, errs
}

// replicaUsage is one replica's usage at the moments the summary reports: idle before the
// clients start, after the warm-up and at the end under load, idle after the drain.
type replicaUsage struct {
	IdleAtStart, WarmUp, End, Idle usage
}

// watch samples the replicas: at the end of the warm-up and before the clients stop (steady,
// under the same load), and every minute for the series. The returned func waits for the first
// two.
func (s *soak) watch(ctx context.Context, warm time.Duration) func() []replicaUsage {
	u := make([]replicaUsage, len(s.replicas))
	var wg sync.WaitGroup
	sampled := func(at time.Time, set func(*replicaUsage, usage)) {
		defer wg.Done()
		if !sleep(ctx, time.Until(at)) {
			return
		}
		for i, r := range s.replicas {
			set(&u[i], s.steady(ctx, r))
		}
	}
	wg.Add(2)
	go sampled(s.begin.Add(warm), func(ru *replicaUsage, v usage) { ru.WarmUp = v })
	go sampled(s.stopAt.Add(-10*time.Second), func(ru *replicaUsage, v usage) { ru.End = v })
	go func() {
		for at := s.begin.Add(time.Minute); at.Before(s.stopAt) && sleep(ctx, time.Until(at)); at = at.Add(time.Minute) {
			s.sample(ctx, at)
		}
	}()
	return func() []replicaUsage {
		wg.Wait()
		return u
	}
}

// steady is a replica's usage over ten seconds under load: the median of five samples' resident
// memory, and the fewest goroutines any had (the requests in flight at a moment add theirs).
func (s *soak) steady(ctx context.Context, r *replica) usage {
	var rss []int64
	var gs []int
	for i := range 5 {
		if i > 0 && !sleep(ctx, 2*time.Second) {
			break
		}
		if u, err := r.usage(ctx); err == nil {
			rss, gs = append(rss, u.RSSBytes), append(gs, u.Goroutines)
		}
	}
	if len(rss) == 0 {
		return usage{}
	}
	slices.Sort(rss)
	return usage{RSSBytes: rss[len(rss)/2], Goroutines: slices.Min(gs)}
}

func (s *soak) sample(ctx context.Context, at time.Time) {
	p := seriesPoint{AtSeconds: at.Sub(s.begin).Seconds(), LoadAverage: loadAverage()}
	for _, r := range s.replicas {
		u, _ := r.usage(ctx)
		p.Replicas = append(p.Replicas, u)
	}
	s.mu.Lock()
	s.series = append(s.series, p)
	s.mu.Unlock()
}

// stopStarting reports whether the clients should start no new call.
func (s *soak) stopStarting() bool { return time.Now().After(s.stopAt) }

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
