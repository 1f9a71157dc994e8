// Package drift tells, tool by tool, whether the engines still run what the mapping says: that
// each target still exists and can be served (the engine's own check), and that the inputs of its
// latest executions still fit the tool's inputSchema. validate --engines runs the checks once;
// serve repeats them (Monitor) and reports each tool's state in metrics and readiness.
package drift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// State is what one check of one tool found.
type State int

const (
	// Unchecked: not checked yet.
	Unchecked State = iota
	// Fits: the engine runs what the mapping says.
	Fits
	// Drifted: it no longer does; the Check says how.
	Drifted
	// Skipped: this check does not apply to the tool; Why says why.
	Skipped
	// Unknown: the check could not be made (the engine did not answer); Why says why.
	Unknown
)

var stateNames = map[State]string{Unchecked: "unchecked", Fits: "fits", Drifted: "drifted", Skipped: "skipped", Unknown: "unknown"}

func (s State) String() string { return stateNames[s] }

// MarshalText writes the state's name, for the JSON form of a report.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// The checks of a tool, as metrics and reports name them.
const (
	TargetCheck = "target"
	InputsCheck = "inputs"
)

// Check is the result of one check of one tool.
type Check struct {
	State State `json:"state"`
	// Why says why it drifted, was skipped or could not be made, in the engine's or the mapping's
	// words; empty when it fits.
	Why string `json:"why,omitempty"`
	// Warning marks a target that drifted as far as the engine only warns (a task queue no
	// worker polls: workers may start after taskgate).
	Warning bool `json:"warning,omitempty"`
	// Samples is how many recent inputs the inputs check read; Findings how they leave the
	// inputSchema.
	Samples  int                    `json:"samples,omitempty"`
	Findings []mapping.InputFinding `json:"findings,omitempty"`
	// At is when the check was made.
	At time.Time `json:"at"`
}

// Report is both checks of one tool.
type Report struct {
	Tool   *mapping.Tool `json:"-"`
	Target Check         `json:"target"`
	Inputs Check         `json:"inputs"`
}

// Check returns the check named TargetCheck or InputsCheck.
func (r Report) Check(name string) Check {
	if name == TargetCheck {
		return r.Target
	}
	return r.Inputs
}

// Drifted reports whether either check found drift.
func (r Report) Drifted() bool { return r.Target.State == Drifted || r.Inputs.State == Drifted }

// DefaultSamples is how many recent inputs of each target a check reads by default.
const DefaultSamples = 20

// checkTimeout bounds the checks of one tool, waits for the read budget included.
const checkTimeout = time.Minute

// Checker checks the tools of a task service against its engines.
type Checker struct {
	svc *tasks.Service
	// samples is how many recent inputs of each target to read; 0 turns the inputs check off.
	samples int
	now     func() time.Time
}

// NewChecker checks the tools of svc, reading the inputs of samples recent executions of each
// target (0: no inputs check).
func NewChecker(svc *tasks.Service, samples int) *Checker {
	return &Checker{svc: svc, samples: samples, now: time.Now}
}

// All checks every tool, one after the other, in the mapping's order.
func (c *Checker) All(ctx context.Context) []Report {
	tools := c.svc.Mapping().Tools
	reports := make([]Report, 0, len(tools))
	for _, t := range tools {
		reports = append(reports, c.Tool(ctx, t))
	}
	return reports
}

// Tool checks one tool: its target, then the inputs of its latest executions.
func (c *Checker) Tool(ctx context.Context, t *mapping.Tool) Report {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	r := Report{Tool: t, Target: c.target(ctx, t)}
	r.Inputs = c.inputs(ctx, t, r.Target)
	return r
}

// target asks the engine whether the target exists and can be served; what it only warns about
// (no worker polls the queue) is drift too, marked as a warning.
func (c *Checker) target(ctx context.Context, t *mapping.Tool) Check {
	info, err := c.svc.CheckTarget(ctx, t)
	at := c.now()
	var te *tasks.TargetError
	if errors.As(err, &te) {
		err = te.Err // without the tool, which the report names
	}
	switch {
	case errors.Is(err, adapters.ErrUnavailable) || ctx.Err() != nil:
		return Check{State: Unknown, Why: fmt.Sprintf("engine %q did not answer: %v", t.Engine, err), At: at}
	case err != nil:
		return Check{State: Drifted, Why: err.Error(), At: at}
	case len(info.Warnings) > 0:
		return Check{State: Drifted, Why: strings.Join(info.Warnings, "; "), Warning: true, At: at}
	}
	return Check{State: Fits, At: at}
}

// inputs reads the inputs of the target's latest executions and compares them with the
// inputSchema, when the tool hands its arguments on unchanged.
func (c *Checker) inputs(ctx context.Context, t *mapping.Tool, target Check) Check {
	at := c.now()
	if c.samples <= 0 {
		return Check{State: Skipped, Why: "the inputs check is off (0 samples)", At: at}
	}
	if err := t.InputsComparable(); err != nil {
		return Check{State: Skipped, Why: err.Error(), At: at}
	}
	if target.State == Unknown || (target.State == Drifted && !target.Warning) {
		return Check{State: Unknown, Why: "not checked: the target check failed", At: at}
	}
	inputs, err := c.svc.Samples(ctx, t, c.samples)
	at = c.now()
	switch {
	case errors.Is(err, tasks.ErrNoSamples):
		return Check{State: Skipped, Why: err.Error(), At: at}
	case err != nil:
		return Check{State: Unknown, Why: "reading recent inputs: " + err.Error(), At: at}
	}
	findings := t.InputDrift(c.unexplained(t, inputs))
	if len(findings) > 0 {
		return Check{State: Drifted, Samples: len(inputs), Findings: findings, At: at}
	}
	return Check{State: Fits, Samples: len(inputs), At: at}
}

// unexplained leaves out of inputs those that another tool of the same target would have sent:
// its latest executions are all of the target's, whichever tool (or pipeline) started them, and
// an input that fits a sibling's inputSchema is no drift of this tool's.
func (c *Checker) unexplained(t *mapping.Tool, inputs []json.RawMessage) []json.RawMessage {
	var siblings []*mapping.Tool
	for _, s := range c.svc.Mapping().Tools {
		if s != t && s.Engine == t.Engine && s.Target.Name == t.Target.Name && s.InputsComparable() == nil {
			siblings = append(siblings, s)
		}
	}
	if len(siblings) == 0 {
		return inputs
	}
	return slices.DeleteFunc(slices.Clone(inputs), func(in json.RawMessage) bool {
		return len(t.InputDrift([]json.RawMessage{in})) > 0 && slices.ContainsFunc(siblings, func(s *mapping.Tool) bool {
			return len(s.InputDrift([]json.RawMessage{in})) == 0
		})
	})
}

// Summary says in one line what the check found, as /readyz and the log say it.
func (c Check) Summary() string {
	switch c.State {
	case Fits, Unchecked:
		if c.Samples > 0 {
			return fmt.Sprintf("%s (%d recent inputs)", c.State, c.Samples)
		}
		return c.State.String()
	case Drifted:
		if len(c.Findings) > 0 {
			words := make([]string, len(c.Findings))
			for i, f := range c.Findings {
				words[i] = f.String()
			}
			return "drifted: " + strings.Join(words, "; ")
		}
	}
	return c.State.String() + ": " + c.Why
}
