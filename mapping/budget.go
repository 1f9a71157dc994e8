package mapping

import (
	"math"
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/taskgate/taskgate/adapters"
)

const budgetHint = "budget: {readsPerSecond: 5, burst: 10}, or budget: unlimited"

// budget reads an engine block's read budget: {readsPerSecond: N, burst: M} (burst defaults to a
// second's worth of reads, at least one), or unlimited. ok is false when it is wrong (reported).
func (d *doc) budget(e entry) (b adapters.Budget, ok bool) {
	if s, isString := e.value.(*ast.StringNode); isString && s.Value == "unlimited" {
		return adapters.Budget{}, true
	}
	if _, isMapping := e.value.(*ast.MappingNode); !isMapping {
		d.errorf(e.value, budgetHint, "%s: must be a mapping or unlimited, not %s", e.path, kind(e.value))
		return b, false
	}
	o, ok := d.object(e.value, e.path, defKeys("budget"), nil)
	if !ok {
		return b, false
	}
	re, set := o.m["readsPerSecond"]
	if !set {
		d.errorf(o.at, budgetHint, "%s: missing required key %q", e.path, "readsPerSecond")
		return b, false
	}
	if b.ReadsPerSecond, ok = d.number(re); !ok || b.ReadsPerSecond <= 0 || math.IsInf(b.ReadsPerSecond, 0) {
		d.errorf(re.value, "the reads per second taskgate may make of the engine, like 5 or 0.5; or budget: unlimited",
			"%s: must be a positive number, not %s", re.path, re.value.GetToken().Value)
		return b, false
	}
	b.Burst = max(1, int(math.Round(b.ReadsPerSecond)))
	if be, set := o.m["burst"]; set {
		n, isInt := d.number(be)
		if !isInt || n != math.Trunc(n) || n < 1 || n > math.MaxInt32 {
			d.errorf(be.value, "how many reads may go at once after a quiet spell, like 10",
				"%s: must be a whole number of at least 1, not %s", be.path, be.value.GetToken().Value)
			return b, false
		}
		b.Burst = int(n)
	}
	return b, true
}

// number reads a YAML number; ok is false when the value is something else (not reported).
func (d *doc) number(e entry) (float64, bool) {
	switch v := e.value.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		f, err := strconv.ParseFloat(v.GetToken().Value, 64)
		return f, err == nil
	}
	return 0, false
}
