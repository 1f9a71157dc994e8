package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/api/serviceerror"
	temporalclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// temporalServer is a Temporal dev server whose history lives in a database file, so that it can
// be stopped and started again with every workflow where it was.
type temporalServer struct {
	cli, db, logPath string
	port             int
	p                *proc
}

func (t *temporalServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", t.port) }

// start starts the server and waits until it answers (at most a minute).
func (t *temporalServer) start(ctx context.Context) error {
	p, err := startProc("temporal", t.logPath, nil, t.cli, "server", "start-dev", "--headless",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(t.port), "--db-filename", t.db, "--log-level", "error")
	if err != nil {
		return err
	}
	t.p = p
	deadline := time.Now().Add(time.Minute)
	for {
		if temporalAnswers(ctx, t.addr()) {
			return nil
		}
		if !p.alive() || time.Now().After(deadline) {
			p.stop()
			return fmt.Errorf("the Temporal dev server on %s did not answer within a minute; its log is %s", t.addr(), t.logPath)
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
}

func (t *temporalServer) stop() {
	if t.p != nil {
		t.p.stop()
	}
}

// temporalAnswers dials the frontend afresh (no reconnect backoff of an older client in the way)
// and reports whether it answers.
func temporalAnswers(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := temporalclient.DialContext(ctx, temporalclient.Options{HostPort: addr, Logger: quietLogger()})
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// temporalServes reports whether the frontend at addr answers a DescribeWorkflowExecution (of a
// workflow it does not have), which a restarted server does some time after it first answers: the
// history service loads its shards and fires the timers that fell due while it was down.
func temporalServes(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := temporalclient.DialContext(ctx, temporalclient.Options{HostPort: addr, Logger: quietLogger()})
	if err != nil {
		return false
	}
	defer c.Close()
	_, err = c.DescribeWorkflowExecution(ctx, "taskgate-soak-no-such-workflow", "")
	var missing *serviceerror.NotFound
	return errors.As(err, &missing)
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// replica is one `taskgate serve` process, on the same port across restarts.
type replica struct {
	index int
	addr  string // 127.0.0.1:PORT
	bin   string
	args  []string
	env   []string
	log   string

	mu    sync.Mutex
	p     *proc
	kills int
	// startFailures counts processes that ended before they served (an engine unreachable at start).
	startFailures int
}

func (r *replica) name() string { return fmt.Sprintf("replica-%d", r.index) }

func (r *replica) url(path string) string { return "http://" + r.addr + path }

// start starts the process and waits until it serves. taskgate serve refuses to start while an
// engine does not answer, so a replica restarted during an outage is started again every two
// seconds, as an orchestrator would, until it serves (at most five minutes).
func (r *replica) start(ctx context.Context) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		p, err := startProc(r.name(), r.log, r.env, r.bin, r.args...)
		if err != nil {
			return err
		}
		if r.awaitServing(ctx, p) {
			r.mu.Lock()
			r.p = p
			r.mu.Unlock()
			return nil
		}
		p.kill()
		r.mu.Lock()
		r.startFailures++
		r.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not serve within five minutes; its log is %s", r.name(), r.log)
		}
		sleep(ctx, 2*time.Second)
	}
}

// awaitServing waits until the process answers /healthz (false when it exits first, or takes more
// than a minute).
func (r *replica) awaitServing(ctx context.Context, p *proc) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && p.alive() {
		if get(ctx, r.url("/healthz")) == nil {
			return true
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return false
		}
	}
	return false
}

// kill ends the process with SIGKILL.
func (r *replica) kill() {
	r.mu.Lock()
	p := r.p
	r.kills++
	r.mu.Unlock()
	p.kill()
}

func (r *replica) stop() {
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// usage is what a replica uses at one moment, from its own /metrics.
type usage struct {
	RSSBytes   int64 `json:"rssBytes"`
	Goroutines int   `json:"goroutines"`
}

// usage reads the replica's resident memory and goroutines.
func (r *replica) usage(ctx context.Context) (usage, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url("/metrics"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return usage{}, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return usage{}, fmt.Errorf("%s /metrics: %w", r.name(), err)
	}
	gauge := func(name string) (float64, error) {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) == 0 {
			return 0, fmt.Errorf("%s /metrics has no %s", r.name(), name)
		}
		return f.GetMetric()[0].GetGauge().GetValue(), nil
	}
	mem, err := gauge("process_resident_memory_bytes")
	if err != nil {
		return usage{}, err
	}
	g, err := gauge("go_goroutines")
	if err != nil {
		return usage{}, err
	}
	return usage{RSSBytes: int64(mem), Goroutines: int(g)}, nil
}

// saveMetrics writes the replica's /metrics as they are now to path.
func (r *replica) saveMetrics(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url("/metrics"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s /metrics: %w", r.name(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s /metrics: %w", r.name(), err)
	}
	return os.WriteFile(path, b, 0o644)
}

// get asks url and reports an error unless it answers 200.
func get(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// workFile is a path in the work folder.
func workFile(work, name string) string { return filepath.Join(work, name) }

// writeFile writes a file of the work folder.
func writeFile(work, name string, data []byte) (string, error) {
	path := workFile(work, name)
	return path, os.WriteFile(path, data, 0o644)
}
