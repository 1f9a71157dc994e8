package temporal_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// discover runs `taskgate discover temporal` with args and returns the draft and the warnings.
func discover(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	fs := flag.NewFlagSet("discover temporal", flag.ContinueOnError)
	run := temporal.Driver{}.Discover(fs)
	if err := fs.Parse(append([]string{"--address", testenv.TemporalAddress(t)}, args...)); err != nil {
		t.Fatal(err)
	}
	var w, warn bytes.Buffer
	err := run(testContext(t), &w, &warn)
	return w.String(), warn.String(), err
}

// TestDiscover: example workflows registered under types of their own, on two task queues with a
// worker each, are drafted as one tool per type: the queue of the latest workflow, the other one
// said; the asking one marked, with what its worker declares; input schemas inferred. The draft
// loads, and its targets pass Check.
func TestDiscover(t *testing.T) {
	v := newEnv(t)
	ctx := testContext(t)
	prefix := "Disc" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	echo, ask := prefix+"Echo", prefix+"Ask"
	older, latest := "taskgate-disc-old-"+uuid.NewString(), "taskgate-disc-new-"+uuid.NewString()
	c := sdkClient(t, v.engine)
	for _, q := range []string{older, latest} {
		w := worker.New(c, q, worker.Options{})
		w.RegisterWorkflowWithOptions(temporalexamples.WaitAndEcho, workflow.RegisterOptions{Name: echo})
		w.RegisterWorkflowWithOptions(temporalexamples.AskAndEcho, workflow.RegisterOptions{Name: ask})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	startOn := func(queue, typ string, in any) client.WorkflowRun {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "someone/" + uuid.NewString(), TaskQueue: queue}, typ, in)
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	for i, q := range []string{older, latest, latest} {
		if err := startOn(q, echo, temporalexamples.EchoInput{Text: strings.Repeat("x", i)}).Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	asking := startOn(latest, ask, temporalexamples.AskInput{Message: "Go on?"})
	t.Cleanup(func() { _ = c.TerminateWorkflow(t.Context(), asking.GetID(), "", "test over") })

	var d, warnings string
	var err error
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		d, warnings, err = discover(t, "--prefix", prefix, "--since", "1h", "--infer", "5")
		if err == nil && strings.Count(d, "  - name:") == 2 && strings.Contains(d, older) && strings.Contains(d, "taskgate.answer") || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	want := `tools:
  - name: ` + strings.ToLower(prefix) + `_ask
    description: "Runs the Temporal workflow ` + ask + `. It may ask the caller questions while it runs."
    engine: temporal
    workflow: {type: "` + ask + `", taskQueue: "` + latest + `"}
    # Asks questions through taskgateflow: taskgate shows them to the caller as the task's input requests.
    # Its worker declares updates "taskgate.answer".
    inputSchema: {"properties":{"message":{"type":"string"}},"required":["message"],"type":"object"}   # inferred from the latest input: review it
  - name: ` + strings.ToLower(prefix) + `_echo
    description: "Runs the Temporal workflow ` + echo + `."
    engine: temporal
    # Also ran on task queue "` + older + `": the draft uses "` + latest + `", the queue of its most recent workflow.
    workflow: {type: "` + echo + `", taskQueue: "` + latest + `"}
    inputSchema: {"properties":{"seconds":{"type":"integer"},"text":{"type":"string"}},"required":["seconds","text"],"type":"object"}   # inferred from the 2 latest inputs: review it
`
	if !strings.HasSuffix(d, want) {
		t.Fatalf("draft:\n%s\nwant it to end with:\n%s\nwarnings:\n%s", d, want, warnings)
	}
	if w := echo + " ran on 2 task queues: the draft uses " + latest; !strings.Contains(warnings, w) {
		t.Errorf("warnings lack %q:\n%s", w, warnings)
	}
	set, err := mapping.Parse("draft.yaml", []byte(d))
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, d)
	}
	e, err := set.Engines["temporal"].Config.Open(ctx, driver.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tool := range set.Tools {
		if _, err := e.Check(ctx, tool.Target); err != nil {
			t.Errorf("Check of the drafted %s: %v", tool.Name, err)
		}
	}
}

func TestDiscoverNothing(t *testing.T) {
	prefix := "Nothing" + strings.ReplaceAll(uuid.NewString(), "-", "")
	_, _, err := discover(t, "--prefix", prefix, "--namespace", "default")
	want := `no workflow whose type starts with "` + prefix + `" started in namespace default at ` + testenv.TemporalAddress(t) + ` over the last 168h0m0s`
	if err == nil || err.Error() != want {
		t.Errorf("discover of nothing: %v\nwant %s", err, want)
	}
}

func TestDiscoverFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--address", "nohost"}, `invalid value "nohost" for flag -address: the Temporal frontend as host:port, like 127.0.0.1:7233`},
		{[]string{"--since", "-1h"}, `invalid value "-1h" for flag -since: want a positive duration like 72h`},
		{[]string{"--api-key-env", "my key"}, `invalid value "my key" for flag -api-key-env: want the NAME of the variable that holds the key, like TEMPORAL_API_KEY`},
		{[]string{"--infer", "0"}, `invalid value "0" for flag -infer: want a number of executions from 1 to 1000`},
	} {
		fs := flag.NewFlagSet("discover temporal", flag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		temporal.Driver{}.Discover(fs)
		if err := fs.Parse(c.args); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v\nwant %s", c.args, err, c.want)
		}
	}
	_, _, err := discover(t, "--tls-cert-file", "c.pem")
	if want := "--tls-cert-file and --tls-key-file go together: set both for mutual TLS, or neither"; err == nil || err.Error() != want {
		t.Errorf("a certificate without its key: %v, want %s", err, want)
	}
}
