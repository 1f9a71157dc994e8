package drift_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/drift"
	"github.com/taskgate/taskgate/tasks/token"
)

const tools = `
engines:
  mem: {memory: {}}
  down: {memory: {unavailable: true}}
tools:
  - name: echo
    description: Echoes.
    engine: mem
    job: {program: echo}
    inputSchema:
      type: object
      required: [text]
      additionalProperties: false
      properties: {text: {type: string}, seconds: {type: number}}
  - name: idle
    description: Runs what nothing runs.
    engine: mem
    job: {program: nobody}
    inputSchema: {type: object}
  - name: shout
    description: Shouts.
    engine: mem
    job: {program: fail}
    inputSchema: {type: object, properties: {words: {type: string}}, required: [words]}
    input: '{reason: .words}'
  - name: gone
    description: Its engine does not answer.
    engine: down
    job: {program: echo}
    inputSchema: {type: object}
`

// service serves the tools over memory engines, and returns the engine of block mem to start
// executions on as a pipeline would, past taskgate.
func service(t *testing.T) (*tasks.Service, adapters.Conn) {
	t.Helper()
	return serviceOf(t, tools)
}

func serviceOf(t *testing.T, yaml string) (*tasks.Service, adapters.Conn) {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]adapters.Conn{}
	for name, block := range set.Engines {
		e, err := block.Config.Open(t.Context(), adapters.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		engines[name] = e
	}
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: token.Native{Refs: set}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, engines["mem"]
}

func start(t *testing.T, e adapters.Conn, program string, inputs ...string) {
	t.Helper()
	tool := memengine.Job(program, 0)
	for _, in := range inputs {
		if _, err := e.Start(t.Context(), tool, adapters.StartRequest{Input: json.RawMessage(in)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChecks: each kind of drift, each reason to skip, and a check that cannot be made.
func TestChecks(t *testing.T) {
	svc, mem := service(t)
	start(t, mem, "echo", `{"seconds": 60, "text": "a"}`, `{"seconds": "60", "note": "x"}`, `{"seconds": 60}`)
	reports := drift.NewChecker(svc, 2).All(t.Context())
	var got []string
	for _, r := range reports {
		got = append(got, r.Tool.Name+": target "+r.Target.Summary()+"; inputs "+r.Inputs.Summary())
	}
	want := []string{
		`echo: target fits; inputs drifted: field "note" is not allowed by the inputSchema (additionalProperties), but 1 of 2 recent inputs send it; ` +
			`field "seconds" is number in the inputSchema, but 1 of 2 recent inputs send string; field "text" is required by the inputSchema, but 2 of 2 recent inputs lack it`,
		`idle: target drifted: no program "nobody": its executions stay submitted (the memory engine runs echo, fail, ask, ask-two and steps); inputs fits`,
		`shout: target fits; inputs skipped: its input: program turns the arguments into another engine input, so what runs is not what the inputSchema describes`,
		`gone: target unknown: engine "down" did not answer: memory: engine unavailable: the engine is closed, or was opened unavailable; inputs unknown: not checked: the target check failed`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !reports[1].Target.Warning || reports[0].Inputs.Samples != 2 {
		t.Errorf("idle's target is a warning: %v; echo's inputs read: %d, want 2", reports[1].Target.Warning, reports[0].Inputs.Samples)
	}
	off := drift.NewChecker(svc, 0).Tool(t.Context(), reports[0].Tool)
	if off.Inputs.State != drift.Skipped || off.Inputs.Why != "the inputs check is off (0 samples)" {
		t.Errorf("with 0 samples: %+v", off.Inputs)
	}
}

// TestSiblingsExplainTheirInputs: an input of the target that fits another tool of it is that
// tool's, not drift of this one.
func TestSiblingsExplainTheirInputs(t *testing.T) {
	svc, mem := serviceOf(t, `
engines:
  mem: {memory: {}}
tools:
  - name: quick
    description: Echoes soon.
    engine: mem
    job: {program: echo}
    inputSchema:
      type: object
      required: [text]
      additionalProperties: false
      properties: {text: {type: string}, seconds: {type: number, maximum: 5}}
  - name: slow
    description: Echoes late.
    engine: mem
    job: {program: echo}
    inputSchema:
      type: object
      required: [text, seconds]
      additionalProperties: false
      properties: {text: {type: string}, seconds: {type: number}}
`)
	start(t, mem, "echo", `{"seconds": 90}`, `{"seconds": 1, "text": "b"}`, `{"seconds": 60, "text": "a"}`)
	var got []string
	for _, r := range drift.NewChecker(svc, 3).All(t.Context()) {
		got = append(got, r.Tool.Name+": "+r.Inputs.Summary())
	}
	want := []string{
		`quick: drifted: field "seconds" breaks the inputSchema in 1 of 2 recent inputs: must be at most 5; field "text" is required by the inputSchema, but 1 of 2 recent inputs lack it`,
		`slow: drifted: field "text" is required by the inputSchema, but 1 of 3 recent inputs lack it`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMonitor: a monitor keeps the latest reports and the last answers, logs each change of
// state once, and says what it found for /readyz.
func TestMonitor(t *testing.T) {
	svc, mem := service(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	m := drift.NewMonitor(drift.NewChecker(svc, 20), 0, log)
	if d := m.Detail(); d != "" {
		t.Errorf("detail before a check: %q", d)
	}
	start(t, mem, "echo", `{"text": "a"}`)
	m.CheckNow(t.Context())
	m.CheckNow(t.Context())
	start(t, mem, "echo", `{"seconds": 1}`)
	m.CheckNow(t.Context())

	wantLogs := `level=WARN msg="drift check: drifted" tool=idle check=target was=unchecked detail="drifted: no program \"nobody\": its executions stay submitted (the memory engine runs echo, fail, ask, ask-two and steps)"
level=WARN msg="drift check: unknown" tool=gone check=target was=unchecked detail="unknown: engine \"down\" did not answer: memory: engine unavailable: the engine is closed, or was opened unavailable"
level=WARN msg="drift check: unknown" tool=gone check=inputs was=unchecked detail="unknown: not checked: the target check failed"
level=WARN msg="drift check: drifted" tool=echo check=inputs was=fits detail="drifted: field \"text\" is required by the inputSchema, but 1 of 2 recent inputs lack it"
`
	if logs.String() != wantLogs {
		t.Errorf("logs:\n%s\nwant:\n%s", &logs, wantLogs)
	}
	var answers []string
	for _, a := range m.Answers() {
		answers = append(answers, a.Tool+" "+a.Check+" "+map[bool]string{true: "drifted", false: "fits"}[a.Drifted])
	}
	if got := strings.Join(answers, ", "); got != "echo target fits, echo inputs drifted, idle target drifted, idle inputs fits, shout target fits" {
		t.Errorf("answers: %s", got)
	}
	detail := m.Detail()
	for _, line := range []string{
		"drift: 2 of 4 tools drifted, checked ",
		`drift: tool "echo": target fits; inputs drifted: field "text" is required by the inputSchema, but 1 of 2 recent inputs lack it` + "\n",
		`drift: tool "shout": target fits; inputs skipped: its input: program`,
		`drift: tool "idle": target drifted (the server's log says why); inputs fits` + "\n",
		`drift: tool "gone": target unknown: not checked (the server's log says why); inputs unknown: not checked (the server's log says why)` + "\n",
	} {
		if !strings.Contains(detail, line) {
			t.Errorf("detail:\n%s\nwant a line with %q", detail, line)
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m.CheckNow(ctx)
	if got := m.Reports(); len(got) != 4 || got[0].Inputs.State != drift.Drifted {
		t.Errorf("a check cut short replaced the reports: %+v", got)
	}
}
