package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// child is one taskgate process of the bench (see child.go).
type child struct {
	label string
	cmd   *exec.Cmd
	// base is the debug listener, http://127.0.0.1:PORT; over HTTP, MCP is at base + "/mcp".
	base  string
	stdin io.WriteCloser
	// stdio is the MCP connection of a stdio child.
	stdio  *mcpclient.Stdio
	stderr *tail
	exited chan struct{}
	// cpuFile is the CPU profile being written, if any.
	cpuFile string
}

// startChild starts a taskgate process and waits until it serves. Its CPU profile starts at once
// when the bench was asked for one.
func (b *bench) startChild(ctx context.Context, label string, cfg childConfig) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cfg.Keys = b.keys
	if b.opts.memProfile != "" && cfg.MemProfileRate == 0 {
		cfg.MemProfileRate = 64 << 10 // one sample per 64 KiB allocated, instead of 512 KiB
	}
	spec, _ := json.Marshal(cfg)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	for k, v := range cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &child{label: label, cmd: cmd, stderr: &tail{}, exited: make(chan struct{})}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	var out io.Reader
	if cfg.Stdio {
		if c.stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
		if out, err = cmd.StdoutPipe(); err != nil {
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if base, ok := strings.CutPrefix(line, readyLine); ok {
				ready <- base
				continue
			}
			c.stderr.add(line)
		}
	}()
	go func() { cmd.Wait(); close(c.exited) }()
	select {
	case c.base = <-ready:
	case <-c.exited:
		return nil, fmt.Errorf("taskgate process %s exited before serving:\n%s", label, c.stderr)
	case <-time.After(2 * time.Minute):
		c.kill()
		return nil, fmt.Errorf("taskgate process %s did not serve within 2 minutes:\n%s", label, c.stderr)
	case <-ctx.Done():
		c.kill()
		return nil, ctx.Err()
	}
	if cfg.Stdio {
		c.stdio = &mcpclient.Stdio{In: c.stdin, Out: bufio.NewReaderSize(out, 64<<10)}
	}
	b.children = append(b.children, c)
	b.logf("  started taskgate process %s (pid %d, %s)", label, c.pid(), map[bool]string{true: "stdio", false: c.base + "/mcp"}[cfg.Stdio])
	if b.opts.cpuProfile != "" {
		c.cpuFile = b.profilePath(b.opts.cpuProfile, label)
		if err := c.get("/debug/bench/cpu?start="+url.QueryEscape(c.cpuFile), nil); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// endpoint is the MCP endpoint of an HTTP child.
func (c *child) endpoint() string { return c.base + "/mcp" }

// get asks the child's debug listener and decodes the JSON answer into v (if not nil).
func (c *child) get(path string, v any) error {
	resp, err := debugClient.Get(c.base + path)
	if err != nil {
		return fmt.Errorf("taskgate process %s: %w", c.label, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("taskgate process %s: GET %s: %s: %s", c.label, path, resp.Status, body)
	}
	if v != nil {
		return json.Unmarshal(body, v)
	}
	return nil
}

// debugClient asks the children's debug listeners, on connections of its own.
var debugClient = &http.Client{Timeout: time.Minute}

// counts reads the child's engine call counts.
func (c *child) counts(query string) (childCounts, error) {
	var cc childCounts
	err := c.get("/debug/bench"+query, &cc)
	return cc, err
}

// stop ends the child, writing its profiles first when asked.
func (b *bench) stopChild(c *child) {
	select {
	case <-c.exited:
		return
	default:
	}
	if c.cpuFile != "" {
		if err := c.get("/debug/bench/cpu?stop=1", nil); err != nil {
			b.logf("  CPU profile of %s: %v", c.label, err)
		} else {
			b.profiles["cpu"] = append(b.profiles["cpu"], c.cpuFile)
		}
	}
	if b.opts.memProfile != "" {
		path := b.profilePath(b.opts.memProfile, c.label)
		if err := c.get("/debug/bench/heap?file="+url.QueryEscape(path), nil); err != nil {
			b.logf("  heap profile of %s: %v", c.label, err)
		} else {
			b.profiles["mem"] = append(b.profiles["mem"], path)
		}
	}
	if c.stdin != nil {
		c.stdin.Close()
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.kill()
	}
}

func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.exited
}

// profilePath is where a child's profile goes: FILE with the child's label before the extension
// (cpu.out -> cpu.poll-http.out). When a run profiles a single child, the file is renamed to FILE
// at the end.
func (b *bench) profilePath(file, label string) string {
	abs, err := filepath.Abs(file)
	if err == nil {
		file = abs
	}
	ext := filepath.Ext(file)
	return strings.TrimSuffix(file, ext) + "." + label + ext
}

// tail keeps the last lines a child wrote on stderr, for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 40 {
		t.lines = t.lines[len(t.lines)-40:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
