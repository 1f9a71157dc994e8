package restate_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mayName are the parts of the repository that may name Restate, and why. Everything else (the
// engine contract, the mapping loader, the MCP server, the command line) talks to engines through
// adapters only: a third engine is this package and its registration.
var mayName = map[string]string{
	"adapters/restate/":                "the driver",
	"adapters/builtin/":                "the registration of the drivers the taskgate command is built with",
	"mapping/schema.json":              "generated from the builtin drivers' schemas (go test ./adapters/builtin -update)",
	"examples/":                        "the example deployments and mappings",
	"scripts/":                         "what starts the engines for the tests",
	"internal/testenv/":                "the addresses of the engines the tests run against",
	"test/":                            "what checks taskgate from outside, on every engine",
	"docs/":                            "the documentation",
	"terraform/":                       "the deployment modules, which point taskgate at an engine",
	"cmd/taskgate/dev.go":              "dev's --restate flag",
	"cmd/taskgate/dev_restate.go":      "what dev --restate runs",
	"cmd/taskgate/dev_restate_test.go": "its tests",
	"go.mod":                           "the Restate SDK the examples and the handler package use",
	"go.sum":                           "the same",
	"README.md":                        "the front page, which lists the engines",
	"CHANGELOG.md":                     "the changes, in the words of a user",
}

// TestNoOtherPackageNamesRestate: outside the places above, no file of the repository names the
// engine.
func TestNoOtherPackageNamesRestate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root is not two folders up: %v", err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		switch {
		case d.Name() == ".git" && d.IsDir(), d.Name() == "node_modules", d.IsDir() && allowed(rel+"/"):
			return filepath.SkipDir
		case d.IsDir(), d.Name() == ".git", allowed(rel): // a worktree's .git is a file
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(bytes.ToLower(b), []byte("restate")) {
			t.Errorf("%s names Restate: only the driver's package and what mayName lists may", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowed(rel string) bool {
	for p := range mayName {
		if rel == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p)) {
			return true
		}
	}
	return false
}
