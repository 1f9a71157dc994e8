package memengine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

func init() { adapters.Register("memory", Driver{}) }

// Driver is the "memory" engine kind. Its native task ids are "memory:PROGRAM/ID".
type Driver struct{}

// Info describes the engine block and the job key.
func (Driver) Info() adapters.DriverInfo {
	return adapters.DriverInfo{
		Title:     "Memory",
		TargetKey: "job",
		Schema: []byte(`{
  "engine": {
    "description": "An engine inside taskgate's own process, for tests: it runs the programs echo and fail.",
    "type": "object",
    "additionalProperties": false,
    "properties": {
      "retention": {"description": "How long an ended execution stays readable; without it, as long as the engine.", "$ref": "#/$defs/duration"}
    }
  },
  "target": {
    "description": "The program to run: echo or fail.",
    "type": "object",
    "additionalProperties": false,
    "required": ["program"],
    "properties": {
      "program": {"description": "echo, fail, or a program nothing runs.", "type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
      "timeout": {"description": "Ends the execution TIMED_OUT after this long.", "$ref": "#/$defs/duration"}
    }
  }
}`),
		EngineExample: "memory: {}",
		TargetExample: "job: {program: echo}",
	}
}

// config is a decoded engine block.
type config struct{ retention time.Duration }

// DecodeEngine reads retention, optional.
func (Driver) DecodeEngine(b adapters.Block) adapters.EngineConfig {
	var c config
	c.retention, _ = b.Duration("retention")
	return c
}

// Open starts an empty engine.
func (c config) Open(context.Context, adapters.OpenOptions) (adapters.Engine, error) {
	return New(c.retention), nil
}

// DecodeTarget reads job: {program, timeout}.
func (Driver) DecodeTarget(tool adapters.Block) adapters.Target {
	var t adapters.Target
	job, ok := tool.Block("job", "write job: {program: echo}")
	if !ok {
		return t
	}
	if p, ok := job.Required("program", "echo or fail"); ok {
		if programRE.MatchString(p) {
			t.Name = p
		} else {
			job.Errorf("program", "lower-case letters, digits and -, like echo", "%q is not a program name", p)
		}
	}
	t.Timeout, _ = job.Duration("timeout")
	return t
}

const refPrefix = "memory:"

// FormatRef is "memory:PROGRAM/ID".
func (Driver) FormatRef(r adapters.Ref) string { return refPrefix + r.ID }

// ParseRef reads "memory:PROGRAM/ID".
func (Driver) ParseRef(id string) (adapters.Ref, error) {
	rest, ok := strings.CutPrefix(id, refPrefix)
	program, name, found := strings.Cut(rest, "/")
	if !ok || !found || !programRE.MatchString(program) || name == "" {
		return adapters.Ref{}, errors.New("memory: not a memory execution id: want memory:PROGRAM/ID")
	}
	return adapters.Ref{ID: rest}, nil
}
