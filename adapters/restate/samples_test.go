package restate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate"
	"github.com/taskgate/taskgate/internal/testenv"
)

// send invokes service/[key/]handler through the ingress without waiting, as any client of
// Restate would, and returns when Restate has accepted it.
func send(t *testing.T, path, body string) {
	t.Helper()
	resp, err := http.Post(testenv.RestateIngress(t)+"/"+path+"/send", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		t.Fatalf("sending %s: HTTP %d", path, resp.StatusCode)
	}
}

// TestSamples: the inputs of a handler's invocations come back newest first, n of them, whatever
// the value (a number here) and whatever the status (one backs off: its deployment is gone).
func TestSamples(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	add := restate.Handler(v.counter, "add", restate.Cancel)
	if got, err := v.engine.(driver.Sampler).Samples(ctx, add, 5); err != nil || len(got) != 0 {
		t.Fatalf("Samples of a handler never invoked: %s, %v; want none", got, err)
	}
	var want []string
	for i := range 4 {
		send(t, fmt.Sprintf("%s/key-%d/add", v.counter, i), fmt.Sprint(10+i))
		want = append([]string{fmt.Sprint(10 + i)}, want...)
		time.Sleep(5 * time.Millisecond) // invocations are ordered by their creation, in milliseconds
	}
	got, err := v.engine.(driver.Sampler).Samples(ctx, add, 3)
	if err != nil || joinRaw(got) != strings.Join(want[:3], " ") {
		t.Errorf("Samples(3) = %s, %v\nwant %s", joinRaw(got), err, strings.Join(want[:3], " "))
	}
	if got, err := v.engine.(driver.Sampler).Samples(ctx, add, 10); err != nil || joinRaw(got) != strings.Join(want, " ") {
		t.Errorf("Samples(10) = %s, %v\nwant %s", joinRaw(got), err, strings.Join(want, " "))
	}

	const stuck = `{"seconds":1,"text":"nobody serves this"}`
	send(t, v.unpolled+"/run", stuck)
	run := restate.Handler(v.unpolled, "run", restate.Cancel)
	if got, err := v.engine.(driver.Sampler).Samples(ctx, run, 5); err != nil || joinRaw(got) != stuck {
		t.Errorf("Samples of an invocation that backs off: %s, %v; want %s", joinRaw(got), err, stuck)
	}
}

func joinRaw(xs []json.RawMessage) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, " ")
}
