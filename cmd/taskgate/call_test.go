package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestCallUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no tool", []string{"--url", "http://127.0.0.1:1/mcp"}, 2, "taskgate: call wants one TOOL name, got 0 arguments []"},
		{"two tools", []string{"a", "b", "--url", "http://127.0.0.1:1/mcp"}, 2, `taskgate: call wants one TOOL name, got 2 arguments ["a" "b"]`},
		{"neither url nor config", []string{"echo"}, 2, "taskgate: call needs exactly one of --url URL (an MCP endpoint) or --config PATH (a mapping to serve in this process)"},
		{"both url and config", []string{"echo", "--url", "http://127.0.0.1:1/mcp", "--config", memoryMapping}, 2, "exactly one of --url"},
		{"args not JSON", []string{"echo", "--args", `{"seconds": 1,}`, "--url", "http://127.0.0.1:1/mcp"}, 2, "taskgate: --args {\"seconds\": 1,} is not valid JSON: invalid character '}' looking for beginning of object key string at byte 15"},
		{"args not an object", []string{"echo", "--args", `[1]`, "--url", "http://127.0.0.1:1/mcp"}, 2, "must be a JSON object"},
		{"unknown flag", []string{"echo", "--nope"}, 2, "taskgate: unknown flag: --nope"},
		{"no server", []string{"--url", "http://127.0.0.1:1/mcp", "echo"}, 1, "is the MCP server running there?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(t.Context(), append([]string{"call"}, tc.args...), nil, &stdout, &stderr); code != tc.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tc.code, &stderr)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, &stderr)
			}
		})
	}
}

// memoryMapping serves the in-memory engine's programs as tools.
const memoryMapping = "testdata/memory.yaml"

func TestCallConfig(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args string
		code             int
		stdout, stderr   []string
	}{
		{"task completes", "echo", `{"seconds": 1, "text": "echoed by call"}`, 0,
			[]string{"{\n  \"text\": \"echoed by call\"\n}\n"}, []string{"working: Running (RUNNING).", "completed: Completed (SUCCEEDED)."}},
		{"task ends with an error", "fail", `{"seconds": 0, "reason": "the disk is full"}`, 1,
			nil, []string{"completed: Ended with an error (FAILED).", "Example.Failure: the disk is full"}},
		{"sync tool", "quick_echo", `{"text": "at once"}`, 0, []string{`"text": "at once"`}, nil},
		{"invalid arguments", "echo", `{"seconds": 1}`, 1, nil, []string{`argument "text" is required`}},
		{"unknown tool", "no_such_tool", `{}`, 1, nil, []string{`error -32602: unknown tool "no_such_tool"`}},
		{"engine down", "echo", `{"seconds": 0, "text": "x"}`, 1, nil, []string{`engine unavailable`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			config := memoryMapping
			if tc.name == "engine down" {
				config = "testdata/memory-down.yaml"
			}
			code := run(t.Context(), []string{"call", tc.tool, "--args", tc.args, "--config", config}, nil, &stdout, &stderr)
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
	code := run(t.Context(), []string{"call", "wait_and_echo", "--url", p.endpoint, "--args", `{"seconds": 1, "text": "over --url"}`}, nil, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), `"text": "over --url"`) {
		t.Fatalf("exit status %d, stdout %q, stderr:\n%s", code, &stdout, &stderr)
	}
}

// TestCallWithCredentials: taskgate call reaches a server whose mapping has auth: with the API
// key in --header or in $TASKGATE_HEADERS, and without one says how to pass it.
func TestCallWithCredentials(t *testing.T) {
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth.yaml")
	if err := os.WriteFile(authFile, []byte("auth:\n  apiKeys:\n    - {principal: ci-bot, keyEnv: TASKGATE_TEST_KEY}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServing(t, append(devEnv(t, dir), "TASKGATE_TEST_KEY="+ciKey),
		"dev", "--http", "127.0.0.1:0", "--config", exampleMapping, "--config", authFile)
	call := func(flags ...string) (code int, stdout, stderr string) {
		var out, errs bytes.Buffer
		args := append([]string{"call", "wait_and_echo", "--url", p.endpoint, "--args", `{"seconds": 0, "text": "authenticated"}`}, flags...)
		code = run(t.Context(), args, nil, &out, &errs)
		return code, out.String(), errs.String()
	}
	if code, stdout, stderr := call("--header", "Authorization: Bearer "+ciKey); code != 0 || !strings.Contains(stdout, `"text": "authenticated"`) {
		t.Errorf("--header: exit status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	t.Setenv("TASKGATE_HEADERS", "Authorization: Bearer "+ciKey)
	if code, stdout, stderr := call(); code != 0 || !strings.Contains(stdout, `"text": "authenticated"`) {
		t.Errorf("$TASKGATE_HEADERS: exit status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	t.Setenv("TASKGATE_HEADERS", "")
	want := fmt.Sprintf("taskgate call: calling wait_and_echo: tools/call: HTTP 401 Unauthorized from %s: %q (the server wants a credential in an Authorization header); "+
		"pass it with --header 'Authorization: Bearer KEY', or for scripts in $TASKGATE_HEADERS\n", p.endpoint, "no bearer token\n")
	if code, stdout, stderr := call(); code != 1 || stdout != "" || stderr != want {
		t.Errorf("no credential: exit status %d, stdout %q\nstderr %q\nwant   %q", code, stdout, stderr, want)
	}
	if code, _, stderr := call("--header", "Authorization: Bearer not-the-key-0123456789"); code != 1 || !strings.Contains(stderr, "HTTP 401 Unauthorized") || strings.Contains(stderr, "not-the-key") {
		t.Errorf("a wrong key: exit status %d, stderr %q", code, stderr)
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"call", "echo", "--config", memoryMapping, "--header", "Authorization: Bearer x"}, nil, &stdout, &stderr); code != 2 ||
		stderr.String() != "taskgate: --header goes with --url: the mapping --config serves in this process asks for no credentials\n" {
		t.Errorf("--header with --config: exit status %d, stderr %q", code, &stderr)
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
