package restate_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// discover runs `taskgate discover restate` with args and returns the draft and the warnings.
func discover(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	run := restate.Driver{}.Discover(fs)
	if err := fs.Parse(append([]string{"--ingress", testenv.RestateIngress(t), "--admin", testenv.RestateAdmin(t)}, args...)); err != nil {
		t.Fatal(err)
	}
	var w, warn bytes.Buffer
	err := run(testContext(t), &w, &warn)
	return w.String(), warn.String(), err
}

// TestDiscover: the draft of the example services is typed from the schemas the Go SDK declares,
// loads, and its targets pass Check.
func TestDiscover(t *testing.T) {
	draft, warnings, err := discover(t, "--prefix", "WaitAnd")
	if err != nil {
		t.Fatal(err)
	}
	want := `# Drafted by ` + "`taskgate discover restate`" + `. Review every tool (names, descriptions, schemas)
# and check the result with ` + "`taskgate validate --engines`" + ` before serving it.
version: 1
engines:
  restate:
    restate:
      ingress: "` + testenv.RestateIngress(t) + `"
      admin: "` + testenv.RestateAdmin(t) + `"
tools:
  - name: wait_and_echo
    description: "Waits the given number of seconds, then returns the text."
    engine: restate
    invoke: {service: "WaitAndEcho", handler: "run"}
    inputSchema: {"additionalProperties":false,"properties":{"seconds":{"description":"How long to wait.","maximum":86400,"minimum":0,"type":"number"},"text":{"description":"The text to return.","type":"string"}},"required":["seconds","text"],"type":"object"}
    outputSchema: {"additionalProperties":false,"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}
  - name: wait_and_fail
    description: "Waits the given number of seconds, then fails with the given reason."
    engine: restate
    invoke: {service: "WaitAndFail", handler: "run"}
    inputSchema: {"additionalProperties":false,"properties":{"reason":{"description":"The failure message.","type":"string"},"seconds":{"description":"How long to wait.","maximum":86400,"minimum":0,"type":"number"}},"required":["seconds","reason"],"type":"object"}
`
	if draft != want || warnings != "" {
		t.Fatalf("draft:\n%s\nwant:\n%s\nwarnings: %q", draft, want, warnings)
	}
	set, err := mapping.Parse("draft.yaml", []byte(draft))
	if err != nil {
		t.Fatalf("the draft does not load: %v", err)
	}
	e, err := set.Engines["restate"].Config.Open(t.Context(), driver.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tool := range set.Tools {
		if _, err := e.Check(testContext(t), tool.Target); err != nil {
			t.Errorf("Check of the drafted %s: %v", tool.Name, err)
		}
	}
}

// TestDiscoverKinds: what can back a task is drafted (a value that is not an object comes as the
// argument input), what cannot is left out with a warning.
func TestDiscoverKinds(t *testing.T) {
	v := newEnv(t)
	draft, warnings, err := discover(t, "--prefix", v.counter)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.ToLower(strings.Replace(v.counter, "Counter", "counter", 1)) + "_add"
	wantTool := `  - name: ` + name + `
    description: "Invokes the Restate handler ` + v.counter + `/add."
    engine: restate
    invoke: {service: "` + v.counter + `", handler: "add"}
    input: .input
    inputSchema: {"properties":{"input":{"type":"integer"}},"required":["input"],"type":"object"}
`
	wantWarnings := "taskgate: warning: " + v.counter + "/add has no documentation: the draft says only what it invokes\n" +
		"taskgate: warning: " + v.counter + "/get is left out: get is a shared handler of virtual object " + v.counter +
		": each task gets an object of its own, so it would only ever see an empty one; invoke an exclusive handler\n"
	if !strings.HasSuffix(draft, "tools:\n"+wantTool) || warnings != wantWarnings {
		t.Fatalf("draft:\n%s\nwant it to end with:\n%s\nwarnings:\n%s\nwant:\n%s", draft, wantTool, warnings, wantWarnings)
	}
	if _, err := mapping.Parse("draft.yaml", []byte(draft)); err != nil {
		t.Fatalf("the draft does not load: %v", err)
	}

	_, _, err = discover(t, "--prefix", "NoSuchService"+randomHex(4))
	if err == nil || !strings.HasPrefix(err.Error(), "no service registered in Restate at "+testenv.RestateAdmin(t)+" has a name that starts with") {
		t.Errorf("discover of nothing: %v", err)
	}
}
