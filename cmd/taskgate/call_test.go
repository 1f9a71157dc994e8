package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mcpserver/token"
)

const exampleMapping = "../../examples/temporal/tools.yaml"

func TestCallUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no tool", []string{"--url", "http://127.0.0.1:1/mcp"}, 2, "want one TOOL name"},
		{"two tools", []string{"a", "b", "--url", "http://127.0.0.1:1/mcp"}, 2, "want one TOOL name"},
		{"neither url nor config", []string{"wait_and_echo"}, 2, "exactly one of --url"},
		{"both url and config", []string{"wait_and_echo", "--url", "http://127.0.0.1:1/mcp", "--config", exampleMapping}, 2, "exactly one of --url"},
		{"args not JSON", []string{"wait_and_echo", "--args", `{"seconds": 1,}`, "--url", "http://127.0.0.1:1/mcp"}, 2, "not valid JSON: invalid character '}' looking for beginning of object key string at byte 15"},
		{"args not an object", []string{"wait_and_echo", "--args", `[1]`, "--url", "http://127.0.0.1:1/mcp"}, 2, "must be a JSON object"},
		{"unknown flag", []string{"wait_and_echo", "--nope"}, 2, "flag provided but not defined: -nope"},
		{"help", []string{"-h"}, 0, "usage: taskgate call TOOL"},
		{"no server", []string{"--url", "http://127.0.0.1:1/mcp", "wait_and_echo"}, 1, "is the MCP server running there?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runCall(t.Context(), tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tc.code, &stderr)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, &stderr)
			}
		})
	}
}

// startWorker serves the example workflows from the test process, for the mappings that runCall
// and the binary serve with --config, and points those mappings at the test's Temporal server.
func startWorker(t *testing.T) *temporal.Engine {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	t.Setenv("TEMPORAL_ADDRESS", addr)
	e, err := temporal.New(t.Context(), temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	w := worker.New(e.Client(), temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return e
}

func TestCallConfig(t *testing.T) {
	startWorker(t)
	for _, tc := range []struct {
		name, tool, args string
		code             int
		stdout, stderr   []string
	}{
		{"task completes", "wait_and_echo", `{"seconds": 1, "text": "echoed by call"}`, 0,
			[]string{"{\n  \"text\": \"echoed by call\"\n}\n"}, []string{"working: Running (", "completed: Completed (COMPLETED)."}},
		{"task ends with an error", "wait_and_fail", `{"seconds": 0, "reason": "the disk is full"}`, 1,
			nil, []string{"completed: Ended with an error (FAILED).", "Example.Failure: the disk is full"}},
		{"sync tool", "quick_echo", `{"text": "at once"}`, 0, []string{`"text": "at once"`}, nil},
		{"invalid arguments", "wait_and_echo", `{"seconds": 1}`, 1, nil, []string{`argument "text" is required`}},
		{"unknown tool", "no_such_tool", `{}`, 1, nil, []string{`error -32602: unknown tool "no_such_tool"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCall(t.Context(), []string{tc.tool, "--args", tc.args, "--config", exampleMapping}, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			if tc.stdout == nil && stdout.Len() > 0 {
				t.Errorf("stdout is not empty: %q", &stdout)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout does not have %q: %q", want, &stdout)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not have %q: %q", want, &stderr)
				}
			}
		})
	}
}

func TestCallURL(t *testing.T) {
	p := startHTTP(t, t.TempDir())
	var stdout, stderr bytes.Buffer
	code := runCall(t.Context(), []string{"wait_and_echo", "--url", p.endpoint, "--args", `{"seconds": 1, "text": "over --url"}`}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), `"text": "over --url"`) {
		t.Fatalf("exit status %d, stdout %q, stderr:\n%s", code, &stdout, &stderr)
	}
}

// screen is what a program wrote to its terminal so far.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// closed is closed once everything the program wrote has been read.
	closed chan struct{}
}

func watch(r io.Reader) *screen {
	s := &screen{closed: make(chan struct{})}
	go func() {
		defer close(s.closed)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil { // EIO once the program has exited
				return
			}
		}
	}()
	return s
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *screen) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := re.FindStringSubmatch(s.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %s:\n%q", re, s.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// onTerminal runs the binary with a pseudo-terminal as its standard input, output and error.
func onTerminal(t *testing.T, env []string, args ...string) (*exec.Cmd, *os.File, *screen) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	return cmd, tty, watch(tty)
}

// exitStatus waits for the program to exit and for the terminal to hand over its last output.
func exitStatus(t *testing.T, cmd *exec.Cmd, s *screen) int {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(60 * time.Second):
		t.Fatalf("taskgate call did not exit within 60s:\n%q", s.String())
	}
	cmd.Wait()
	return cmd.ProcessState.ExitCode()
}

var redrawn = regexp.MustCompile(`^([-\\|/]) wait_and_echo (\d+\.\d)s working: `)

func TestCallOnTerminal(t *testing.T) {
	startWorker(t)
	cmd, _, s := onTerminal(t, nil, "call", "wait_and_echo", "--args", `{"seconds": 3, "text": "hi"}`, "--config", exampleMapping)
	if code := exitStatus(t, cmd, s); code != 0 {
		t.Fatalf("exit status %d:\n%q", code, s.String())
	}
	out := s.String()
	frames, times := map[string]bool{}, []float64{}
	for _, redraw := range strings.Split(out, "\r") {
		if m := redrawn.FindStringSubmatch(redraw); m != nil {
			if !strings.HasSuffix(redraw, "\x1b[K") {
				t.Fatalf("a redraw does not clear the rest of the line: %q", redraw)
			}
			frames[m[1]] = true
			f, _ := strconv.ParseFloat(m[2], 64)
			times = append(times, f)
		}
	}
	if len(frames) < 2 {
		t.Errorf("the spinner did not turn: frames %v in\n%q", frames, out)
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			t.Fatalf("the elapsed time went back from %.1fs to %.1fs", times[i-1], times[i])
		}
	}
	if len(times) == 0 || times[len(times)-1]-times[0] < 2 {
		t.Errorf("the elapsed time did not grow over the 3s task: %v", times)
	}
	if !regexp.MustCompile(`\rwait_and_echo \d+\.\ds completed: Completed \(COMPLETED\)\.\x1b\[K\r\n`).MatchString(out) {
		t.Errorf("no final status line:\n%q", out)
	}
	if !strings.Contains(out, "{\r\n  \"text\": \"hi\"\r\n}\r\n") {
		t.Errorf("no result:\n%q", out)
	}
}

// TestCallInterrupted: Ctrl-C on the terminal cancels the workflow behind the task. The task id
// printed is sealed with a key the test knows, so the test can open it to find the workflow.
func TestCallInterrupted(t *testing.T) {
	engine := startWorker(t)
	key := token.NewKey("test")
	keys, err := token.ParseKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := token.NewSealed(keys)
	if err != nil {
		t.Fatal(err)
	}
	cmd, tty, s := onTerminal(t, []string{"TASKGATE_TOKEN_KEYS=" + key},
		"call", "wait_and_echo", "--args", `{"seconds": 600, "text": "never"}`, "--config", exampleMapping)
	s.waitFor(t, regexp.MustCompile(`wait_and_echo \d+\.\ds working: Running \(RUNNING\)`))
	if _, err := tty.Write([]byte{3}); err != nil { // Ctrl-C: the line discipline sends SIGINT
		t.Fatal(err)
	}
	if code := exitStatus(t, cmd, s); code != exitInterrupted {
		t.Fatalf("exit status %d, want %d:\n%q", code, exitInterrupted, s.String())
	}
	id := s.waitFor(t, regexp.MustCompile(`\ncancelled (\S+)\r\n`))[1]
	claims, err := tokens.Open(id, time.Now())
	if err != nil {
		t.Fatalf("the printed task id %q does not open: %v", id, err)
	}
	c := engine.Client()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		d, err := c.DescribeWorkflow(ctx, claims.Ref.ID, claims.Ref.Run)
		cancel()
		if err != nil {
			t.Fatalf("describing workflow %s: %v", claims.Ref, err)
		}
		info := d.RawResponse.GetWorkflowExecutionInfo()
		if info.GetType().GetName() != temporalexamples.WaitAndEchoName {
			t.Fatalf("workflow %s is a %s", claims.Ref, info.GetType().GetName())
		}
		if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s is %s 30s after Ctrl-C, want CANCELED", claims.Ref, info.GetStatus())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
