package deploycheck

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// repoRoot is the root of the taskgate repository (this module sits in test/deploycheck).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no repository root at %s: %v", root, err)
	}
	return root
}

// tfModule is one folder of .tf files: a module or an example.
type tfModule struct {
	dir       string // relative to the repository root
	files     map[string]*hclsyntax.Body
	variables map[string]*hclsyntax.Block
	outputs   map[string]*hclsyntax.Block
	locals    map[string]*hclsyntax.Attribute
	modules   map[string]*hclsyntax.Block // module calls
	blocks    []*hclsyntax.Block          // every top-level block, in file order
}

// loadModules parses every .tf file under terraform/, grouped by folder. A parse error fails the
// test.
func loadModules(t *testing.T) map[string]*tfModule {
	t.Helper()
	root := repoRoot(t)
	parser := hclparse.NewParser()
	mods := map[string]*tfModule{}
	err := filepath.WalkDir(filepath.Join(root, "terraform"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir // .terraform and the like
		}
		if d.IsDir() || !strings.HasSuffix(path, ".tf") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		f, diags := parser.ParseHCLFile(path)
		if diags.HasErrors() {
			t.Errorf("%s", diags.Error())
			return nil
		}
		dir := filepath.Dir(rel)
		m := mods[dir]
		if m == nil {
			m = &tfModule{dir: dir, files: map[string]*hclsyntax.Body{}, variables: map[string]*hclsyntax.Block{},
				outputs: map[string]*hclsyntax.Block{}, locals: map[string]*hclsyntax.Attribute{}, modules: map[string]*hclsyntax.Block{}}
			mods[dir] = m
		}
		body := f.Body.(*hclsyntax.Body)
		m.files[rel] = body
		for _, b := range body.Blocks {
			m.blocks = append(m.blocks, b)
			switch b.Type {
			case "variable":
				m.variables[b.Labels[0]] = b
			case "output":
				m.outputs[b.Labels[0]] = b
			case "module":
				m.modules[b.Labels[0]] = b
			case "locals":
				for name, a := range b.Body.Attributes {
					m.locals[name] = a
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Fatal("no .tf file under terraform/")
	}
	return mods
}

func sortedDirs(mods map[string]*tfModule) []string {
	var dirs []string
	for d := range mods {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// walkTraversals calls fn for every variable reference in body, nested blocks included.
func walkTraversals(body *hclsyntax.Body, fn func(hcl.Traversal)) {
	for _, a := range body.Attributes {
		for _, tr := range a.Expr.Variables() {
			fn(tr)
		}
	}
	for _, b := range body.Blocks {
		walkTraversals(b.Body, fn)
	}
}

// stringAttr is the value of a literal string attribute, and whether there is one.
func stringAttr(body *hclsyntax.Body, name string) (string, bool) {
	a, ok := body.Attributes[name]
	if !ok {
		return "", false
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || !v.Type().Equals(cty.String) || v.IsNull() {
		return "", false
	}
	return v.AsString(), true
}

// localSource is the folder a module call's source names, relative to the repository root, if it
// is a local path.
func localSource(m *tfModule, call *hclsyntax.Block) (string, bool) {
	src, ok := stringAttr(call.Body, "source")
	if !ok || !(strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../")) {
		return "", false
	}
	return filepath.Clean(filepath.Join(m.dir, src)), true
}

// moduleMetaArguments are the arguments of a module block that are not the module's variables.
var moduleMetaArguments = []string{"source", "version", "count", "for_each", "providers", "depends_on"}

func rng(r hcl.Range) string {
	return r.Filename[strings.Index(r.Filename, "terraform/"):] + ":" + strconv.Itoa(r.Start.Line)
}
