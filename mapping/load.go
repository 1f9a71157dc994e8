package mapping

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/taskgate/taskgate/adapters"
)

// renamedToolKeys says what replaced a tool key of an earlier version of the format.
var renamedToolKeys = map[string]string{
	"invocation": "invocation was replaced by taskSupport: async is taskSupport: required, sync is taskSupport: forbidden",
}

// The defaults of a tool's timings, and the shortest poll interval it may suggest.
const (
	defaultTimeout      = 60 * time.Second
	defaultPollInterval = time.Second
	defaultPollMax      = 30 * time.Second
	defaultPollGrowth   = time.Minute
	defaultTTL          = 24 * time.Hour
	minPollInterval     = 100 * time.Millisecond
)

var (
	engineNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	toolNameRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

const (
	durationHint    = "use a Go duration like 30s, 5m, 24h"
	toolNameHint    = `use 1 to 64 letters, digits, "_", "-" and "."`
	taskSupportHint = "required answers at once with a task; optional runs as a task for clients that take one and waits for the others; forbidden always waits up to timeout"
)

// Load reads mapping files with the process's environment: see Loader.Load.
func Load(paths ...string) (*Set, error) { return Loader{}.Load(paths...) }

// Parse reads one mapping file from memory with the process's environment: see Loader.Parse.
func Parse(name string, src []byte) (*Set, error) { return Loader{}.Parse(name, src) }

// Loader reads mapping files. Engine blocks and tool targets are read by the drivers registered
// with package adapters under the key that names their kind.
type Loader struct {
	// Env is where ${VAR} references are looked up; nil is the process's environment.
	Env adapters.Env
}

// Load reads mapping files. Each path is a file or a folder, whose *.yaml and *.yml files are
// read (not those of its subfolders). Files are read in the order of their paths. Every problem
// of every file is reported: the error is then an *Errors.
func (ld Loader) Load(paths ...string) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("mapping: no paths to load: pass mapping files or folders of them")
	}
	l := ld.newLoader()
	for _, file := range l.files(paths) {
		src, err := os.ReadFile(file)
		if err != nil {
			l.pathError(file, err)
			continue
		}
		l.parse(file, src)
	}
	return l.finish()
}

// Parse reads one mapping file from memory; name is the file name used in messages.
func (ld Loader) Parse(name string, src []byte) (*Set, error) {
	l := ld.newLoader()
	l.parse(name, src)
	return l.finish()
}

type loader struct {
	env     adapters.Env
	drivers []*driverSchema
	errs    []Error
	engines map[string]*engineDef
	tools   []*toolDef
	auth    *Auth
	needs   []need
}

func (ld Loader) newLoader() *loader {
	return &loader{env: ld.Env, drivers: registered(), engines: map[string]*engineDef{}}
}

type engineDef struct {
	engine *Engine
	// driver reads the engine's kind; nil when the block names no kind, or more than one.
	driver *driverSchema
	d      *doc
	at     ast.Node // the name key
}

// toolDef is a tool read from one file, before engines and names across files are checked.
type toolDef struct {
	tool *Tool
	o    *object // the tool mapping, from which its engine's driver reads the target
	path string
	// nameAt is nil when the name is missing or invalid, engineAt when the engine is missing.
	// Like targets, they point at the merge key (<<) when the value comes from elsewhere, since
	// these are checked against other tools and engines.
	nameAt, engineAt ast.Node
	// targets are the target keys (of any driver) that the tool sets.
	targets map[string]ast.Node
}

func (l *loader) files(paths []string) []string {
	var files []string
	for _, p := range paths {
		p = filepath.Clean(p)
		info, err := os.Stat(p)
		if err != nil {
			l.pathError(p, err)
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			l.pathError(p, err)
			continue
		}
		found := false
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(p, e.Name()))
				found = true
			}
		}
		if !found {
			l.errs = append(l.errs, Error{File: p, Msg: "no mapping files (*.yaml, *.yml) in this folder",
				Hint: "add one, or pass the files themselves"})
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

func (l *loader) pathError(path string, err error) {
	e := Error{File: path, Msg: err.Error()}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e.Msg = pe.Err.Error()
	}
	if errors.Is(err, fs.ErrNotExist) {
		e.Msg = "no such file or folder"
		e.Hint = "pass mapping files (.yaml, .yml) or folders of them"
	}
	l.errs = append(l.errs, e)
}

func (l *loader) parse(file string, src []byte) {
	d := &doc{l: l, file: file}
	f, err := parser.ParseBytes(src, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		e := Error{File: file, Line: 1, Col: 1, Msg: "invalid YAML: " + err.Error(), Hint: "check the indentation and quoting"}
		var ye yaml.Error
		if errors.As(err, &ye) {
			e.Msg = "invalid YAML: " + ye.GetMessage()
			if tk := ye.GetToken(); tk != nil {
				e.Line, e.Col = tk.Position.Line, tk.Position.Column
			}
		}
		l.errs = append(l.errs, e)
		return
	}
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if doc.Body != nil {
			bodies = append(bodies, doc.Body)
		}
	}
	switch {
	case len(bodies) == 0:
		l.errs = append(l.errs, Error{File: file, Line: 1, Col: 1, Msg: "the file is empty", Hint: "declare engines:, tools: or both"})
		return
	case len(bodies) > 1:
		d.errorf(bodies[1], "put each document in a file of its own", "a mapping file holds one YAML document, this is a second one")
		return
	}
	d.prepare(bodies[0])
	d.top(bodies[0])
}

// top reads the root mapping of a file.
func (d *doc) top(n ast.Node) {
	root := d.resolve(n)
	if _, ok := root.(*ast.MappingNode); !ok {
		d.errorf(root, "start with engines: or tools:", "a mapping file must be a mapping of engines: and tools:, not %s", kind(root))
		return
	}
	o, ok := d.object(root, "", keysOf(format()), nil)
	if !ok {
		return
	}
	if e, ok := o.m["version"]; ok {
		if v, ok := e.value.(*ast.IntegerNode); !ok || fmt.Sprint(v.Value) != "1" {
			got := e.value.GetToken().Value
			if _, quoted := e.value.(*ast.StringNode); quoted {
				got = strconv.Quote(got)
			}
			d.errorf(e.value, "1 is the only version of the mapping format", "version: must be 1, not %s", got)
		}
	}
	if e, ok := o.m["engines"]; ok {
		d.engines(e)
	}
	if e, ok := o.m["tools"]; ok {
		d.tools(e)
	}
	if e, ok := o.m["auth"]; ok {
		d.auth(e)
	}
}

func (d *doc) engines(e entry) {
	es, ok := d.entries(e.value, e.path)
	if !ok {
		return
	}
	for _, ee := range es {
		if !engineNameRE.MatchString(ee.key) {
			d.errorf(ee.keyAt, `use lower-case letters, digits, "_" and "-", like local or aws-prod`, "engines: %q is not a valid engine name", ee.key)
			continue
		}
		if first, dup := d.l.engines[ee.key]; dup {
			d.errorf(ee.keyAt, "engine names must be unique across all mapping files",
				"engines: engine %q is already defined at %s", ee.key, first.d.at(first.at))
			continue
		}
		d.l.engines[ee.key] = d.engine(ee)
	}
}

// at is "file:line:col" of n, for messages that point at another place.
func (d *doc) at(n ast.Node) string {
	line, col := position(n)
	return fmt.Sprintf("%s:%d:%d", d.file, line, col)
}

// position is where n is in the file.
func (d *doc) position(n ast.Node) Position {
	line, col := position(n)
	return Position{File: d.file, Line: line, Col: col}
}

// engine reads one engine block: its one key names the driver that reads the rest. Even when
// the block has problems, the kind is known when the key is, so that tools can be checked.
func (d *doc) engine(e entry) *engineDef {
	def := &engineDef{engine: &Engine{Name: e.key}, d: d, at: e.keyAt}
	if len(d.l.drivers) == 0 {
		d.errorf(e.value, "this program was built without engine drivers: import some, as the taskgate command imports adapters/builtin",
			"%s: no kind of engine is registered", e.path)
		return def
	}
	names := make([]string, len(d.l.drivers))
	for i, ds := range d.l.drivers {
		names[i] = ds.name
	}
	o, ok := d.object(e.value, e.path, append(slices.Clone(names), "allow", "budget"), nil)
	if !ok {
		return def
	}
	var kinds []entry
	var budget *adapters.Budget
	for _, k := range o.es {
		switch k.key {
		case "allow":
			def.engine.Allow = d.allow(k)
		case "budget":
			if b, ok := d.budget(k); ok {
				budget = &b
			}
		default:
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0 && o.unknown > 0:
		// A mistyped kind, reported with its suggestion: no second error for the same key.
	case len(kinds) == 0:
		var keys, examples []string
		for _, ds := range d.l.drivers {
			keys = append(keys, ds.name+":")
			examples = append(examples, ds.info.EngineExample)
		}
		d.errorf(o.at, "add "+orList(examples), "%s: needs %s", e.path, orList(keys))
	case len(kinds) == 1:
		ds := d.l.drivers[slices.Index(names, kinds[0].key)]
		def.driver, def.engine.Kind = ds, ds.name
		def.engine.Budget = ds.info.Budget
		if budget != nil {
			def.engine.Budget = *budget
		}
		if b, ok := o.block(kinds[0].key, ds.engine, "add "+ds.info.EngineExample); ok {
			def.engine.Config = ds.driver.DecodeEngine(b)
		}
	default:
		d.errorf(kinds[1].keyAt, "an engine block connects to one engine: give each its own engine name",
			"%s: has both %s: and %s:", e.path, kinds[0].key, kinds[1].key)
	}
	return def
}

// orList is "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func (d *doc) tools(e entry) {
	seq, ok := e.value.(*ast.SequenceNode)
	if !ok {
		d.errorf(e.value, "list them: tools: [{name: ..., ...}] or one \"- name: ...\" per tool", "tools: must be a sequence, not %s", kind(e.value))
		return
	}
	for i, item := range seq.Values {
		d.tool(item, fmt.Sprintf("tools[%d]", i))
	}
}

func (d *doc) tool(n ast.Node, path string) {
	keys := defKeys("tool")
	for _, ds := range d.l.drivers {
		keys = append(keys, ds.info.TargetKey)
	}
	o, ok := d.object(n, path, keys, renamedToolKeys)
	if !ok {
		return
	}
	t := &Tool{TaskSupport: TaskRequired}
	def := &toolDef{tool: t, o: o, path: path, targets: map[string]ast.Node{}}
	line, _ := position(o.at)
	t.Source = fmt.Sprintf("%s:%d", d.file, line)

	if name, ne, ok := o.need("name", toolNameHint, false); ok {
		if toolNameRE.MatchString(name) {
			t.Name, def.nameAt = name, ne.at(ne.value)
		} else {
			d.errorf(ne.value, toolNameHint, "%s: %q is not a valid tool name", ne.path, name)
		}
	}
	t.Title, _, _ = o.str("title", false)
	t.Description, _, _ = o.need("description", "say what the tool does: MCP clients show it to the model", false)
	if engine, ee, ok := o.need("engine", "the name of an engine under engines:", false); ok {
		t.Engine, def.engineAt = engine, ee.at(ee.value)
	}
	for _, ds := range d.l.drivers {
		if te, ok := o.m[ds.info.TargetKey]; ok {
			def.targets[ds.info.TargetKey] = te.at(te.keyAt)
			t.TargetAt = d.position(te.at(te.keyAt))
		}
	}
	if ts, te, ok := o.str("taskSupport", false); ok {
		switch t.TaskSupport = TaskSupport(ts); t.TaskSupport {
		case TaskRequired, TaskOptional, TaskForbidden:
		default:
			d.errorf(te.value, taskSupportHint, "%s: %q is not required, optional or forbidden", te.path, ts)
		}
	}
	t.Timeout = o.durationOr("timeout", defaultTimeout, time.Nanosecond, false)
	t.PollInterval = o.durationOr("pollInterval", defaultPollInterval, minPollInterval, false)
	t.PollIntervalMax = o.durationOr("pollIntervalMax", max(defaultPollMax, t.PollInterval), minPollInterval, false)
	if e, set := o.m["pollIntervalMax"]; set && t.PollIntervalMax < t.PollInterval {
		d.errorf(e.value, "the interval grows from pollInterval up to pollIntervalMax; set them equal for a fixed interval",
			"%s: must be at least pollInterval (%s), not %s", e.path, t.PollInterval, t.PollIntervalMax)
	}
	t.PollIntervalGrowsAfter = o.durationOr("pollIntervalGrowsAfter", defaultPollGrowth, time.Nanosecond, false)
	t.MaxStaleness = o.durationOr("maxStaleness", 0, minPollInterval, false)
	t.TTL = o.durationOr("ttl", defaultTTL, time.Nanosecond, true)
	if se, present := o.m["inputSchema"]; present {
		t.InputSchemaAt = d.position(se.at(se.keyAt))
		t.InputSchema, t.inputSchema = d.schema(se)
	} else {
		d.errorf(o.at, "a JSON Schema of the arguments, at least {type: object}", "%s: missing required key %q", path, "inputSchema")
	}
	if se, present := o.m["outputSchema"]; present {
		t.OutputSchema, t.outputSchema = d.schema(se)
	}
	if te, present := o.m["input"]; present {
		t.Input = d.transform(te)
	}
	if te, present := o.m["result"]; present {
		t.Result = d.transform(te)
	}
	if te, present := o.m["text"]; present {
		t.Text = d.transform(te)
	}
	if ae, present := o.m["allow"]; present {
		t.Allow = d.allow(ae)
	}
	if ae, present := o.m["ask"]; present {
		t.Ask = d.ask(ae)
	}
	if pe, present := o.m["protocolErrors"]; present {
		t.ProtocolErrors = d.stringList(pe, "the failure types that are protocol errors, like [Internal.Crash, Example.Failure]")
	}
	d.l.tools = append(d.l.tools, def)
}

// finish checks what spans files (tool names, engines) and builds the Set.
func (l *loader) finish() (*Set, error) {
	s := &Set{Engines: map[string]*Engine{}, byName: map[string]*Tool{}, Auth: l.auth, needs: l.needs}
	for name, e := range l.engines {
		s.Engines[name] = e.engine
	}
	first := map[string]*toolDef{}
	for _, def := range l.tools {
		t := def.tool
		if def.nameAt != nil {
			if f, dup := first[t.Name]; dup {
				def.o.d.errorf(def.nameAt, "tool names must be unique across all mapping files",
					"%s.name: tool %q is already defined at %s", def.path, t.Name, f.o.d.at(f.nameAt))
			} else {
				first[t.Name] = def
				s.byName[t.Name] = t
			}
		}
		if e, ok := l.engines[t.Engine]; ok && t.Allow == nil {
			t.Allow = e.engine.Allow
		}
		l.target(def)
		s.Tools = append(s.Tools, t)
	}
	if len(l.errs) > 0 {
		// A value read twice (a schema is checked, then converted) may report twice.
		errs := &Errors{}
		seen := map[Error]bool{}
		for _, e := range l.errs {
			if !seen[e] {
				seen[e] = true
				errs.List = append(errs.List, e)
			}
		}
		errs.sort()
		return nil, errs
	}
	return s, nil
}

// target checks the tool against its engine, and has the engine's driver read its Target.
func (l *loader) target(def *toolDef) {
	d, t := def.o.d, def.tool
	if def.engineAt == nil {
		return
	}
	e, ok := l.engines[t.Engine]
	if !ok {
		names := slices.Sorted(maps.Keys(l.engines))
		hint := "no engines are defined: add one under engines:"
		if len(names) > 0 {
			hint = "known engines: " + strings.Join(names, ", ")
			if c := closest(t.Engine, names); c != "" {
				hint = fmt.Sprintf("did you mean %q? %s", c, hint)
			}
		}
		d.errorf(def.engineAt, hint, "%s.engine: no engine named %q", def.path, t.Engine)
		return
	}
	ds := e.driver
	if ds == nil { // the block's kind is unclear, as reported there
		return
	}
	for _, other := range l.drivers {
		if at, set := def.targets[other.info.TargetKey]; set && other != ds {
			d.errorf(at, fmt.Sprintf("%s engines take %s", ds.info.Title, ds.info.TargetExample),
				"%s.%s: engine %q is %s, not %s", def.path, other.info.TargetKey, t.Engine, ds.info.Title, other.info.Title)
		}
	}
	if _, set := def.targets[ds.info.TargetKey]; !set {
		d.errorf(def.o.at, "add "+ds.info.TargetExample,
			"%s: missing required key %q: engine %q is %s", def.path, ds.info.TargetKey, t.Engine, ds.info.Title)
		return
	}
	schema := map[string]any{"properties": map[string]any{ds.info.TargetKey: ds.target}}
	t.Target = ds.driver.DecodeTarget(&block{o: def.o, schema: schema})
	t.driver = ds.driver
}

// suggest is a "did you mean" hint when s looks like a typo of one of the candidates, else
// otherwise.
func suggest(s string, candidates []string, otherwise string) string {
	if c := closest(s, candidates); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	return otherwise
}

// closest is the candidate that s is likely a typo of, or "".
func closest(s string, candidates []string) string {
	norm := strings.NewReplacer("_", "", "-", "")
	best, bestDist := "", 3
	for _, c := range candidates {
		if strings.EqualFold(norm.Replace(c), norm.Replace(s)) {
			return c
		}
		if d := editDistance(s, c); d < bestDist && d < len(c)/2+1 {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
