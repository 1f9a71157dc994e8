package observe_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/observe"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

func probe(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// awaitProbe probes until the answer is status, within 30 seconds.
func awaitProbe(t *testing.T, url string, status int, body string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got, text := probe(t, url)
		if got == status {
			if text != body {
				t.Fatalf("/readyz %d: %q, want %q", got, text, body)
			}
			return time.Since(start)
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("/readyz still %d %q after 30s, want %d", got, text, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReadyzFollowsTheEngine: /readyz answers 503 while the Temporal server is unreachable and 200
// again once it is back, with no restart; probes in between share one check.
func TestReadyzFollowsTheEngine(t *testing.T) {
	target := testenv.TemporalAddress(t)
	addr, cut, restore := enginetest.Switch(t, target)
	t.Setenv("TEMPORAL_ADDRESS", addr)
	set, err := mapping.Load("../examples/temporal/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := temporal.New(context.Background(), temporal.Config{Address: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	keys, _ := token.ParseKeys(token.NewKey("t1"))
	sealed, _ := token.NewSealed(keys)
	svc, err := tasks.New(tasks.Config{Mapping: set, Tokens: sealed, Engines: map[string]adapters.Conn{"local-temporal": eng}})
	if err != nil {
		t.Fatal(err)
	}
	var checks atomic.Int64
	ready := &observe.Readiness{TTL: time.Second, Check: func(ctx context.Context) error {
		checks.Add(1)
		_, err := svc.CheckTargets(ctx)
		return err
	}}
	hs := httptest.NewServer(ready)
	defer hs.Close()

	const up, down = "ready\n", "not ready: an engine is unreachable or does not serve every mapped target; the server's log says which\n"
	awaitProbe(t, hs.URL, http.StatusOK, up)
	before := checks.Load()
	for range 20 {
		probe(t, hs.URL)
	}
	if n := checks.Load() - before; n > 1 {
		t.Errorf("20 probes within the TTL ran %d checks, want at most 1", n)
	}

	cut()
	t.Logf("unready %s after the cut", awaitProbe(t, hs.URL, http.StatusServiceUnavailable, down))
	restore()
	t.Logf("ready %s after the engine came back", awaitProbe(t, hs.URL, http.StatusOK, up))
}

// TestReadyzReturnsSoonAfterTheEngines: a failed answer stands for FailedTTL (1 s by default), a
// passing one for the TTL (5 s), so that readiness returns within about a second of the engines.
// The soak (test/soak) found /readyz 503 for 6 s after a restarted Temporal server answered.
func TestReadyzReturnsSoonAfterTheEngines(t *testing.T) {
	var down atomic.Bool
	var checks atomic.Int64
	down.Store(true)
	ready := &observe.Readiness{Check: func(context.Context) error {
		checks.Add(1)
		if down.Load() {
			return errors.New("the engine does not answer")
		}
		return nil
	}}
	hs := httptest.NewServer(ready)
	defer hs.Close()
	if got, _ := probe(t, hs.URL); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the engine away: %d, want 503", got)
	}
	down.Store(false)
	if d := awaitProbe(t, hs.URL, http.StatusOK, "ready\n"); d > 2*time.Second {
		t.Errorf("/readyz said ready %v after the engine returned, want within about a second", d.Round(time.Millisecond))
	}
	before := checks.Load()
	for range 20 {
		probe(t, hs.URL)
	}
	if n := checks.Load() - before; n > 0 {
		t.Errorf("20 probes right after a passing check ran %d more checks, want none within the TTL", n)
	}
}
