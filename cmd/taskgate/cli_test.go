package main

import (
	"bytes"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/mcpserver"

	"github.com/spf13/cobra"
)

// TestHelp: --help on every command prints its help on standard output and exits 0.
func TestHelp(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := strings.Fields(cmd.CommandPath())[1:]
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append(path, "--help"), nil, &stdout, &stderr)
		if code != 0 || !strings.Contains(stdout.String(), "Usage:") || stderr.Len() > 0 {
			t.Errorf("taskgate %s --help: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(path, " "), code, &stdout, &stderr)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	root := newRoot()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root)
	for _, want := range []string{"serve", "validate", "call", "discover", "token", "version", "completion", "memory", "new-key", "bash"} {
		if !hasCommand(root, want) {
			t.Errorf("taskgate has no command %q", want)
		}
	}
}

func hasCommand(cmd *cobra.Command, name string) bool {
	if cmd.Name() == name {
		return true
	}
	for _, sub := range cmd.Commands() {
		if hasCommand(sub, name) {
			return true
		}
	}
	return false
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "taskgate: no command given\n\nUsage:\n"},
		{[]string{"serv"}, `taskgate: unknown command "serv"; run taskgate help for the commands`},
		{[]string{"serve"}, "taskgate: serve needs --config PATH (a mapping file or folder)"},
		{[]string{"serve", "--config", "x.yaml"}, "taskgate: serve needs exactly one of --stdio or --http ADDR"},
		{[]string{"serve", "--config", "x.yaml", "--stdio", "--no-task-clients", "never"}, `taskgate: --no-task-clients "never": want handles, wait or hide`},
		{[]string{"serve", "--bogus"}, "taskgate: unknown flag: --bogus"},
		{[]string{"serve", "extra"}, `taskgate: unknown command "extra" for "taskgate serve"`},
		{[]string{"serve", "--config", "x.yaml", "--stdio", "--log-level", "loud"}, `taskgate: --log-level "loud": want debug, info, warn or error`},
		{[]string{"serve", "--config", "x.yaml", "--stdio", "--log-format", "yaml"}, `taskgate: --log-format "yaml": want text or json`},
		{[]string{"serve", "--config", "x.yaml", "--stdio", "--replicas", "0"}, `taskgate: --replicas 0: give the number of taskgate processes that serve these engines, at least 1`},
		{[]string{"serve", "--config", "x.yaml", "--stdio", "--cache-budget", "0"}, `taskgate: --cache-budget 0: give the bytes of readings and outcomes to keep, or -1 to keep none`},
		{[]string{"token"}, "taskgate: token needs a subcommand"},
		{[]string{"token", "new-key", "--id", "not valid!"}, "taskgate: --id: token key 1: want ID:BASE64 with an ID of 1-16 letters, digits or '-'"},
		{[]string{"version", "extra"}, `taskgate: unknown command "extra" for "taskgate version"`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), c.args, nil, &stdout, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), c.want) {
			t.Errorf("taskgate %q: exit %d, want 2\nstderr:\n%s\nwant it to start with:\n%s", c.args, code, &stderr, c.want)
		}
	}
}

// TestFailures: what is not a usage error exits 1.
func TestFailures(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"serve", "--config", "testdata/memory.yaml", "--stdio", "--token-format", "sealed", "--token-keys", "k1:AAAA"}, nil, &stdout, &stderr)
	const want = "taskgate: token key \"k1\": the key is 3 bytes, want 32 (generate one with `taskgate token new-key`)\n"
	if code != 1 || stderr.String() != want {
		t.Errorf("serve with a bad key: exit %d, stderr %q; want 1, %q", code, &stderr, want)
	}
}

func TestTokenNewKey(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"token", "new-key", "--id", "k2"}, nil, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "k2:") {
		t.Errorf("token new-key: exit %d, stdout %q, stderr %q", code, &stdout, &stderr)
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"version"}, nil, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "taskgate "+version+"\ngo1.") {
		t.Errorf("version: exit %d, stdout %q", code, &stdout)
	}
	for _, c := range []struct {
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.3"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"dev", nil, "dev"},
	} {
		if got := moduleVersion(c.stamped, c.bi); got != c.want {
			t.Errorf("moduleVersion(%q, %+v) = %q, want %q", c.stamped, c.bi, got, c.want)
		}
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "451eb97"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	const want = "taskgate dev\ngo1.26.8\nrevision 451eb97 (2026-11-30T12:00:00Z), with uncommitted changes\n"
	if got := versionText(bi); got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	if got := versionText(nil); got != "taskgate dev\n" {
		t.Errorf("versionText without build information = %q", got)
	}
	// MCP clients read the same version in serverInfo.
	if mcpserver.Version != version {
		t.Errorf("serverInfo's version %q, taskgate version %q", mcpserver.Version, version)
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_taskgate", "zsh": "#compdef taskgate", "fish": "complete -c taskgate"} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), []string{"completion", shell}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), want) {
			t.Errorf("completion %s: exit %d, stdout without %q", shell, code, want)
		}
	}
}

// TestDevIsNotShipped: the build that ships has no dev command, and says where it is.
func TestDevIsNotShipped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"dev"}, nil, &stdout, &stderr)
	const want = "taskgate: dev is in the development build only: go run -tags dev ./cmd/taskgate dev (from a clone of taskgate)\n"
	if code != 2 || stderr.String() != want {
		t.Errorf("dev in the shipped build: exit %d, stderr %q; want 2, %q", code, &stderr, want)
	}
}

// TestDevWithoutACacheFolder runs the development build (TestMain's binary).
func TestDevWithoutACacheFolder(t *testing.T) {
	cmd := exec.Command(binary, "dev")
	cmd.Env = append(os.Environ(), "HOME=", "XDG_CACHE_HOME=")
	out, err := cmd.CombinedOutput()
	const want = "taskgate: finding the user's cache folder, where taskgate keeps its tools and dev state: neither $XDG_CACHE_HOME nor $HOME are defined; set XDG_CACHE_HOME or HOME\n"
	if code := cmd.ProcessState.ExitCode(); code != 1 || string(out) != want {
		t.Errorf("dev without HOME: exit %d (%v), output %q; want 1, %q", code, err, out, want)
	}
}
