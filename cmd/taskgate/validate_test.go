package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/internal/testenv"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const validEngines = `engines:
  local:
    memory: {}
`

const validTools = `tools:
  - name: echo
    description: Echoes.
    engine: local
    job: {program: echo}
    inputSchema: {type: object}
  - name: shout
    description: Shouts.
    engine: local
    job: {program: fail}
    inputSchema: {type: object}
`

func TestValidate(t *testing.T) {
	good := writeFiles(t, map[string]string{"engines.yaml": validEngines, "tools.yml": validTools})
	bad := writeFiles(t, map[string]string{
		"a.yaml": validEngines + `tools:
  - name: echo
    description: Echoes.
    engine: locl
    job: {program: echo}
    pollInterval: 10ms
    inputSchema: {type: object}
`,
		"b.yaml": "",
	})
	unserved := writeFiles(t, map[string]string{"tools.yaml": validEngines + `tools:
  - name: idle
    description: Runs a program nothing runs.
    engine: local
    job: {program: nobody}
    inputSchema: {type: object}
`})
	down := writeFiles(t, map[string]string{"tools.yaml": `engines: {local: {memory: {unavailable: true}}}
tools:
  - name: echo
    description: Echoes.
    engine: local
    job: {program: echo}
    inputSchema: {type: object}
`})
	single := writeFiles(t, map[string]string{"one.yaml": validEngines + `tools:
  - name: echo
    description: Echoes.
    engine: local
    job: {program: echo}
    inputSchema: {type: object}
`})

	for _, c := range []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"folder", []string{good}, 0, "ok: 2 tools, 1 engine in " + good + "\n", ""},
		{"files", []string{filepath.Join(good, "tools.yml"), filepath.Join(good, "engines.yaml")}, 0,
			"ok: 2 tools, 1 engine in " + filepath.Join(good, "tools.yml") + ", " + filepath.Join(good, "engines.yaml") + "\n", ""},
		{"one of each", []string{single}, 0, "ok: 1 tool, 1 engine in " + single + "\n", ""},
		{"problems", []string{bad, filepath.Join(bad, "missing.yaml")}, 1, "",
			filepath.Join(bad, "a.yaml") + `:7:13: tools[0].engine: no engine named "locl" (did you mean "local"? known engines: local)
` + filepath.Join(bad, "a.yaml") + `:9:19: tools[0].pollInterval: must be at least 100ms, not 10ms (use a Go duration like 30s, 5m, 24h)
` + filepath.Join(bad, "b.yaml") + `:1:1: the file is empty (declare engines:, tools: or both)
` + filepath.Join(bad, "missing.yaml") + `: no such file or folder (pass mapping files (.yaml, .yml) or folders of them)
`},
		{"no paths", nil, 2, "", "taskgate: validate needs mapping files, or folders of them\n\nUsage:\n  taskgate validate [--engines] FILE_OR_DIR... [flags]\n"},
		{"unknown flag", []string{"-x", good}, 2, "", "taskgate: unknown shorthand flag: 'x' in -x\n"},
		{"engines", []string{"--engines", good}, 0, "ok: 2 tools, 1 engine in " + good + ", every target checked against its engine with the inputs of its 20 latest executions\n", ""},
		{"engines, no inputs", []string{"--engines", "--samples", "0", single}, 0, "ok: 1 tool, 1 engine in " + single + ", every target checked against its engine\n",
			filepath.Join(single, "one.yaml") + `:9:5: note: tool "echo": recent inputs not checked: the inputs check is off (0 samples)` + "\n"},
		{"bad format", []string{"--format", "yaml", good}, 2, "", "taskgate: --format \"yaml\": want text or json\n"},
		{"bad samples", []string{"--engines", "--samples", "-1", good}, 2, "", "taskgate: --samples -1: give how many recent inputs of each target to read, or 0 to read none\n"},
		{"engine warnings", []string{"--engines", unserved}, 0, "ok: 1 tool, 1 engine in " + unserved + ", every target checked against its engine with the inputs of its 20 latest executions\n",
			filepath.Join(unserved, "tools.yaml") + `:8:5: warning: tool "idle": target: no program "nobody": its executions stay submitted (the memory engine runs echo, fail, ask, ask-two and steps)` + "\n"},
		{"engine down", []string{"--engines", down}, 1, "",
			filepath.Join(down, "tools.yaml") + `:6:5: tool "echo": engine "local" did not answer: memory: engine unavailable: the engine is closed, or was opened unavailable` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"validate"}, c.args...), nil, &stdout, &stderr)
			if code != c.code || stdout.String() != c.stdout || stderr.String() != c.stderr {
				t.Errorf("validate %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
					c.args, code, &stdout, &stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
}

// TestValidateChecksWhatServeReads: without --engines, validate checks that the files a mapping
// names can be read (relative to the mapping file) and the variables it names are set, each
// problem at its key, as serve will need them.
func TestValidateChecksWhatServeReads(t *testing.T) {
	dir := writeFiles(t, map[string]string{"tools.yaml": `auth:
  apiKeys:
    - {principal: ci-bot, keyEnv: TASKGATE_TEST_CI_KEY}
engines:
  cloud:
    temporal:
      address: 127.0.0.1:7233
      apiKeyEnv: TASKGATE_TEST_TEMPORAL_KEY
      tls: {caFile: certs/ca.pem, certFile: certs/taskgate.pem, keyFile: certs/taskgate.key}
tools:
  - name: a
    description: A.
    engine: cloud
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`})
	file := filepath.Join(dir, "tools.yaml")
	t.Setenv("TASKGATE_TEST_CI_KEY", "")
	t.Setenv("TASKGATE_TEST_TEMPORAL_KEY", "")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"validate", file}, nil, &stdout, &stderr)
	missing := func(key, name string) string {
		return fmt.Sprintf("%s: engines.cloud.temporal.tls.%s: open %s: no such file or directory (serving reads it: fix the path, which is relative to the mapping file, or put the file there)\n",
			key, name, filepath.Join(dir, "certs", map[string]string{"caFile": "ca.pem", "certFile": "taskgate.pem", "keyFile": "taskgate.key"}[name]))
	}
	want := file + ":3:35: auth.apiKeys[0].keyEnv: $TASKGATE_TEST_CI_KEY is not set (serving reads the secret from it: export it where taskgate runs)\n" +
		file + ":8:18: engines.cloud.temporal.apiKeyEnv: $TASKGATE_TEST_TEMPORAL_KEY is not set (serving reads the secret from it: export it where taskgate runs)\n" +
		missing(file+":9:21", "caFile") + missing(file+":9:45", "certFile") + missing(file+":9:74", "keyFile")
	if code != 1 || stdout.Len() > 0 || stderr.String() != want {
		t.Errorf("validate with nothing there: exit %d, stdout %q\nstderr:\n%s\nwant:\n%s", code, &stdout, &stderr, want)
	}

	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ca.pem", "taskgate.pem", "taskgate.key"} {
		if err := os.WriteFile(filepath.Join(dir, "certs", name), []byte("PEM\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TASKGATE_TEST_CI_KEY", "short")
	t.Setenv("TASKGATE_TEST_TEMPORAL_KEY", "a-temporal-cloud-key")
	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"validate", file}, nil, &stdout, &stderr)
	if want := "auth (" + file + ":1): $TASKGATE_TEST_CI_KEY, the API key of ci-bot, is shorter than 16 characters: serve refuses it; make a longer one (e.g. openssl rand -base64 32)\n"; code != 1 || stderr.String() != want {
		t.Errorf("validate with a short key: exit %d, stderr %q, want %q", code, &stderr, want)
	}
	t.Setenv("TASKGATE_TEST_CI_KEY", "ci-0123456789abcdef0123")
	stdout.Reset()
	stderr.Reset()
	if code := run(t.Context(), []string{"validate", file}, nil, &stdout, &stderr); code != 0 || stdout.String() != "ok: 1 tool, 1 engine in "+file+"\n" {
		t.Errorf("validate with everything there: exit %d, stdout %q, stderr %q", code, &stdout, &stderr)
	}
}

// TestValidateJSON: --format json writes every problem, warning and note as one JSON object on
// standard output, with the same exit status as the text.
func TestValidateJSON(t *testing.T) {
	bad := writeFiles(t, map[string]string{"a.yaml": validEngines + `tools:
  - name: echo
    description: Echoes.
    engine: locl
    job: {program: echo}
    inputSchema: {type: object}
`})
	unserved := writeFiles(t, map[string]string{"tools.yaml": validEngines + `tools:
  - name: idle
    description: Runs a program nothing runs.
    engine: local
    job: {program: nobody}
    inputSchema: {type: object}
    input: '{}'
`})
	file := filepath.Join(unserved, "tools.yaml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{bad}, 1, `{
  "ok": false,
  "drift": false,
  "findings": [
    {
      "file": "` + filepath.Join(bad, "a.yaml") + `",
      "line": 7,
      "col": 13,
      "severity": "error",
      "message": "tools[0].engine: no engine named \"locl\"",
      "hint": "did you mean \"local\"? known engines: local"
    }
  ]
}
`},
		{[]string{"--engines", unserved}, 0, `{
  "ok": true,
  "drift": false,
  "summary": "ok: 1 tool, 1 engine in ` + unserved + `, every target checked against its engine with the inputs of its 20 latest executions",
  "findings": [
    {
      "file": "` + file + `",
      "line": 8,
      "col": 5,
      "severity": "warning",
      "message": "tool \"idle\": target: no program \"nobody\": its executions stay submitted (the memory engine runs echo, fail, ask, ask-two and steps)",
      "tool": "idle",
      "check": "target"
    },
    {
      "file": "` + file + `",
      "line": 9,
      "col": 5,
      "severity": "note",
      "message": "tool \"idle\": recent inputs not checked: its input: program turns the arguments into another engine input, so what runs is not what the inputSchema describes",
      "tool": "idle",
      "check": "inputs"
    }
  ]
}
`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append([]string{"validate", "--format", "json"}, c.args...), nil, &stdout, &stderr)
		if code != c.code || stdout.String() != c.want || stderr.Len() > 0 {
			t.Errorf("validate --format json %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d:\n%s", c.args, code, &stdout, &stderr, c.code, c.want)
		}
	}
}

// TestValidateEnginesWithAuth: validate --engines checks a mapping that authenticates callers
// with the token keys serve takes, from TASKGATE_TOKEN_KEYS, against a real engine; without them
// it says to set them.
func TestValidateEnginesWithAuth(t *testing.T) {
	arn := createPassMachine(t, sfnClient(t))
	file := filepath.Join(writeFiles(t, map[string]string{"tools.yaml": fmt.Sprintf(`auth:
  apiKeys:
    - {principal: ci-bot, keyEnv: TASKGATE_TEST_CI_KEY}
engines:
  aws:
    stepfunctions: {region: us-east-1, endpoint: %q}
tools:
  - name: release
    description: Releases a version.
    engine: aws
    stateMachine: %q
    inputSchema: {type: object}
`, testenv.SFNEndpoint(t), arn)}), "tools.yaml")
	t.Setenv("TASKGATE_TEST_CI_KEY", "ci-0123456789abcdef0123")
	var key, stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"token", "new-key"}, nil, &key, &stderr); code != 0 {
		t.Fatalf("token new-key = %d: %s", code, &stderr)
	}
	t.Setenv("TASKGATE_TOKEN_KEYS", strings.TrimSpace(key.String()))
	code := run(t.Context(), []string{"validate", "--engines", file}, nil, &stdout, &stderr)
	if want := "ok: 1 tool, 1 engine in " + file + ", every target checked against its engine with the inputs of its 20 latest executions\n"; code != 0 || stdout.String() != want || stderr.Len() > 0 {
		t.Errorf("validate --engines with TASKGATE_TOKEN_KEYS set = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and %q", code, &stdout, &stderr, want)
	}

	t.Setenv("TASKGATE_TOKEN_KEYS", "")
	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"validate", "--engines", file}, nil, &stdout, &stderr)
	if want := "tasks: the mapping authenticates callers, so the callers recorded in the engines need a secret: set TASKGATE_TOKEN_KEYS (also with native task ids)\n"; code != 1 || stderr.String() != want {
		t.Errorf("validate --engines without TASKGATE_TOKEN_KEYS = %d\nstderr:\n%s\nwant 1 and %q", code, &stderr, want)
	}
}
