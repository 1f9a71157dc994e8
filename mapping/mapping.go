// Package mapping reads taskgate's mapping files: which MCP tool starts which workflow on which
// engine, with its schemas, transforms and timings. It knows no engine: engine blocks and tool
// targets are read by the drivers registered with package adapters.
package mapping

import (
	"encoding/json"
	"time"

	"github.com/itchyny/gojq"

	"github.com/taskgate/taskgate/adapters"
)

// Set is every tool and engine of one or more mapping files, validated.
type Set struct {
	// Engines by name.
	Engines map[string]*Engine
	// Tools in the order of the files (sorted by path) and of each file.
	Tools []*Tool
	// Auth is how HTTP callers authenticate; nil when no file says.
	Auth   *Auth
	byName map[string]*Tool
	needs  []need
}

// Tool returns the tool of that name.
func (s *Set) Tool(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// FormatRef writes a Ref of the named tool's executions as its engine's own id.
func (s *Set) FormatRef(tool string, r adapters.Ref) string { return s.byName[tool].FormatRef(r) }

// ReadsRef reports whether the driver of some tool's engine reads id as a Ref.
func (s *Set) ReadsRef(id string) bool {
	for _, t := range s.Tools {
		if _, err := t.ParseRef(id); err == nil {
			return true
		}
	}
	return false
}

// Engine is one engine block: a named connection to an engine of the kind its driver reads.
type Engine struct {
	Name string
	// Kind is the name of the engine's driver: the one key of its block.
	Kind string
	// Config is the decoded block, which opens the engine.
	Config adapters.EngineConfig
	// Allow is the default of its tools' Allow.
	Allow *Allow
	// Budget is how fast taskgate may read the engine: the block's budget, else its kind's
	// default (adapters.DriverInfo.Budget). The zero Budget is unlimited.
	Budget adapters.Budget
}

// TaskSupport says whether a call of the tool runs as a task, in the words of MCP 2025-11-25's
// execution.taskSupport.
type TaskSupport string

const (
	// TaskRequired: a call answers at once with a task; clients that cannot take one get what
	// --no-task-clients says.
	TaskRequired TaskSupport = "required"
	// TaskOptional: a call runs as a task for clients that can take one, and waits for the result
	// (up to Tool.Timeout) for the others.
	TaskOptional TaskSupport = "optional"
	// TaskForbidden: a call always waits for the result, up to Tool.Timeout.
	TaskForbidden TaskSupport = "forbidden"
)

// Tool is one MCP tool and the workflow it starts.
type Tool struct {
	Name, Title, Description string
	// Engine is the name of the engine block.
	Engine string
	// Target is what the tool starts on that engine.
	Target      adapters.Target
	TaskSupport TaskSupport
	// Timeout is how long a call that waits for the result waits.
	Timeout time.Duration
	// PollInterval is the polling interval suggested to clients while a task is young: up to the
	// age PollIntervalGrowsAfter. After that the interval grows in proportion to the task's age, up
	// to PollIntervalMax (see PollIntervalAt).
	PollInterval, PollIntervalMax, PollIntervalGrowsAfter time.Duration
	// MaxStaleness, when set, bounds how long one reading of a running execution answers polls;
	// zero: the polling interval at the task's age.
	MaxStaleness time.Duration
	// TTL is how long a task id stays valid after creation (zero: unlimited).
	TTL time.Duration
	// InputSchema and OutputSchema are JSON Schemas as JSON (OutputSchema may be nil).
	InputSchema, OutputSchema json.RawMessage
	// Input turns the arguments into the engine input; nil passes them through.
	Input *Transform
	// Result turns the engine output into the structured result; nil passes it through.
	Result *Transform
	// Text turns the structured result into the text content; nil gives its JSON.
	Text *Transform
	// Ask are the questions the tool asks before it starts.
	Ask []*Question
	// Allow restricts who may use the tool (its own, else its engine's); nil: every caller.
	Allow *Allow
	// ProtocolErrors are the engine failure types (Outcome.Error) that end a task failed with a
	// JSON-RPC error instead of a tool error.
	ProtocolErrors []string
	// Source is where the tool is defined, "file:line".
	Source string
	// InputSchemaAt is where its inputSchema key is, TargetAt its target's key (job:,
	// workflow: ...): where a check against the engine reports what it finds.
	InputSchemaAt, TargetAt Position

	inputSchema, outputSchema *compiled
	driver                    adapters.Driver
}

// Position is a place in a mapping file; Line and Col are 1-based.
type Position struct {
	File      string
	Line, Col int
}

// Problem is a problem found at p, as validate prints it: "file:line:col: msg (hint)".
func (p Position) Problem(msg, hint string) Error {
	return Error{File: p.File, Line: p.Line, Col: p.Col, Msg: msg, Hint: hint}
}

// PollIntervalAt returns the polling interval suggested for a task of this age: PollInterval until
// PollIntervalGrowsAfter, then PollInterval × age / PollIntervalGrowsAfter (with the defaults,
// 1 s for the first minute, then a sixtieth of the age: 2 s at 2 minutes, 10 s at 10 minutes),
// never above PollIntervalMax. A poll at every suggested interval costs a logarithmic number of
// polls in the age until the interval reaches its maximum, then a steady rate.
func (t *Tool) PollIntervalAt(age time.Duration) time.Duration {
	if age <= t.PollIntervalGrowsAfter || t.PollIntervalMax <= t.PollInterval {
		return t.PollInterval
	}
	grown := time.Duration(float64(t.PollInterval) * (float64(age) / float64(t.PollIntervalGrowsAfter)))
	return min(grown.Truncate(time.Millisecond), t.PollIntervalMax)
}

// FreshFor is how long a reading of one of the tool's tasks made at age is good for: the polling
// interval then, at most MaxStaleness. It makes the tool the pace.Curve of its tasks.
func (t *Tool) FreshFor(age time.Duration) time.Duration {
	d := t.PollIntervalAt(age)
	if t.MaxStaleness > 0 {
		d = min(d, t.MaxStaleness)
	}
	return d
}

// FormatRef writes a Ref of the tool's executions as its engine's own id.
func (t *Tool) FormatRef(r adapters.Ref) string { return t.driver.FormatRef(r) }

// ParseRef reads an engine's own id as a Ref of the tool's kind of engine: a candidate that the
// tool's engine may or may not own.
func (t *Tool) ParseRef(id string) (adapters.Ref, error) { return t.driver.ParseRef(id) }

// Transform is a compiled jq program with its source text.
type Transform struct {
	Source string
	code   *gojq.Code
}
