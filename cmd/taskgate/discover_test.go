package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/mapping"
)

// TestDiscover: every driver that drafts mapping files has a discover subcommand with its flags.
func TestDiscover(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"discover", "memory", "--retention", "1h"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("discover memory: exit %d\n%s", code, &stderr)
	}
	set, err := mapping.Parse("draft.yaml", stdout.Bytes())
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, &stdout)
	}
	if len(set.Tools) != 2 || set.Engines["mem"].Kind != "memory" {
		t.Errorf("draft: %d tools, engines %v\n%s", len(set.Tools), set.Engines, &stdout)
	}
	if want := "taskgate: warning: the memory engine forgets every execution when taskgate stops\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", &stderr, want)
	}

	out := filepath.Join(t.TempDir(), "draft.yaml")
	stdout.Reset()
	if code := run(t.Context(), []string{"discover", "memory", "--out", out}, nil, &stdout, &stderr); code != 0 || stdout.Len() > 0 {
		t.Fatalf("discover memory --out: exit %d, stdout %q", code, &stdout)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "program: echo") {
		t.Errorf("--out %s: %q, %v", out, b, err)
	}
}

func TestDiscoverUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuchengine"}, `taskgate: unknown command "nosuchengine" for "taskgate discover"`},
		{nil, "taskgate: discover needs the kind of engine"},
		{[]string{"memory", "--retention", "soon"}, `taskgate: invalid argument "soon" for "--retention" flag: parse error`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), append([]string{"discover"}, c.args...), nil, &stdout, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), c.want) {
			t.Errorf("discover %q: exit %d, want 2; stderr:\n%s\nwant it to start with %s", c.args, code, &stderr, c.want)
		}
	}
}
