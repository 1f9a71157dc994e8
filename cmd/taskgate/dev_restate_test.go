package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestDevRestateOnAServer: with RESTATE_ADMIN_URL naming a server that has the examples (the
// test's, where scripts/with-engines registered them), dev --restate serves them from it.
func TestDevRestateOnAServer(t *testing.T) {
	testenv.RestateAdmin(t)
	p := startHTTP(t, t.TempDir(), "--restate")
	c := rpctest.Modern(rpctest.HTTP{URL: p.endpoint}, ext)
	id := c.Decode(t, "tools/call", map[string]any{"name": "restate_wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "from dev"}})["taskId"].(string)
	done := poll(t, c, id, "completed")
	if got := fmt.Sprint(done["result"].(map[string]any)["structuredContent"]); got != "map[text:from dev]" {
		t.Fatalf("result = %v", done)
	}
}

// TestDevRestateStartsAServer: without RESTATE_ADMIN_URL, dev --restate runs a Restate server of
// its own (from the tool cache, where scripts/with-engines installed it) with the example
// deployment, serves the examples, and stops the server when it stops.
func TestDevRestateStartsAServer(t *testing.T) {
	testenv.RestateAdmin(t) // the tool cache has the server
	port := freePorts(t, 3)
	home := t.TempDir()
	env := slices.DeleteFunc(devEnv(t, home), func(kv string) bool { return strings.HasPrefix(kv, "RESTATE_") })
	p := startServing(t, env, "dev", "--http", "127.0.0.1:0", "--restate", "--restate-port", fmt.Sprint(port))
	c := rpctest.Modern(rpctest.HTTP{URL: p.endpoint}, ext)
	id := c.Decode(t, "tools/call", map[string]any{"name": "restate_build_release", "arguments": map[string]any{"version": "0.1.0", "stepSeconds": 0}})["taskId"].(string)
	poll(t, c, id, "completed")
	if _, err := os.Stat(filepath.Join(home, "cache", "taskgate", "dev", "restate")); err != nil {
		t.Errorf("the Restate server's data is not in the dev folder: %v", err)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("dev after SIGTERM: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("the Restate server dev started still answers after dev stopped")
		}
	}
}

// freePorts finds n consecutive free loopback ports and returns the first.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		first := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		free := true
		for i := 1; i < n && free; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", first+i))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return first
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
