package restate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/restatedev/sdk-go"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
	"github.com/taskgate/taskgate/internal/testenv"
)

// env is one engine on the server of RESTATE_ADMIN_URL, where scripts/with-engines registered the
// example deployment, and this test process's own services: Flaky (its handler always fails, and
// is retried), Counter (a virtual object with an exclusive and a shared handler), Workflow (with a
// shared handler beside run), and Unpolled (its deployment is gone, so nothing ever runs its
// invocations). Their names end with a suffix of this process's, so that test processes running
// at once do not replace each other's deployments.
type env struct {
	engine                             driver.Conn
	flaky, counter, workflow, unpolled string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e, err := restate.New(restate.Config{Ingress: testenv.RestateIngress(t), Admin: testenv.RestateAdmin(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	suffix := randomHex(4)
	v := &env{engine: e, flaky: "Flaky" + suffix, counter: "Counter" + suffix, workflow: "Workflow" + suffix, unpolled: "Unpolled" + suffix}
	deploy(t, e, false,
		sdk.NewService(v.flaky).Handler("run", sdk.NewServiceHandler(
			func(sdk.Context, struct{}) (sdk.Void, error) { return sdk.Void{}, errors.New("not yet") })),
		sdk.NewObject(v.counter).
			Handler("add", sdk.NewObjectHandler(func(ctx sdk.ObjectContext, n int) (int, error) {
				sum, err := sdk.Get[int](ctx, "sum")
				if err != nil {
					return 0, err
				}
				sdk.Set(ctx, "sum", sum+n)
				return sum + n, nil
			})).
			Handler("get", sdk.NewObjectSharedHandler(func(ctx sdk.ObjectSharedContext, _ struct{}) (int, error) {
				return sdk.Get[int](ctx, "sum")
			})),
		sdk.NewWorkflow(v.workflow).
			Handler("run", sdk.NewWorkflowHandler(func(sdk.WorkflowContext, struct{}) (string, error) { return "ran", nil })).
			Handler("peek", sdk.NewWorkflowSharedHandler(func(sdk.WorkflowSharedContext, struct{}) (string, error) { return "", nil })))
	deploy(t, e, true, sdk.NewService(v.unpolled).Handler("run", sdk.NewServiceHandler(
		func(sdk.Context, restateexamples.EchoInput) (restateexamples.EchoOutput, error) {
			return restateexamples.EchoOutput{}, nil
		})))
	return v
}

// deploy serves services as a deployment of their own and registers it; gone stops serving it
// once registered.
func deploy(t *testing.T, e driver.Conn, gone bool, services ...sdk.ServiceDefinition) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- restateexamples.Serve(ctx, ln, slog.DiscardHandler, services) }()
	down := sync.OnceFunc(func() { stop(); <-served })
	t.Cleanup(down)
	rctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var ep restate.Endpoints
	if !driver.As(e, &ep) {
		t.Fatal("As(*restate.Endpoints) = false")
	}
	if err := restate.Register(rctx, ep, "http://"+ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if gone {
		down()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type harness struct {
	t *testing.T
	*env
}

func (h *harness) Conn() driver.Conn { return h.engine }

func (h *harness) Driver() driver.Driver { return restate.Driver{} }

// Unreachable is an engine on a closed port: New makes no call.
func (h *harness) Unreachable() driver.Conn {
	e, err := restate.New(restate.Config{Ingress: "http://127.0.0.1:1", Admin: "http://127.0.0.1:1"})
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

func example(service string) driver.Target {
	return restate.Handler(service, restateexamples.RunHandler, restate.Cancel)
}

func (h *harness) Target(name string) driver.Target {
	switch name {
	case "echo", "timeout": // no timeout: its test is skipped, its Check is echo's
		return example(restateexamples.WaitAndEcho)
	case "fail":
		return example(restateexamples.WaitAndFail)
	case "unpolled":
		// Killed: Restate's cancel would wait for a handler to see it.
		return restate.Handler(h.unpolled, "run", restate.Kill)
	case "absent":
		return example("NoSuchService" + randomHex(4))
	case "wrongkind":
		return driver.Target{Name: restateexamples.WaitAndEcho + "/run"} // no Spec: the driver never decoded it
	case "ask":
		return example(restateexamples.AskAndEcho)
	case "ask-two":
		return example(restateexamples.AskTwoAndEcho)
	case "steps":
		return example(restateexamples.BuildRelease)
	}
	h.t.Fatalf("the harness has no target %q", name)
	return driver.Target{}
}

// Missing is a task of echo with an invocation id Restate would read but never gave.
func (h *harness) Missing() driver.Ref {
	return driver.Ref{ID: "WaitAndEcho/run/" + driver.CallerTag("") + "-" + uuid.NewString() + "/" + missingInvocation()}
}

// missingInvocation is a random invocation id of the right shape: a partition key and a ULID
// under their limits.
func missingInvocation() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	id := []byte("inv_10")
	for range 32 {
		n, _ := rand.Int(rand.Reader, big.NewInt(62))
		id = append(id, digits[n.Int64()])
	}
	id[4+1+11] = '0' // the ULID's first digit: under 2^128
	return string(id)
}

func (h *harness) Foreign() []driver.Ref { return foreignRefs() }

func foreignRefs() []driver.Ref {
	tag, id, inv := driver.CallerTag(""), uuid.NewString(), missingInvocation()
	key := tag + "-" + id
	return []driver.Ref{
		{ID: "WaitAndFail/run/" + key + "/" + inv},
		{ID: "WaitAndEcho/other/" + key + "/" + inv},
		{ID: "WaitAndEcho/run/" + driver.CallerTag("bob") + "-" + id + "/" + inv},
		{ID: "WaitAndEcho/run/" + id + "/" + inv},
		{ID: "WaitAndEcho/run/" + key + "/"},
		{ID: "WaitAndEcho/run/" + key + "/inv_zzz"},
		{ID: "WaitAndEcho/run/" + key + "/" + strings.Replace(inv, "inv_1", "inv_2", 1)},
		{ID: "WaitAndEcho/run/" + key + "/inv_1" + strings.Repeat("Z", 33)},
		{ID: "WaitAndEcho/run/" + tag + "-k-" + strings.Repeat("A", 32) + "/" + inv},
		{ID: "WaitAndEcho/run/" + key + "/" + inv + "/x"},
		{ID: "WaitAndEcho/run/" + key},
		{ID: inv},
		{ID: "WaitAndEcho/run/" + strings.ToUpper(key) + "/" + inv},
	}
}

func (h *harness) ShouldSkip(test string) (bool, string) {
	switch test {
	case "Timeout":
		return true, "Restate bounds attempts (inactivity and abort timeouts), not a whole invocation"
	case "CancelReason":
		return true, "Restate's cancel takes no reason"
	}
	return false, ""
}

func (h *harness) Close() {}

func TestConformance(t *testing.T) {
	v := newEnv(t)
	enginetest.RunConformanceTests(t, func(t *testing.T) enginetest.Harness { return &harness{t: t, env: v} })
}
