package temporal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// TestMappingErrors: what the driver says about engine blocks and workflow targets.
func TestMappingErrors(t *testing.T) {
	const tools = `
tools:
  - name: a
    description: d
    engine: a
    inputSchema: {type: object}
`
	for _, c := range []struct{ name, src, want string }{
		{"bad address", `engines:
  a:
    temporal: {address: localhost}
`, `m.yaml:3:25: engines.a.temporal.address: "localhost" is not host:port (the Temporal frontend as host:port, like 127.0.0.1:7233)`},
		{"address not a string", `engines:
  a:
    temporal: {address: 7233}
`, `m.yaml:3:25: engines.a.temporal.address: must be a string, not an integer (quote it: "7233")`},
		{"unknown key", `engines:
  a:
    temporal: {address: "a:1", namspace: x}
`, `m.yaml:3:32: engines.a.temporal: unknown key "namspace" (did you mean "namespace"?)`},
		{"tls without value", `engines:
  a:
    temporal:
      tls:
`, `m.yaml:4:12: engines.a.temporal.tls: has no value (write tls: {} for TLS with the system's root certificates)`},
		{"tls cert without key", `engines:
  a:
    temporal: {address: "a:1", tls: {certFile: c.pem}}
`, `m.yaml:3:37: engines.a.temporal.tls: certFile and keyFile go together (set both for mutual TLS, or neither)`},
		{"api key instead of its name", `engines:
  a:
    temporal: {apiKeyEnv: "sk-live.abc123"}
`, `m.yaml:3:27: engines.a.temporal.apiKeyEnv: must be the name of an environment variable (like TEMPORAL_API_KEY; the key itself never goes in a mapping file)`},
		{"workflow missing keys", `engines: {a: {temporal: {}}}` + tools + `    workflow: {typ: A}
`, `m.yaml:7:15: tools[0].workflow: missing required key "type" (the workflow type to start, as its workers register it)
m.yaml:7:15: tools[0].workflow: missing required key "taskQueue" (the task queue that the workflow's workers poll)
m.yaml:7:16: tools[0].workflow: unknown key "typ" (did you mean "type"?)`},
		{"workflow missing", `engines: {a: {temporal: {}}}` + tools, `m.yaml:3:5: tools[0]: missing required key "workflow": engine "a" is Temporal (add workflow: {type: ..., taskQueue: ...})`},
		{"bad execution timeout", `engines: {a: {temporal: {}}}` + tools + `    workflow: {type: A, taskQueue: q, executionTimeout: 0s}
`, `m.yaml:7:57: tools[0].workflow.executionTimeout: must be positive, not 0s (use a Go duration like 30s, 5m, 24h)`},
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
	set, err := mapping.Loader{Env: driver.Env{"QUEUE=q1"}}.Parse("m.yaml", []byte(`
engines: {a: {temporal: {}}}
tools:
  - name: a
    description: d
    engine: a
    inputSchema: {type: object}
    workflow: {type: MigrateRepository, taskQueue: "${QUEUE}", executionTimeout: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := temporal.Workflow("MigrateRepository", "q1", time.Hour)
	if got := set.Tools[0].Target; got != want {
		t.Errorf("Target = %+v, want %+v", got, want)
	}
}

func TestRefs(t *testing.T) {
	d := temporal.Driver{}
	id, run := "taskgate/a/b/"+uuid.NewString(), uuid.NewString()
	ref := driver.Ref{ID: id + "/" + run}
	if got := d.FormatRef(ref); got != id+"/"+run {
		t.Errorf("FormatRef = %q", got)
	}
	if got, err := d.ParseRef(d.FormatRef(ref)); err != nil || got != ref {
		t.Errorf("ParseRef(FormatRef(%v)) = %v, %v", ref, got, err)
	}
	for _, bad := range []string{"", "wf", "/" + run, "wf/", "wf/not-a-uuid", "wf/" + strings.ToUpper(run),
		"arn:aws:states:us-east-1:123456789012:execution:a:b"} {
		if r, err := d.ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) = %v, want an error", bad, r)
		}
	}
	const want = "temporal: not a workflow id and run id: want WORKFLOW-ID/RUN-ID, the run id a UUID"
	if _, err := d.ParseRef("wf"); err == nil || err.Error() != want {
		t.Errorf("ParseRef error %v, want %s", err, want)
	}
}

// open loads an engine block and opens it with env.
func open(t *testing.T, block string, env driver.Env) (driver.Conn, error) {
	t.Helper()
	set, err := mapping.Parse("m.yaml", []byte("engines: {a: {temporal: "+block+"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	e, err := set.Engines["a"].Config.Open(ctx, driver.OpenOptions{Env: env})
	if err == nil {
		t.Cleanup(func() { e.Close() })
	}
	return e, err
}

// checkNamespace asks the engine to check a target: it reaches the server and its namespace.
func checkNamespace(t *testing.T, e driver.Conn) error {
	t.Helper()
	_, err := e.Check(t.Context(), temporal.Workflow("A", "q", 0))
	return err
}

// TestOpenFromTheEnvironment: what an engine block leaves out comes from the Temporal CLI's
// variables and profiles; what it sets wins over them.
func TestOpenFromTheEnvironment(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	noProfile := "TEMPORAL_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none.toml")

	t.Run("address and namespace from variables", func(t *testing.T) {
		e, err := open(t, "{}", driver.Env{noProfile, "TEMPORAL_ADDRESS=" + addr, "TEMPORAL_NAMESPACE=no-such-namespace"})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkNamespace(t, e); err == nil || !strings.Contains(err.Error(), `namespace "no-such-namespace" does not exist on `+addr) {
			t.Errorf("Check: %v, want the namespace of TEMPORAL_NAMESPACE missing on TEMPORAL_ADDRESS", err)
		}
	})
	t.Run("the block wins", func(t *testing.T) {
		e, err := open(t, `{address: "`+addr+`", namespace: default}`, driver.Env{noProfile, "TEMPORAL_ADDRESS=127.0.0.1:1", "TEMPORAL_NAMESPACE=no-such-namespace"})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkNamespace(t, e); err != nil {
			t.Errorf("Check: %v", err)
		}
	})
	t.Run("a Temporal CLI profile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "temporal.toml")
		toml := "[profile.staging]\naddress = \"" + addr + "\"\nnamespace = \"no-such-namespace\"\n"
		if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		e, err := open(t, "{}", driver.Env{"TEMPORAL_CONFIG_FILE=" + file, "TEMPORAL_PROFILE=staging"})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkNamespace(t, e); err == nil || !strings.Contains(err.Error(), `namespace "no-such-namespace" does not exist on `+addr) {
			t.Errorf("Check: %v, want the profile's namespace missing on the profile's address", err)
		}
	})
	t.Run("a missing profile", func(t *testing.T) {
		_, err := open(t, "{}", driver.Env{noProfile, "TEMPORAL_PROFILE=staging"})
		const want = "temporal: reading the Temporal CLI's configuration (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE and TEMPORAL_* variables): unable to find profile staging in config data"
		if err == nil || err.Error() != want {
			t.Errorf("Open: %v, want %s", err, want)
		}
	})
	t.Run("apiKeyEnv unset", func(t *testing.T) {
		_, err := open(t, `{address: "`+addr+`", apiKeyEnv: TASKGATE_TEST_KEY}`, driver.Env{noProfile})
		const want = "temporal: apiKeyEnv names TASKGATE_TEST_KEY, which is not set: export the Temporal API key in it"
		if err == nil || err.Error() != want {
			t.Errorf("Open: %v, want %s", err, want)
		}
	})
	t.Run("a missing CA file", func(t *testing.T) {
		_, err := open(t, `{address: "`+addr+`", tls: {caFile: /nonexistent/ca.pem}}`, driver.Env{noProfile})
		const want = "temporal: invalid TLS config: failed reading server CA cert path: open /nonexistent/ca.pem: no such file or directory: check the tls files of the engine block, or the TEMPORAL_TLS_* variables"
		if err == nil || err.Error() != want {
			t.Errorf("Open: %v, want %s", err, want)
		}
	})
	t.Run("nothing answers", func(t *testing.T) {
		// Open makes no call: the frontend may start after taskgate. Check finds it away.
		e, err := open(t, "{}", driver.Env{noProfile, "TEMPORAL_ADDRESS=127.0.0.1:1"})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err = e.Check(ctx, temporal.Workflow("WaitAndEcho", "q", 0))
		const want = "temporal: checking namespace default: engine unavailable at 127.0.0.1:1, retry later: "
		if !errors.Is(err, driver.ErrUnavailable) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Check: %v, want %s...", err, want)
		}
	})
}
