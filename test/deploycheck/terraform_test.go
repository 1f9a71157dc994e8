package deploycheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// What `tofu validate` would check if it could download providers, as far as it can be checked
// without them, and what it does not check at all: documentation.
func TestTerraformVariablesAndOutputs(t *testing.T) {
	mods := loadModules(t)
	for _, dir := range sortedDirs(mods) {
		m := mods[dir]
		for name, v := range m.variables {
			if d, ok := stringAttr(v.Body, "description"); !ok || strings.TrimSpace(d) == "" {
				t.Errorf("%s: variable %q has no description", rng(v.DefRange()), name)
			}
			if _, ok := v.Body.Attributes["type"]; !ok {
				t.Errorf("%s: variable %q has no type", rng(v.DefRange()), name)
			}
		}
		for name, o := range m.outputs {
			if d, ok := stringAttr(o.Body, "description"); !ok || strings.TrimSpace(d) == "" {
				t.Errorf("%s: output %q has no description", rng(o.DefRange()), name)
			}
		}
	}
}

// Every variable and local is used, and every var., local. and module. reference names something
// that exists: a variable, a local, or an output of a module call.
func TestTerraformReferences(t *testing.T) {
	mods := loadModules(t)
	for _, dir := range sortedDirs(mods) {
		m := mods[dir]
		used := map[string]bool{}
		check := func(tr hcl.Traversal) {
			root := tr.RootName()
			var attr string
			if len(tr) > 1 {
				if a, ok := tr[1].(hcl.TraverseAttr); ok {
					attr = a.Name
				}
			}
			switch root {
			case "var":
				used["var."+attr] = true
				if _, ok := m.variables[attr]; !ok {
					t.Errorf("%s: var.%s is not declared in %s", rng(tr.SourceRange()), attr, dir)
				}
			case "local":
				used["local."+attr] = true
				if _, ok := m.locals[attr]; !ok {
					t.Errorf("%s: local.%s is not declared in %s", rng(tr.SourceRange()), attr, dir)
				}
			case "module":
				call, ok := m.modules[attr]
				if !ok {
					t.Errorf("%s: module.%s is not called in %s", rng(tr.SourceRange()), attr, dir)
					return
				}
				target, local := localSource(m, call)
				if !local || len(tr) < 3 {
					return
				}
				out, ok := tr[2].(hcl.TraverseAttr)
				if !ok {
					return // module.x[0] with count: not used here
				}
				if tm := mods[target]; tm != nil {
					if _, ok := tm.outputs[out.Name]; !ok {
						t.Errorf("%s: module.%s.%s: %s has no output %q", rng(tr.SourceRange()), attr, out.Name, target, out.Name)
					}
				}
			}
		}
		for _, b := range m.blocks {
			if b.Type == "variable" {
				continue // a variable used only in its own validation is not used
			}
			walkTraversals(b.Body, check)
		}
		for name, v := range m.variables {
			if !used["var."+name] {
				t.Errorf("%s: variable %q is never used", rng(v.DefRange()), name)
			}
		}
		for name, l := range m.locals {
			if !used["local."+name] {
				t.Errorf("%s: local %q is never used", rng(l.SrcRange), name)
			}
		}
	}
}

// A module call passes only variables the module declares, and every variable it requires.
func TestTerraformModuleCalls(t *testing.T) {
	mods := loadModules(t)
	calls := 0
	for _, dir := range sortedDirs(mods) {
		m := mods[dir]
		for name, call := range m.modules {
			target, local := localSource(m, call)
			if !local {
				t.Errorf("%s: module %q: source is not a path inside this repository", rng(call.DefRange()), name)
				continue
			}
			tm := mods[target]
			if tm == nil {
				t.Errorf("%s: module %q: no module at %s", rng(call.DefRange()), name, target)
				continue
			}
			calls++
			for arg, a := range call.Body.Attributes {
				if slices.Contains(moduleMetaArguments, arg) {
					continue
				}
				if _, ok := tm.variables[arg]; !ok {
					t.Errorf("%s: module %q: %s has no variable %q", rng(a.SrcRange), name, target, arg)
				}
			}
			for vname, v := range tm.variables {
				if _, hasDefault := v.Body.Attributes["default"]; hasDefault {
					continue
				}
				if _, given := call.Body.Attributes[vname]; !given {
					t.Errorf("%s: module %q: required variable %q of %s is not given", rng(call.DefRange()), name, vname, target)
				}
			}
		}
	}
	if calls == 0 {
		t.Error("no module call found: the examples should call the modules")
	}
}

// Every module and example pins the OpenTofu/Terraform version and every provider it uses.
func TestTerraformVersionConstraints(t *testing.T) {
	mods := loadModules(t)
	for _, dir := range sortedDirs(mods) {
		m := mods[dir]
		var tf *hclsyntax.Block
		for _, b := range m.blocks {
			if b.Type == "terraform" {
				tf = b
			}
		}
		if tf == nil {
			t.Errorf("%s: no terraform block", dir)
			continue
		}
		if _, ok := tf.Body.Attributes["required_version"]; !ok {
			t.Errorf("%s: the terraform block has no required_version", dir)
		}
		providers := map[string]bool{}
		for _, b := range tf.Body.Blocks {
			if b.Type != "required_providers" {
				continue
			}
			for name, a := range b.Body.Attributes {
				providers[name] = true
				obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
				hasVersion := false
				if ok {
					for _, item := range obj.Items {
						if k, _ := item.KeyExpr.Value(nil); k.IsKnown() && !k.IsNull() && k.AsString() == "version" {
							hasVersion = true
						}
					}
				}
				if !hasVersion {
					t.Errorf("%s: provider %q has no version constraint", rng(a.SrcRange), name)
				}
			}
		}
		for _, b := range m.blocks {
			if b.Type != "resource" && b.Type != "data" {
				continue
			}
			provider, _, _ := strings.Cut(b.Labels[0], "_")
			if provider == "terraform" {
				continue // built in
			}
			if !providers[provider] {
				t.Errorf("%s: %s %q uses provider %q, which required_providers does not list", rng(b.DefRange()), b.Type, b.Labels[0], provider)
			}
		}
	}
}
