package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
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
		{"engines", []string{"--engines", good}, 0, "ok: 2 tools, 1 engine in " + good + ", every target checked against its engine\n", ""},
		{"engine warnings", []string{"--engines", unserved}, 0, "ok: 1 tool, 1 engine in " + unserved + ", every target checked against its engine\n",
			`taskgate: warning: tool "idle": no program "nobody": its executions stay submitted (the memory engine runs echo, fail, ask, ask-two and steps)` + "\n"},
		{"engine down", []string{"--engines", down}, 1, "",
			`tool "echo" (` + filepath.Join(down, "tools.yaml") + `:3): memory: engine unavailable: the engine is closed, or was opened unavailable` + "\n"},
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
