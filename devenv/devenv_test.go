package devenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/builtin" // the engine kinds the examples' mappings name
	"github.com/taskgate/taskgate/devenv"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// start is devenv.Start with a cache folder of the test's own, closed when the test ends.
func start(t *testing.T, o devenv.Options) *devenv.Env {
	t.Helper()
	o.Cache = t.TempDir()
	var log strings.Builder
	o.Log = &log
	dev, err := devenv.Start(t.Context(), o)
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, log.String())
	}
	t.Cleanup(dev.Close)
	return dev
}

// run serves dev's mappings as `taskgate dev` does, with no MCP in sight: it loads them in dev's
// environment, opens their engines, and runs the tool to its end; it returns the structured result.
func run(t *testing.T, dev *devenv.Env, tool, args string) string {
	t.Helper()
	set, err := mapping.Loader{Env: dev.Env}.Load(dev.Mappings...)
	if err == nil {
		err = set.CheckNeeds(dev.Env)
	}
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]adapters.Conn{}
	for name, block := range set.Engines {
		e, err := block.Config.Open(t.Context(), adapters.OpenOptions{Env: dev.Env})
		if err != nil {
			t.Fatalf("engine %q: %v", name, err)
		}
		t.Cleanup(func() { e.Close() })
		engines[name] = e
	}
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	sealed, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: sealed})
	if err != nil {
		t.Fatal(err)
	}
	mapped, ok := set.Tool(tool)
	if !ok {
		t.Fatalf("the mappings %v serve no tool %q", dev.Mappings, tool)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	task, err := svc.Run(ctx, tasks.StartRequest{Tool: mapped, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if task.Failed() || task.Result == nil {
		t.Fatalf("%s ended as %+v", tool, task)
	}
	return string(task.Result.Structured)
}

// TestStartOnATemporalServer: with TEMPORAL_ADDRESS naming a server, Start runs the example worker
// against it and hands over the examples' mapping, which serves them.
func TestStartOnATemporalServer(t *testing.T) {
	address := testenv.TemporalAddress(t)
	dev := start(t, devenv.Options{})
	if dev.Temporal != address || dev.TemporalUI != "" {
		t.Errorf("Temporal %q, UI %q: want %q and no UI", dev.Temporal, dev.TemporalUI, address)
	}
	if want := []string{filepath.Join(dev.Dir, "temporal-tools.yaml")}; !slices.Equal(dev.Mappings, want) {
		t.Errorf("Mappings = %v, want %v", dev.Mappings, want)
	}
	if got := run(t, dev, "wait_and_echo", `{"seconds": 0, "text": "from devenv"}`); got != `{"text":"from devenv"}` {
		t.Fatalf("wait_and_echo = %s", got)
	}
}

// TestStartStartsItsOwnTemporal: with no TEMPORAL_ADDRESS, Start runs a Temporal dev server whose
// history lives in the dev folder, with its UI on port+1000.
func TestStartStartsItsOwnTemporal(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("PATH", filepath.Dir(cli)+string(os.PathListSeparator)+os.Getenv("PATH"))
	port := freePorts(t, 0, 1000)
	dev := start(t, devenv.Options{TemporalPort: port})
	if want := fmt.Sprintf("http://127.0.0.1:%d", port+1000); dev.Temporal != fmt.Sprintf("127.0.0.1:%d", port) || dev.TemporalUI != want {
		t.Errorf("Temporal %q, UI %q: want 127.0.0.1:%d and %s", dev.Temporal, dev.TemporalUI, port, want)
	}
	if _, err := os.Stat(filepath.Join(dev.Dir, "temporal.db")); err != nil {
		t.Errorf("the Temporal dev server's history is not in the dev folder: %v", err)
	}
	if got := run(t, dev, "wait_and_echo", `{"seconds": 0, "text": "own server"}`); got != `{"text":"own server"}` {
		t.Fatalf("wait_and_echo = %s", got)
	}
}

// TestStartCreatesTheStepFunctionsExamples: with an endpoint, Start creates the example state
// machines in it and adds their mapping, which serves them beside the Temporal examples.
func TestStartCreatesTheStepFunctionsExamples(t *testing.T) {
	testenv.TemporalAddress(t)
	dev := start(t, devenv.Options{SFNEndpoint: testenv.SFNEndpoint(t), SFNRole: "arn:aws:iam::123456789012:role/taskgate-examples"})
	if got := run(t, dev, "sfn_wait_and_echo", `{"seconds": 0, "text": "from a state machine"}`); got != `{"text":"from a state machine"}` {
		t.Fatalf("sfn_wait_and_echo = %s", got)
	}
	if got := run(t, dev, "wait_and_echo", `{"seconds": 0, "text": "beside"}`); got != `{"text":"beside"}` {
		t.Fatalf("wait_and_echo = %s", got)
	}
}

// TestStartRestateOnAServer: with RESTATE_ADMIN_URL naming a server that has the examples (the
// test's, where scripts/with-engines registered them), Start serves them from it.
func TestStartRestateOnAServer(t *testing.T) {
	testenv.TemporalAddress(t)
	admin := testenv.RestateAdmin(t)
	dev := start(t, devenv.Options{Restate: true})
	if dev.RestateAdmin != admin {
		t.Errorf("RestateAdmin = %q, want %q", dev.RestateAdmin, admin)
	}
	if got := run(t, dev, "restate_wait_and_echo", `{"seconds": 0, "text": "from devenv"}`); got != `{"text":"from devenv"}` {
		t.Fatalf("restate_wait_and_echo = %s", got)
	}
}

// TestStartRestateStartsAServer: without RESTATE_ADMIN_URL, Start runs a Restate server of its
// own (from the tool cache, where scripts/with-engines installed it) with the example deployment,
// keeps its data in the dev folder, and Close stops it.
func TestStartRestateStartsAServer(t *testing.T) {
	testenv.TemporalAddress(t)
	testenv.RestateAdmin(t) // the tool cache has the server
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "RESTATE_") {
			t.Setenv(k, "")
		}
	}
	port := freePorts(t, 0, 1, 2)
	dev := start(t, devenv.Options{Restate: true, RestatePort: port})
	if got := run(t, dev, "restate_build_release", `{"version": "0.1.0", "stepSeconds": 0}`); !strings.Contains(got, `"version":"0.1.0"`) {
		t.Fatalf("restate_build_release = %s", got)
	}
	if _, err := os.Stat(filepath.Join(dev.Dir, "restate")); err != nil {
		t.Errorf("the Restate server's data is not in the dev folder: %v", err)
	}

	dev.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("the Restate server Start started still answers after Close")
		}
	}
}

// freePorts finds a free loopback port p such that p+offset is free too for each offset, and
// returns p.
func freePorts(t *testing.T, offsets ...int) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		free := true
		for _, off := range offsets {
			if p+off > 65535 {
				free = false
				break
			}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+off))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return p
		}
	}
	t.Fatalf("no free ports at offsets %v", offsets)
	return 0
}
