package mapping

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/taskgate/taskgate/adapters"
)

// formatSchema is the JSON Schema of what mapping files hold whatever their engines: the file
// and its tools. Schema adds the registered drivers' engine blocks and targets. The keys the
// loader accepts are the properties it declares.
//
//go:embed format.schema.json
var formatSchema []byte

// format is formatSchema parsed once.
var format = sync.OnceValue(func() map[string]any {
	var s map[string]any
	if err := json.Unmarshal(formatSchema, &s); err != nil {
		panic(fmt.Sprintf("mapping: format.schema.json: %v", err)) // embedded: a test reads it too
	}
	return s
})

// driverSchema is a registered driver with its parts of the format parsed.
type driverSchema struct {
	name   string
	driver adapters.Driver
	info   adapters.DriverInfo
	// engine and target are the schemas of an engine block and of a tool's target.
	engine, target map[string]any
}

// registered reads the registered drivers, in the order of their names. A driver whose schema
// is not JSON, or whose target key is a key of every tool, is a bug in that driver: it panics.
func registered() []*driverSchema {
	toolKeys := defKeys("tool")
	var ds []*driverSchema
	for _, name := range adapters.Drivers() {
		d, _ := adapters.Lookup(name)
		info := d.Info()
		var parts struct{ Engine, Target map[string]any }
		if err := json.Unmarshal(info.Schema, &parts); err != nil || parts.Engine == nil || parts.Target == nil {
			panic(fmt.Sprintf("mapping: driver %q: its schema must be a JSON object {\"engine\": SCHEMA, \"target\": SCHEMA} (%v)", name, err))
		}
		if slices.Contains(toolKeys, info.TargetKey) {
			panic(fmt.Sprintf("mapping: driver %q: target key %q is a key of every tool", name, info.TargetKey))
		}
		ds = append(ds, &driverSchema{name: name, driver: d, info: info, engine: parts.Engine, target: parts.Target})
	}
	return ds
}

// jsonObject follows keys down nested JSON objects; nil when one is missing.
func jsonObject(v map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		v, _ = v[k].(map[string]any)
	}
	return v
}

// defKeys lists the properties of the format's definition name ($defs), sorted: the keys a
// mapping may write in such a block.
func defKeys(name string) []string { return keysOf(jsonObject(format(), "$defs", name)) }

// keysOf lists the properties a schema declares, sorted.
func keysOf(schema map[string]any) []string {
	return slices.Sorted(maps.Keys(jsonObject(schema, "properties")))
}

// Schema returns the JSON Schema of mapping files with the engines of the registered drivers, for
// editors and for checks in CI.
func Schema() json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(formatSchema, &s); err != nil {
		panic(err) // format() would have panicked first
	}
	kinds := map[string]any{}
	tool := jsonObject(s, "$defs", "tool")
	props := jsonObject(tool, "properties")
	var targets []any
	for _, d := range registered() {
		kinds[d.name] = d.engine
		props[d.info.TargetKey] = d.target
		targets = append(targets, map[string]any{"required": []any{d.info.TargetKey}})
	}
	var oneKind []any
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		oneKind = append(oneKind, map[string]any{"required": []any{k}})
	}
	kinds["allow"] = map[string]any{"description": "Who may use this engine's tools, unless a tool says otherwise.", "$ref": "#/$defs/allow"}
	kinds["budget"] = map[string]any{"description": "How fast taskgate may read this engine.", "$ref": "#/$defs/budget"}
	jsonObject(s, "$defs")["engine"] = map[string]any{
		"description":          "One engine connection: exactly one key for the kind of engine, and optionally allow and budget.",
		"type":                 "object",
		"additionalProperties": false,
		"minProperties":        1,
		"maxProperties":        3,
		"properties":           kinds,
		"oneOf":                oneKind,
	}
	if len(targets) > 0 {
		tool["oneOf"] = targets // exactly one target, of the kind of the tool's engine
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		panic(err) // decoded from JSON, so it encodes again
	}
	return b.Bytes()
}
