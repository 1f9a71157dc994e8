package restate_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mayName are the parts of the repository that may name Restate, and why. Everything else (the
// engine contract, the mapping loader, the MCP server, the command line) talks to engines through
// adapters only: a third engine is this package and its registration.
var mayName = map[string]string{
	"adapters/restate/":   "the driver",
	"adapters/builtin/":   "the registration of the drivers the taskgate command is built with",
	"mapping/schema.json": "generated from the builtin drivers' schemas (go test ./adapters/builtin -update)",
	"examples/":           "the example deployments and mappings",
	"scripts/":            "what starts the engines for the tests",
	"internal/testenv/":   "the addresses of the engines the tests run against",
	"test/":               "what checks taskgate from outside, on every engine",
	"docs/":               "the documentation",
	"terraform/":          "the deployment modules, which point taskgate at an engine",
	"charts/":             "the Helm chart, which points taskgate at an engine",
	"cmd/taskgate/dev.go": "dev's --restate flag",
	"devenv/":             "the local engines dev starts, a Restate server among them",
	"go.mod":              "the Restate SDK the examples and the handler package use",
	"go.sum":              "the same",
	"README.md":           "the front page, which lists the engines",
	"CHANGELOG.md":        "the changes, in the words of a user",
}

// TestNoOtherPackageNamesRestate: outside the places above, no file of the repository names the
// engine. The repository's files are those git knows or would add: a binary built at the root,
// which .gitignore keeps out, is not one.
func TestNoOtherPackageNamesRestate(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("listing the repository's files with git: %v", err)
	}
	for rel := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if allowed(rel) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("../..", rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(bytes.ToLower(b), []byte("restate")) {
			t.Errorf("%s names Restate: only the driver's package and what mayName lists may", rel)
		}
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
