package restate_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// TestMappingErrors: what the driver says about engine blocks and handler targets.
func TestMappingErrors(t *testing.T) {
	const tools = `
tools:
  - name: a
    description: d
    engine: a
    inputSchema: {type: object}
`
	for _, c := range []struct{ name, src, want string }{
		{"bad ingress", `engines:
  a:
    restate: {ingress: "localhost:8080"}
`, `m.yaml:3:24: engines.a.restate.ingress: "localhost:8080" is not an http:// or https:// URL (an http:// or https:// URL, like http://localhost:8080; or leave it out for $RESTATE_INGRESS_URL)`},
		{"unknown key", `engines:
  a:
    restate: {admn: "http://a:9070"}
`, `m.yaml:3:15: engines.a.restate: unknown key "admn" (did you mean "admin"?)`},
		{"token instead of its name", `engines:
  a:
    restate: {authTokenEnv: "key_abc.123"}
`, `m.yaml:3:29: engines.a.restate.authTokenEnv: must be the name of an environment variable (like RESTATE_AUTH_TOKEN; the token itself never goes in a mapping file)`},
		{"invoke missing keys", `engines: {a: {restate: {}}}` + tools + `    invoke: {servce: A}
`, `m.yaml:7:13: tools[0].invoke: missing required key "service" (the service to invoke, as the deployment registers it)
m.yaml:7:13: tools[0].invoke: missing required key "handler" (the handler to invoke, as the deployment registers it)
m.yaml:7:14: tools[0].invoke: unknown key "servce" (did you mean "service"?)`},
		{"invoke missing", `engines: {a: {restate: {}}}` + tools, `m.yaml:3:5: tools[0]: missing required key "invoke": engine "a" is Restate (add invoke: {service: ..., handler: run})`},
		{"bad names", `engines: {a: {restate: {}}}` + tools + `    invoke: {service: "a/b", handler: "1run"}
`, `m.yaml:7:23: tools[0].invoke.service: "a/b" is not a Restate service name (letters, digits, ., _ and -, starting with a letter, as the deployment registers it)
m.yaml:7:39: tools[0].invoke.handler: "1run" is not a Restate handler name (letters, digits, ., _ and -, starting with a letter, as the deployment registers it)`},
		{"bad cancel", `engines: {a: {restate: {}}}` + tools + `    invoke: {service: A, handler: run, cancel: abort}
`, `m.yaml:7:48: tools[0].invoke.cancel: "abort" is not a way to stop an invocation (cancel (the handler may clean up) or kill (it ends at once))`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mapping.Parse("m.yaml", []byte(c.src))
			if err == nil || err.Error() != c.want {
				t.Errorf("got:\n%v\nwant:\n%s", err, c.want)
			}
		})
	}
}

func TestTarget(t *testing.T) {
	set, err := mapping.Loader{Env: driver.Env{"SERVICE=Releases"}}.Parse("m.yaml", []byte(`
engines: {a: {restate: {}}}
tools:
  - name: a
    description: d
    engine: a
    inputSchema: {type: object}
    invoke: {service: "${SERVICE}", handler: build, cancel: kill}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := set.Tools[0].Target, restate.Handler("Releases", "build", restate.Kill); got != want {
		t.Errorf("Target = %+v, want %+v", got, want)
	}
	if name := set.Tools[0].Target.Name; name != "Releases/build" {
		t.Errorf("Name = %q, want Releases/build", name)
	}
}

// taskgate validate and serve check that the variable authTokenEnv names is set.
func TestTokenEnvNeeded(t *testing.T) {
	set, err := mapping.Parse("m.yaml", []byte("engines:\n  a:\n    restate: {authTokenEnv: TASKGATE_TEST_TOKEN}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.CheckNeeds(driver.Env{"TASKGATE_TEST_TOKEN=t"}); err != nil {
		t.Errorf("with the variable set: %v", err)
	}
	const want = `m.yaml:3:29: engines.a.restate.authTokenEnv: $TASKGATE_TEST_TOKEN is not set (serving reads the secret from it: export it where taskgate runs)`
	if err := set.CheckNeeds(driver.Env{}); err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestRefs(t *testing.T) {
	d := restate.Driver{}
	id := "Releases/build/" + driver.CallerTag("") + "-" + uuid.NewString() + "/" + missingInvocation()
	if got, err := d.ParseRef(id); err != nil || d.FormatRef(got) != id {
		t.Errorf("ParseRef(%q) = %v, %v; want it back", id, got, err)
	}
	for _, bad := range []string{"", "a/b", "Releases/build/" + driver.CallerTag("") + "-" + uuid.NewString() + "/",
		"Releases/build/x/" + missingInvocation(), "arn:aws:states:us-east-1:123456789012:execution:a:b",
		"taskgate/WaitAndEcho/x/" + uuid.NewString()} {
		if r, err := d.ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) = %v, want an error", bad, r)
		}
	}
	const want = "restate: not a task's invocation: want SERVICE/HANDLER/TASK-KEY/INVOCATION-ID, the invocation id like inv_1gdJBtdVEcM942bjcDmb1c1khoaJe11Hbz"
	if _, err := d.ParseRef("a/b"); err == nil || err.Error() != want {
		t.Errorf("ParseRef error %v, want %s", err, want)
	}
}

// TestAs: a Conn answers its Endpoints, and nothing else.
func TestAs(t *testing.T) {
	hc := &http.Client{}
	e, err := restate.New(restate.Config{Ingress: "http://127.0.0.1:1/", Admin: "http://127.0.0.1:2", Token: "t", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	var ep restate.Endpoints
	want := restate.Endpoints{Ingress: "http://127.0.0.1:1", Admin: "http://127.0.0.1:2", Token: "t", HTTP: hc}
	if !driver.As(e, &ep) || ep != want {
		t.Errorf("As(*restate.Endpoints) = %+v, want %+v", ep, want)
	}
	other := &http.Client{}
	if driver.As(e, &other) || other == nil {
		t.Errorf("As(**http.Client) = true, or it changed its target")
	}
}

// TestOwns: Owns reads the target and the caller from a Ref alone, with no call.
func TestOwns(t *testing.T) {
	e, err := restate.New(restate.Config{Ingress: "http://127.0.0.1:1", Admin: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	echo := restate.Handler("WaitAndEcho", "run", restate.Cancel)
	owned := "WaitAndEcho/run/" + driver.CallerTag("alice") + "-" + uuid.NewString() + "/" + missingInvocation()
	keyed := "WaitAndEcho/run/" + driver.CallerTag("alice") + "-k-0123456789abcdef0123456789abcdef/" + missingInvocation()
	for _, c := range []struct {
		name   string
		t      driver.Target
		r      string
		caller string
		want   bool
	}{
		{"fresh", echo, owned, "alice", true},
		{"keyed", echo, keyed, "alice", true},
		{"another caller's", echo, owned, "bob", false},
		{"no caller", echo, owned, "", false},
		{"another handler", restate.Handler("WaitAndEcho", "other", restate.Cancel), owned, "alice", false},
		{"killing the same handler", restate.Handler("WaitAndEcho", "run", restate.Kill), owned, "alice", true},
		{"not a Restate target", driver.Target{Name: "WaitAndEcho/run"}, owned, "alice", false},
	} {
		if got := e.Owns(c.t, driver.Ref{ID: c.r}, c.caller); got != c.want {
			t.Errorf("%s: Owns = %v, want %v", c.name, got, c.want)
		}
	}
	for i, r := range foreignRefs() {
		if e.Owns(echo, r, "") {
			t.Errorf("foreign %d: Owns(%q) = true", i, r.ID)
		}
	}
}

// open loads an engine block and opens it with env.
func open(t *testing.T, block string, env driver.Env) (driver.Conn, error) {
	t.Helper()
	set, err := mapping.Parse("m.yaml", []byte("engines: {a: {restate: "+block+"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.Engines["a"].Config.Open(t.Context(), driver.OpenOptions{Env: env})
	if err == nil {
		t.Cleanup(func() { e.Close() })
	}
	return e, err
}

// TestOpenFromTheEnvironment: what an engine block leaves out comes from the Restate CLI's
// variables; what it sets wins over them.
func TestOpenFromTheEnvironment(t *testing.T) {
	ingress, admin := testenv.RestateIngress(t), testenv.RestateAdmin(t)
	check := func(e driver.Conn) error {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := e.Check(ctx, restate.Handler("WaitAndEcho", "run", restate.Cancel))
		return err
	}
	t.Run("URLs from variables", func(t *testing.T) {
		e, err := open(t, "{}", driver.Env{"RESTATE_INGRESS_URL=" + ingress, "RESTATE_ADMIN_URL=" + admin})
		if err != nil {
			t.Fatal(err)
		}
		if err := check(e); err != nil {
			t.Errorf("Check: %v", err)
		}
	})
	t.Run("the block wins", func(t *testing.T) {
		e, err := open(t, `{ingress: "`+ingress+`", admin: "`+admin+`"}`, driver.Env{"RESTATE_ADMIN_URL=http://127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := check(e); err != nil {
			t.Errorf("Check: %v", err)
		}
	})
	t.Run("nothing answers", func(t *testing.T) {
		e, err := open(t, "{}", driver.Env{"RESTATE_ADMIN_URL=http://127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		const want = "restate: check WaitAndEcho/run: engine unavailable at 127.0.0.1:1, retry later: Get \"http://127.0.0.1:1/services/WaitAndEcho\": dial tcp 127.0.0.1:1: connect: connection refused"
		if err := check(e); !errors.Is(err, driver.ErrUnavailable) || err.Error() != want {
			t.Errorf("Check: %v\nwant %s", err, want)
		}
	})
	t.Run("a variable that is no URL", func(t *testing.T) {
		_, err := open(t, "{}", driver.Env{"RESTATE_INGRESS_URL=localhost:8080"})
		const want = `restate: RESTATE_INGRESS_URL is "localhost:8080", not an http:// or https:// URL: fix it, or set ingress in the engine block`
		if err == nil || err.Error() != want {
			t.Errorf("Open: %v, want %s", err, want)
		}
	})
	t.Run("authTokenEnv unset", func(t *testing.T) {
		_, err := open(t, `{authTokenEnv: TASKGATE_TEST_TOKEN}`, driver.Env{})
		const want = "restate: authTokenEnv names TASKGATE_TEST_TOKEN, which is not set: export the Restate API token in it"
		if err == nil || err.Error() != want {
			t.Errorf("Open: %v, want %s", err, want)
		}
	})
}
