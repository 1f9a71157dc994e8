package mapping

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
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

// objectKeys are the keys that each kind of mapping in a mapping file accepts. schema.json
// declares the same keys under the same names (the root is "file"); a test keeps them equal.
var objectKeys = map[string][]string{
	"file":          {"version", "engines", "tools"},
	"engine":        {"temporal", "stepfunctions"},
	"temporal":      {"address", "namespace", "tls", "apiKeyEnv"},
	"tls":           {"caFile", "certFile", "keyFile", "serverName"},
	"stepfunctions": {"region", "endpoint", "roleArn"},
	"tool": {"name", "title", "description", "engine", "workflow", "stateMachine", "taskSupport",
		"timeout", "pollInterval", "ttl", "inputSchema", "outputSchema", "input", "result", "text",
		"protocolErrors"},
	"workflow": {"type", "taskQueue", "executionTimeout"},
}

// renamedKeys says, by kind.key, what replaced a key of an earlier version of the format.
var renamedKeys = map[string]string{
	"tool.invocation": "invocation was replaced by taskSupport: async is taskSupport: required, sync is taskSupport: forbidden",
}

// The defaults of a tool's timings, and the shortest poll interval it may suggest.
const (
	defaultTimeout      = 60 * time.Second
	defaultPollInterval = 2 * time.Second
	defaultTTL          = 24 * time.Hour
	minPollInterval     = 100 * time.Millisecond
)

var (
	engineNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	toolNameRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	regionRE     = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	roleARNRE    = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$`)
	// State machine names are 1-80 characters with no white space, brackets, wildcards or any of
	// "#%\^|~`$&,;:/ (the AWS rule); alias and version qualifiers are plainer.
	stateMachineARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[^\s<>{}\[\]?*"#%\\^|~` + "`" + `$&,;:/]{1,80}(:[A-Za-z0-9_-]{1,80})?$`)
)

const (
	durationHint     = "use a Go duration like 30s, 5m, 24h"
	toolNameHint     = `use 1 to 64 letters, digits, "_", "-" and "."`
	stateMachineHint = "like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it"
	addressHint      = "the Temporal frontend as host:port, like 127.0.0.1:7233"
	taskSupportHint  = "required answers at once with a task; optional runs as a task for clients that take one and waits for the others; forbidden always waits up to timeout"
)

// Load reads mapping files. Each path is a file or a folder, whose *.yaml and *.yml files are
// read (not those of its subfolders). Files are read in the order of their paths. Every problem
// of every file is reported: the error is then an *Errors.
func Load(paths ...string) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("mapping: no paths to load: pass mapping files or folders of them")
	}
	l := newLoader()
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
func Parse(name string, src []byte) (*Set, error) {
	l := newLoader()
	l.parse(name, src)
	return l.finish()
}

type loader struct {
	errs    []Error
	engines map[string]*engineDef
	tools   []*toolDef
}

func newLoader() *loader {
	return &loader{engines: map[string]*engineDef{}}
}

type engineDef struct {
	engine *Engine
	d      *doc
	at     ast.Node // the name key
}

// toolDef is a tool read from one file, before engines and names across files are checked.
type toolDef struct {
	tool   *Tool
	d      *doc
	at     ast.Node // the tool mapping
	path   string
	nameAt ast.Node // nil when the name is missing or invalid
	// engineAt is nil when the engine is missing.
	engineAt ast.Node
	// workflowAt and stateMachineAt are the keys, when present. Like nameAt and engineAt, they
	// point at the merge key (<<) when the value comes from elsewhere, since these are checked
	// against other tools and engines.
	workflowAt, stateMachineAt ast.Node
	workflow                   adapters.Target
	stateMachine               string
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
	o, ok := d.object(root, "file", "")
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
}

// object is a mapping whose keys were checked against objectKeys.
type object struct {
	d    *doc
	at   ast.Node
	path string
	m    map[string]entry
}

func (d *doc) object(n ast.Node, kindName, path string) (*object, bool) {
	es, ok := d.entries(n, path)
	if !ok {
		return nil, false
	}
	allowed := objectKeys[kindName]
	o := &object{d: d, at: d.resolve(n), path: path, m: map[string]entry{}}
	for _, e := range es {
		if !slices.Contains(allowed, e.key) {
			hint, moved := renamedKeys[kindName+"."+e.key]
			if !moved {
				hint = suggest(e.key, allowed, "known keys: "+strings.Join(allowed, ", "))
			}
			d.errorf(e.keyAt, hint, "%sunknown key %q", prefix(path), e.key)
			continue
		}
		o.m[e.key] = e
	}
	return o, true
}

// str reads an optional string, with environment references expanded when expand is set. ok is
// false when the key is absent or its value is wrong (which is reported).
func (o *object) str(key string, expand bool) (s string, e entry, ok bool) {
	e, ok = o.m[key]
	if !ok {
		return "", e, false
	}
	if s, ok = o.d.str(e.value, e.path); !ok {
		return "", e, false
	}
	if expand {
		var ee *envError
		if s, ee = expandEnv(s); ee != nil {
			o.d.errorf(e.value, ee.hint, "%s: %s", e.path, ee.msg)
			return "", e, false
		}
	}
	return s, e, true
}

// need reads a string that must be present and not empty; hint says what to write.
func (o *object) need(key, hint string, expand bool) (string, entry, bool) {
	if _, present := o.m[key]; !present {
		o.d.errorf(o.at, hint, "%smissing required key %q", prefix(o.path), key)
		return "", entry{}, false
	}
	s, e, ok := o.str(key, expand)
	if ok && strings.TrimSpace(s) == "" {
		o.d.errorf(e.value, hint, "%s: is empty", e.path)
		return "", e, false
	}
	return s, e, ok
}

// duration reads an optional Go duration of at least least; def when absent. With unlimited set,
// the word unlimited stands for 0.
func (o *object) duration(key string, def, least time.Duration, expand, unlimited bool) time.Duration {
	e, ok := o.m[key]
	if !ok {
		return def
	}
	s, ok := o.d.scalarText(e.value, e.path)
	if !ok {
		return def
	}
	if expand {
		var ee *envError
		if s, ee = expandEnv(s); ee != nil {
			o.d.errorf(e.value, ee.hint, "%s: %s", e.path, ee.msg)
			return def
		}
	}
	hint := durationHint
	if unlimited {
		if s == "unlimited" {
			return 0
		}
		hint += ", or unlimited"
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		o.d.errorf(e.value, hint, "%s: %q is not a duration", e.path, s)
	case v < least && least == time.Nanosecond:
		o.d.errorf(e.value, hint, "%s: must be positive, not %s", e.path, s)
	case v < least:
		o.d.errorf(e.value, hint, "%s: must be at least %s, not %s", e.path, least, s)
	default:
		return v
	}
	return def
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
		d.l.engines[ee.key] = &engineDef{engine: d.engine(ee), d: d, at: ee.keyAt}
	}
}

// at is "file:line:col" of n, for messages that point at another place.
func (d *doc) at(n ast.Node) string {
	line, col := position(n)
	return fmt.Sprintf("%s:%d:%d", d.file, line, col)
}

// engine reads one engine block. Even when the block has problems, the Temporal or
// StepFunctions field says which kind it is (when that is clear) so that tools can be checked.
func (d *doc) engine(e entry) *Engine {
	eng := &Engine{Name: e.key}
	o, ok := d.object(e.value, "engine", e.path)
	if !ok {
		return eng
	}
	t, hasT := o.m["temporal"]
	s, hasS := o.m["stepfunctions"]
	switch {
	case hasT && hasS:
		d.errorf(s.keyAt, "an engine block connects to one engine: give each its own engine name", "%s: has both temporal: and stepfunctions:", e.path)
	case hasT:
		eng.Temporal = d.temporal(t)
	case hasS:
		eng.StepFunctions = d.stepFunctions(s)
	default:
		d.errorf(o.at, "add temporal: {address: ...} or stepfunctions: {region: ...}", "%s: needs temporal: or stepfunctions:", e.path)
	}
	return eng
}

func (d *doc) temporal(e entry) *Temporal {
	t := &Temporal{Namespace: "default"}
	o, ok := d.object(e.value, "temporal", e.path)
	if !ok {
		return t
	}
	if addr, ae, ok := o.need("address", addressHint, true); ok {
		if validHostPort(addr) {
			t.Address = addr
		} else {
			d.errorf(ae.value, addressHint, "%s: %q is not host:port", ae.path, addr)
		}
	}
	if ns, _, ok := o.str("namespace", true); ok && ns != "" {
		t.Namespace = ns
	}
	if te, ok := o.m["tls"]; ok {
		t.TLS = d.tls(te)
	}
	if name, ke, ok := o.str("apiKeyEnv", true); ok && name != "" {
		if envNameRE.MatchString(name) {
			t.APIKeyEnv = name
		} else {
			// The value is not repeated: it may be the key itself.
			d.errorf(ke.value, "like TEMPORAL_API_KEY; the key itself never goes in a mapping file",
				"%s: must be the name of an environment variable", ke.path)
		}
	}
	return t
}

func (d *doc) tls(e entry) *TLS {
	if _, null := e.value.(*ast.NullNode); null {
		d.errorf(e.value, "write tls: {} for TLS with the system's root certificates", "%s: has no value", e.path)
		return nil
	}
	o, ok := d.object(e.value, "tls", e.path)
	if !ok {
		return nil
	}
	t := &TLS{}
	t.CAFile, _, _ = o.str("caFile", true)
	t.CertFile, _, _ = o.str("certFile", true)
	t.KeyFile, _, _ = o.str("keyFile", true)
	t.ServerName, _, _ = o.str("serverName", true)
	if (t.CertFile == "") != (t.KeyFile == "") {
		d.errorf(o.at, "set both for mutual TLS, or neither", "%s: certFile and keyFile go together", e.path)
	}
	return t
}

func (d *doc) stepFunctions(e entry) *StepFunctions {
	s := &StepFunctions{}
	o, ok := d.object(e.value, "stepfunctions", e.path)
	if !ok {
		return s
	}
	const regionHint = "the AWS region of the state machines, like us-east-1"
	if region, re, ok := o.need("region", regionHint, true); ok {
		if regionRE.MatchString(region) {
			s.Region = region
		} else {
			d.errorf(re.value, regionHint, "%s: %q is not an AWS region", re.path, region)
		}
	}
	if endpoint, ee, ok := o.str("endpoint", true); ok && endpoint != "" {
		if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			s.Endpoint = endpoint
		} else {
			d.errorf(ee.value, "like http://127.0.0.1:8083; leave it out to use AWS", "%s: %q is not an http:// or https:// URL", ee.path, endpoint)
		}
	}
	if role, re, ok := o.str("roleArn", true); ok && role != "" {
		if roleARNRE.MatchString(role) {
			s.RoleARN = role
		} else {
			d.errorf(re.value, "like arn:aws:iam::123456789012:role/NAME", "%s: %q is not an IAM role ARN", re.path, role)
		}
	}
	return s
}

func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || strings.ContainsAny(host, " /") {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p > 0 && p < 65536
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
	o, ok := d.object(n, "tool", path)
	if !ok {
		return
	}
	t := &Tool{TaskSupport: TaskRequired}
	def := &toolDef{tool: t, d: d, at: o.at, path: path}
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
	if we, ok := o.m["workflow"]; ok {
		def.workflowAt = we.at(we.keyAt)
		def.workflow = d.workflow(we)
	}
	if arn, se, ok := o.str("stateMachine", true); ok {
		def.stateMachineAt = se.at(se.keyAt)
		if stateMachineARNRE.MatchString(arn) {
			def.stateMachine = arn
		} else {
			d.errorf(se.value, stateMachineHint, "%s: %q is not a state machine ARN", se.path, arn)
		}
	}
	if ts, te, ok := o.str("taskSupport", false); ok {
		switch t.TaskSupport = TaskSupport(ts); t.TaskSupport {
		case TaskRequired, TaskOptional, TaskForbidden:
		default:
			d.errorf(te.value, taskSupportHint, "%s: %q is not required, optional or forbidden", te.path, ts)
		}
	}
	t.Timeout = o.duration("timeout", defaultTimeout, time.Nanosecond, false, false)
	t.PollInterval = o.duration("pollInterval", defaultPollInterval, minPollInterval, false, false)
	t.TTL = o.duration("ttl", defaultTTL, time.Nanosecond, false, true)
	if se, present := o.m["inputSchema"]; present {
		t.InputSchema, t.inputSchema = d.schema(se)
	} else {
		d.errorf(o.at, "a JSON Schema of the arguments, at least {type: object}", "%s: missing required key %q", path, "inputSchema")
	}
	if se, present := o.m["outputSchema"]; present {
		t.OutputSchema, _ = d.schema(se)
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
	if pe, present := o.m["protocolErrors"]; present {
		t.ProtocolErrors = d.stringList(pe, "the failure types that are protocol errors, like [Internal.Crash, States.Runtime]")
	}
	d.l.tools = append(d.l.tools, def)
}

func (d *doc) workflow(e entry) adapters.Target {
	var t adapters.Target
	o, ok := d.object(e.value, "workflow", e.path)
	if !ok {
		return t
	}
	t.Name, _, _ = o.need("type", "the workflow type to start, as its workers register it", true)
	t.Queue, _, _ = o.need("taskQueue", "the task queue that the workflow's workers poll", true)
	t.Timeout = o.duration("executionTimeout", 0, time.Nanosecond, true, false)
	return t
}

// finish checks what spans files (tool names, engines) and builds the Set.
func (l *loader) finish() (*Set, error) {
	s := &Set{Engines: map[string]*Engine{}, byName: map[string]*Tool{}}
	for name, e := range l.engines {
		s.Engines[name] = e.engine
	}
	first := map[string]*toolDef{}
	for _, def := range l.tools {
		t := def.tool
		if def.nameAt != nil {
			if f, dup := first[t.Name]; dup {
				def.d.errorf(def.nameAt, "tool names must be unique across all mapping files",
					"%s.name: tool %q is already defined at %s", def.path, t.Name, f.d.at(f.nameAt))
			} else {
				first[t.Name] = def
				s.byName[t.Name] = t
			}
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

// target checks the tool against its engine and sets its Target.
func (l *loader) target(def *toolDef) {
	d, t := def.d, def.tool
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
	switch eng := e.engine; {
	case eng.Temporal != nil:
		if def.stateMachineAt != nil {
			d.errorf(def.stateMachineAt, "use workflow: {type: ..., taskQueue: ...} for a Temporal engine",
				"%s.stateMachine: engine %q is Temporal, not Step Functions", def.path, t.Engine)
		}
		if def.workflowAt == nil {
			d.errorf(def.at, "add workflow: {type: ..., taskQueue: ...}",
				"%s: missing required key \"workflow\": engine %q is Temporal", def.path, t.Engine)
		}
		t.Target = def.workflow
	case eng.StepFunctions != nil:
		if def.workflowAt != nil {
			d.errorf(def.workflowAt, "use stateMachine: with the state machine ARN for a Step Functions engine",
				"%s.workflow: engine %q is Step Functions, not Temporal", def.path, t.Engine)
		}
		if def.stateMachineAt == nil {
			d.errorf(def.at, stateMachineHint,
				"%s: missing required key \"stateMachine\": engine %q is Step Functions", def.path, t.Engine)
		}
		t.Target = adapters.Target{Name: def.stateMachine}
	}
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
