package memengine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

func init() { adapters.Register("memory", Driver{}) }

// Driver is the "memory" engine kind. Its native task ids are "memory:PROGRAM/ID".
type Driver struct{}

// Info describes the engine block and the job key.
func (Driver) Info() driver.DriverInfo {
	return driver.DriverInfo{
		Title:     "Memory",
		TargetKey: "job",
		Schema: []byte(`{
  "engine": {
    "description": "An engine inside taskgate's own process, for tests: it runs the programs echo, fail, ask, ask-two and steps.",
    "type": "object",
    "additionalProperties": false,
    "properties": {
      "retention": {"description": "How long an ended execution stays readable; without it, as long as the engine.", "$ref": "#/$defs/duration"},
      "unavailable": {"description": "true: every call fails as if the engine's server were down, to see what taskgate does then.", "type": "boolean"}
    }
  },
  "target": {
    "description": "The program to run: echo, fail, ask, ask-two or steps.",
    "type": "object",
    "additionalProperties": false,
    "required": ["program"],
    "properties": {
      "program": {"description": "echo, fail, ask, ask-two, steps, or a program nothing runs.", "type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
      "timeout": {"description": "Ends the execution TIMED_OUT after this long.", "$ref": "#/$defs/duration"}
    }
  }
}`),
		EngineExample: "memory: {}",
		TargetExample: "job: {program: echo}",
	}
}

// config is a decoded engine block.
type config Options

// DecodeEngine reads retention and unavailable, both optional.
func (Driver) DecodeEngine(b driver.Block) driver.EngineConfig {
	var c config
	c.Retention, _ = b.Duration("retention")
	c.Unavailable, _ = b.Bool("unavailable")
	return c
}

// Open starts an empty engine.
func (c config) Open(context.Context, driver.OpenOptions) (driver.Conn, error) {
	return New(Options(c)), nil
}

// DecodeTarget reads job: {program, timeout}.
func (Driver) DecodeTarget(tool driver.Block) driver.Target {
	b, ok := tool.Block("job", "write job: {program: echo}")
	if !ok {
		return driver.Target{}
	}
	var program string
	if p, ok := b.Required("program", "echo or fail"); ok {
		if programRE.MatchString(p) {
			program = p
		} else {
			b.Errorf("program", "lower-case letters, digits and -, like echo", "%q is not a program name", p)
		}
	}
	timeout, _ := b.Duration("timeout")
	return Job(program, timeout)
}

// job is the Spec of a memory target.
type job struct {
	program string
	// timeout ends the job's executions TIMED_OUT; zero never does.
	timeout time.Duration
}

// Job returns the target that runs program, each execution ended TIMED_OUT after timeout when it is
// positive: what DecodeTarget reads from job: {program, timeout}. Its Name is the program.
func Job(program string, timeout time.Duration) driver.Target {
	return driver.Target{Name: program, Spec: job{program: program, timeout: timeout}}
}

const refPrefix = "memory:"

// FormatRef writes r as "memory:PROGRAM/ID".
func (Driver) FormatRef(r driver.Ref) string { return refPrefix + r.ID }

// ParseRef reads "memory:PROGRAM/ID".
func (Driver) ParseRef(id string) (driver.Ref, error) {
	rest, ok := strings.CutPrefix(id, refPrefix)
	program, name, found := strings.Cut(rest, "/")
	if !ok || !found || !programRE.MatchString(program) || name == "" {
		return driver.Ref{}, errors.New("memory: not a memory execution id: want memory:PROGRAM/ID")
	}
	return driver.Ref{ID: rest}, nil
}

var _ driver.Discoverer = Driver{}

// Discover serves `taskgate discover memory`: it drafts a mapping file with one tool per program.
func (Driver) Discover(fs *flag.FlagSet) func(ctx context.Context, w, warn io.Writer) error {
	retention := fs.Duration("retention", 0, "how long ended executions stay readable (default: as long as the engine)")
	return func(_ context.Context, w, warn io.Writer) error {
		block := "{}"
		if *retention > 0 {
			block = fmt.Sprintf("{retention: %s}", *retention)
		}
		fmt.Fprintf(w, "engines:\n  mem:\n    memory: %s\ntools:\n", block)
		for _, p := range []string{Echo, Fail} {
			fmt.Fprintf(w, "  - name: %s\n    description: Runs the program %s.\n    engine: mem\n    job: {program: %s}\n    inputSchema: {type: object}\n", p, p, p)
		}
		fmt.Fprintln(warn, "taskgate: warning: the memory engine forgets every execution when taskgate stops")
		return nil
	}
}
