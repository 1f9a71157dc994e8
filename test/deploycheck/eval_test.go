package deploycheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// evaluator evaluates the expressions of one example folder offline: its variables come from its
// terraform.tfvars.example (or their defaults), and the attributes of resources and data sources,
// which only a real apply knows, from a fixture. An expression that needs anything else fails the
// test, which then says what to add to the fixture.
type evaluator struct {
	t       *testing.T
	mod     *tfModule
	root    string
	vars    map[string]cty.Value
	fixture map[string]cty.Value // "aws_sfn_alias.live.arn" => value
	locals  map[string]cty.Value
	busy    map[string]bool
}

func newEvaluator(t *testing.T, mods map[string]*tfModule, dir string, fixture map[string]cty.Value) *evaluator {
	t.Helper()
	m := mods[dir]
	if m == nil {
		t.Fatalf("no Terraform in %s", dir)
	}
	e := &evaluator{t: t, mod: m, root: repoRoot(t), vars: map[string]cty.Value{}, fixture: fixture,
		locals: map[string]cty.Value{}, busy: map[string]bool{}}

	tfvars := filepath.Join(e.root, dir, "terraform.tfvars.example")
	given := map[string]cty.Value{}
	f, diags := hclparse.NewParser().ParseHCLFile(tfvars)
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Error())
	}
	attrs, diags := f.Body.JustAttributes()
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Error())
	}
	for name, a := range attrs {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("%s", diags.Error())
		}
		if _, ok := m.variables[name]; !ok {
			t.Errorf("%s: %s is not a variable of %s", rng(a.Range), name, dir)
		}
		given[name] = v
	}
	for name, block := range m.variables {
		ty, def, diags := typeexpr.TypeConstraintWithDefaults(block.Body.Attributes["type"].Expr)
		if diags.HasErrors() {
			t.Fatalf("%s", diags.Error())
		}
		v, ok := given[name]
		if !ok {
			d, hasDefault := block.Body.Attributes["default"]
			if !hasDefault {
				if _, sensitive := block.Body.Attributes["sensitive"]; sensitive {
					v = cty.StringVal("sensitive-value-for-" + name) // kept out of the example file
				} else {
					t.Fatalf("%s: variable %q has no default and is not in terraform.tfvars.example", dir, name)
				}
			} else {
				var diags hcl.Diagnostics
				if v, diags = d.Expr.Value(nil); diags.HasErrors() {
					t.Fatalf("%s", diags.Error())
				}
			}
		}
		if def != nil {
			v = def.Apply(v)
		}
		cv, err := convert.Convert(v, ty)
		if err != nil {
			t.Fatalf("%s: variable %q: %v", dir, name, err)
		}
		e.vars[name] = cv
	}
	return e
}

func (e *evaluator) functions(dir string) map[string]function.Function {
	base := filepath.Join(e.root, dir)
	readFile := func(path string) (string, error) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, path)
		}
		b, err := os.ReadFile(path)
		return string(b), err
	}
	fns := map[string]function.Function{
		"abs": stdlib.AbsoluteFunc, "coalesce": stdlib.CoalesceFunc, "compact": stdlib.CompactFunc,
		"concat": stdlib.ConcatFunc, "contains": stdlib.ContainsFunc, "distinct": stdlib.DistinctFunc,
		"flatten": stdlib.FlattenFunc, "format": stdlib.FormatFunc, "join": stdlib.JoinFunc,
		"jsondecode": stdlib.JSONDecodeFunc, "jsonencode": stdlib.JSONEncodeFunc, "keys": stdlib.KeysFunc,
		"length": stdlib.LengthFunc, "lower": stdlib.LowerFunc, "merge": stdlib.MergeFunc,
		"slice": stdlib.SliceFunc, "sort": stdlib.SortFunc, "split": stdlib.SplitFunc, "upper": stdlib.UpperFunc,
		"values": stdlib.ValuesFunc, "try": tryfunc.TryFunc, "can": tryfunc.CanFunc,
		"tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset":  stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
	}
	fns["file"] = function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := readFile(args[0].AsString())
			return cty.StringVal(s), err
		},
	})
	fns["templatefile"] = function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			src, err := readFile(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			tmpl, diags := hclsyntax.ParseTemplate([]byte(src), args[0].AsString(), hcl.InitialPos)
			if diags.HasErrors() {
				return cty.NilVal, diags
			}
			ctx := &hcl.EvalContext{Variables: args[1].AsValueMap(), Functions: fns}
			v, diags := tmpl.Value(ctx)
			if diags.HasErrors() {
				return cty.NilVal, diags
			}
			return v, nil
		},
	})
	return fns
}

// eval evaluates an expression of the example.
func (e *evaluator) eval(expr hcl.Expression) cty.Value {
	e.t.Helper()
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: e.functions(e.mod.dir)}
	ctx.Variables["var"] = cty.ObjectVal(e.vars)
	ctx.Variables["path"] = cty.ObjectVal(map[string]cty.Value{
		"module": cty.StringVal(filepath.Join(e.root, e.mod.dir)), "root": cty.StringVal(filepath.Join(e.root, e.mod.dir)),
	})
	localVals := map[string]cty.Value{}
	fixtures := map[string]any{}
	for _, tr := range expr.Variables() {
		switch tr.RootName() {
		case "var", "path":
		case "local":
			name := tr[1].(hcl.TraverseAttr).Name
			localVals[name] = e.local(name)
		default:
			key := traversalKey(tr)
			v, ok := e.fixture[key]
			if !ok {
				e.t.Fatalf("%s: %s is only known after apply: add it to the example's fixture in the test", rng(tr.SourceRange()), key)
			}
			setPath(fixtures, strings.Split(key, "."), v)
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(localVals)
	for root, v := range fixtures {
		ctx.Variables[root] = toObject(v)
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		e.t.Fatalf("%s", diags.Error())
	}
	return v
}

func (e *evaluator) local(name string) cty.Value {
	if v, ok := e.locals[name]; ok {
		return v
	}
	a, ok := e.mod.locals[name]
	if !ok {
		e.t.Fatalf("local.%s is not declared in %s", name, e.mod.dir)
	}
	if e.busy[name] {
		e.t.Fatalf("local.%s refers to itself", name)
	}
	e.busy[name] = true
	v := e.eval(a.Expr)
	e.locals[name] = v
	return v
}

// traversalKey is a reference as a dotted path: "aws_sfn_alias.live.arn", "data.x.y.z".
func traversalKey(tr hcl.Traversal) string {
	var parts []string
	for _, step := range tr {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			parts = append(parts, s.Name)
		case hcl.TraverseAttr:
			parts = append(parts, s.Name)
		default:
			parts = append(parts, fmt.Sprintf("%v", s))
		}
	}
	return strings.Join(parts, ".")
}

func setPath(m map[string]any, path []string, v cty.Value) {
	if len(path) == 1 {
		m[path[0]] = v
		return
	}
	sub, ok := m[path[0]].(map[string]any)
	if !ok {
		sub = map[string]any{}
		m[path[0]] = sub
	}
	setPath(sub, path[1:], v)
}

func toObject(v any) cty.Value {
	switch v := v.(type) {
	case cty.Value:
		return v
	case map[string]any:
		attrs := map[string]cty.Value{}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			attrs[k] = toObject(v[k])
		}
		return cty.ObjectVal(attrs)
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

// moduleArgs evaluates the arguments of the example's call of a module.
func (e *evaluator) moduleArgs(call string) map[string]cty.Value {
	e.t.Helper()
	block, ok := e.mod.modules[call]
	if !ok {
		e.t.Fatalf("%s calls no module %q", e.mod.dir, call)
	}
	args := map[string]cty.Value{}
	for name, a := range block.Body.Attributes {
		if name == "source" {
			continue
		}
		args[name] = e.eval(a.Expr)
	}
	return args
}

// strings converts a list value to Go strings.
func ctyStrings(t *testing.T, v cty.Value) []string {
	t.Helper()
	if v.IsNull() {
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, s := it.Element()
		out = append(out, s.AsString())
	}
	return out
}
