package restate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
	"github.com/taskgate/taskgate/internal/testenv"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestCheck: which handlers can back a task, and what Check says of the others.
func TestCheck(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	admin := testenv.RestateAdmin(t)
	for _, c := range []struct {
		name string
		t    driver.Target
		want string
	}{
		{"a service's handler", example(restateexamples.WaitAndEcho), ""},
		{"a workflow's run handler", example(restateexamples.AskAndEcho), ""},
		{"a virtual object's exclusive handler", restate.Handler(v.counter, "add", restate.Cancel), ""},
		{"no such service", restate.Handler("NoSuchService", "run", restate.Cancel),
			`restate: check NoSuchService/run: Restate at ` + admin + ` has no service "NoSuchService": register the deployment that serves it (restate deployments register URL)`},
		{"no such handler", restate.Handler(restateexamples.WaitAndEcho, "nope", restate.Cancel),
			`restate: check WaitAndEcho/nope: service WaitAndEcho has no handler "nope"; it has run`},
		{"a workflow's shared handler", restate.Handler(v.workflow, "peek", restate.Cancel),
			"restate: check " + v.workflow + "/peek: peek is a shared handler of workflow " + v.workflow + ": each task runs a workflow of its own, so invoke its run handler (of type Workflow)"},
		{"a virtual object's shared handler", restate.Handler(v.counter, "get", restate.Cancel),
			"restate: check " + v.counter + "/get: get is a shared handler of virtual object " + v.counter + ": each task gets an object of its own, so it would only ever see an empty one; invoke an exclusive handler"},
	} {
		info, err := v.engine.Check(ctx, c.t)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: Check: %v", c.name, err)
		case c.want == "" && info.Retention != 24*time.Hour:
			t.Errorf("%s: Check: retention %v, want Restate's default of a day", c.name, info.Retention)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: Check: %v\nwant %s", c.name, err, c.want)
		}
	}
	_, err := v.engine.Start(ctx, restate.Handler(v.workflow, "peek", restate.Cancel), driver.StartRequest{Input: json.RawMessage(`{}`)})
	if !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("Start of a workflow's shared handler: %v, want ErrInvalid", err)
	}
}

// TestVirtualObject: a task of an exclusive handler runs on an object of its own.
func TestVirtualObject(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	add := restate.Handler(v.counter, "add", restate.Cancel)
	for range 2 {
		_, out, err := runToEnd(ctx, v.engine, add, driver.StartRequest{Input: json.RawMessage(`5`)})
		if err != nil || out.State != driver.Succeeded || string(out.Output) != "5" {
			t.Errorf("Run: %+v, %v; want 5, the sum of an object of the task's own", out, err)
		}
	}
}

// TestBackingOff: an invocation that fails and is retried is working, and says which attempt
// failed and how; killed, it is cancelled.
func TestBackingOff(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	flaky := restate.Handler(v.flaky, "run", restate.Kill)
	r, err := v.engine.Start(ctx, flaky, driver.StartRequest{Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	st := enginetest.AwaitStatus(ctx, t, v.engine, flaky, r, "backing-off", func(st driver.Status) bool { return st.Native == "backing-off" })
	want := regexp.MustCompile(`^attempt [0-9]+ failed, last failure: \[500 Internal\] not yet; next attempt at [0-9]{2}:[0-9]{2}:[0-9]{2}$`)
	if st.State != driver.Working || !want.MatchString(st.Message) {
		t.Errorf("Describe of an invocation that is retried: %+v, want working with a message like %s", st, want)
	}
	if err := v.engine.Cancel(ctx, flaky, r, "enough"); err != nil {
		t.Fatal(err)
	}
	out, err := awaitEnd(ctx, v.engine, flaky, r)
	if err != nil || out.State != driver.Cancelled || out.Native != "killed" || out.Cause != "killed" {
		t.Errorf("Wait after a kill: %+v, %v; want cancelled, native killed, cause killed", out, err)
	}
}

// TestKeyConflict: a key used before with other input names no invocation, and says so.
func TestKeyConflict(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	echo := example(restateexamples.WaitAndEcho)
	key := "conflict-" + randomHex(8)
	r, err := v.engine.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"one"}`), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.engine.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"two"}`), Key: key})
	want := "restate: start WaitAndEcho/run: idempotency key already used with other input: invocation " + r.ID[strings.LastIndex(r.ID, "/")+1:] +
		" was started under this key with other arguments; repeat those arguments, or use a new key"
	if !errors.Is(err, driver.ErrKeyConflict) || err.Error() != want {
		t.Errorf("Start with the key and other input: %v\nwant %s", err, want)
	}
}

// TestAuthToken: a Restate behind a gateway that wants a bearer token (as Restate Cloud does)
// is reached with the token of authTokenEnv, and without it says what to do.
func TestAuthToken(t *testing.T) {
	const token = "taskgate-test-token"
	gateway := func(upstream string) string {
		u, err := url.Parse(upstream)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(u)
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"message":"invalid bearer token"}`))
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	block := `{ingress: "` + gateway(testenv.RestateIngress(t)) + `", admin: "` + gateway(testenv.RestateAdmin(t)) + `", authTokenEnv: TASKGATE_TEST_TOKEN}`
	ctx := testContext(t)
	echo := example(restateexamples.WaitAndEcho)

	e, err := open(t, block, driver.Env{"TASKGATE_TEST_TOKEN=" + token})
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := runToEnd(ctx, e, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"through the gateway"}`)})
	if err != nil || out.State != driver.Succeeded {
		t.Errorf("Run with the token: %+v, %v", out, err)
	}

	e, err = open(t, block, driver.Env{"TASKGATE_TEST_TOKEN=wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Check(ctx, echo)
	const want = "restate: check WaitAndEcho/run: the server refused taskgate's credentials (HTTP 401: invalid bearer token): set the engine's authTokenEnv to the variable that holds a valid API token"
	if err == nil || err.Error() != want {
		t.Errorf("Check with a wrong token: %v\nwant %s", err, want)
	}
}
