package driver_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNothingOfTaskgate: the contract of drivers is the lowest part of the engines' layer
// (docs/architecture.md): it imports no package of taskgate's, package adapters least of all,
// so that adapters and every driver can import it.
func TestImportsNothingOfTaskgate(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, "github.com/taskgate/taskgate/") {
				t.Errorf("%s imports %s: the driver contract imports nothing of taskgate's", file, path)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no source file of the package found")
	}
}
