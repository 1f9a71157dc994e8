package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/drift"
)

func newValidateCmd() *cobra.Command {
	var withEngines bool
	var samples int
	var format string
	cmd := &cobra.Command{
		Use:   "validate [--engines] FILE_OR_DIR...",
		Short: "Check mapping files and list every problem",
		Long: `Checks mapping files (a folder: its *.yaml and *.yml files) as serve reads them, with the
environment variables they use, and lists every problem as file:line:col: message (hint): that
the files they name can be read (TLS certificates and keys, OAuth public keys) and the variables
they name are set (API keys), here, as serve will need them.
--engines also connects to each engine and checks every tool's target as serve does at startup
(that it exists, and what its engine says about it: a task queue no worker polls, a state
machine that can only back a tool that waits), then reads the inputs of the --samples latest
executions of each target, within its engine block's read budget, and names the fields where
they no longer fit the tool's inputSchema: a field it requires that they lack, a type that
changed, a field it does not allow that they send. Inputs are compared only for a tool that
hands its arguments to the engine unchanged (no input: program); the others are noted.
--format json writes every problem, warning and note as one JSON object on standard output.
Exit status: 0 valid, 1 problems found (or drift), 2 usage error.`,
		Args: func(cmd *cobra.Command, paths []string) error {
			if len(paths) == 0 {
				return usageError{"validate needs mapping files, or folders of them\n\nUsage:\n  " + cmd.UseLine()}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, paths []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Sprintf("--format %q: want text or json", format)}
			}
			if samples < 0 {
				return usageError{fmt.Sprintf("--samples %d: give how many recent inputs of each target to read, or 0 to read none", samples)}
			}
			v := &validation{paths: paths}
			v.check(cmd.Context(), withEngines, samples, cmd.ErrOrStderr())
			return v.finish(format, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&withEngines, "engines", false, "also check every target, and the inputs of its latest executions, against its engine")
	cmd.Flags().IntVar(&samples, "samples", drift.DefaultSamples, "with --engines, how many of each target's latest executions to read the inputs of; 0: none")
	cmd.Flags().StringVar(&format, "format", "text", "how to write the problems: text (file:line:col: message) or json")
	return cmd
}

// Severities of a finding.
const (
	severityError   = "error"
	severityWarning = "warning"
	severityNote    = "note"
)

// finding is one thing validate says: a problem, a warning or a note, at a place in a mapping
// file when it has one.
type finding struct {
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Col      int    `json:"col,omitempty"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	// Tool and Check name what an engine check found it about; Input how recent inputs leave the
	// inputSchema.
	Tool  string                `json:"tool,omitempty"`
	Check string                `json:"check,omitempty"`
	Input *mapping.InputFinding `json:"input,omitempty"`
}

// text writes the finding as validate prints it: "file:line:col: message (hint)"; a warning or a
// note that has no place as taskgate's own.
func (f finding) text() string {
	if f.File == "" {
		if f.Severity == severityError {
			return f.Message
		}
		return "taskgate: " + f.Severity + ": " + f.Message
	}
	msg := f.Message
	if f.Severity != severityError {
		msg = f.Severity + ": " + msg
	}
	return mapping.Error{File: f.File, Line: f.Line, Col: f.Col, Msg: msg, Hint: f.Hint}.Error()
}

// validation is what one run of validate found.
type validation struct {
	paths           []string
	tools, engines  int
	engineChecked   bool
	samples         int
	findings        []finding
	failed, drifted bool
	readingErr      error
}

func (v *validation) add(f finding) {
	v.findings = append(v.findings, f)
	if f.Severity == severityError {
		v.failed = true
	}
}

// check runs the checks, the engines' with withEngines, in the order serve makes them.
func (v *validation) check(ctx context.Context, withEngines bool, samples int, stderr io.Writer) {
	set, err := mapping.Load(v.paths...)
	if err == nil {
		err = set.CheckNeeds(nil)
	}
	var errs *mapping.Errors
	if errors.As(err, &errs) {
		for _, e := range errs.List {
			v.add(finding{File: e.File, Line: e.Line, Col: e.Col, Severity: severityError, Message: e.Msg, Hint: e.Hint})
		}
		return
	}
	if err != nil {
		v.readingErr = err
		return
	}
	v.tools, v.engines = len(set.Tools), len(set.Engines)
	warnings, err := checkAuth(set, os.Getenv)
	for _, w := range warnings {
		v.add(finding{Severity: severityWarning, Message: w})
	}
	if err != nil {
		v.add(finding{Severity: severityError, Message: err.Error()})
		return
	}
	if !withEngines {
		return
	}
	reports, err := checkEngines(ctx, set, samples, stderr)
	if err != nil {
		v.add(finding{Severity: severityError, Message: err.Error()})
		return
	}
	v.engineChecked, v.samples = true, samples
	for _, r := range reports {
		v.addReport(r)
	}
}

// driftHint says what to do about inputs that no longer fit.
const driftHint = "the workflow's input changed: fit the inputSchema to what it takes now, or ask who starts these executions"

// addReport adds what the checks of one tool found: the target's at its key, the inputs' at the
// inputSchema.
func (v *validation) addReport(r drift.Report) {
	t := r.Tool
	at := func(p mapping.Position, severity, check, msg, hint string) finding {
		return finding{File: p.File, Line: p.Line, Col: p.Col, Severity: severity, Message: fmt.Sprintf("tool %q: %s", t.Name, msg),
			Hint: hint, Tool: t.Name, Check: check}
	}
	switch target := r.Target; {
	case target.State == drift.Drifted && target.Warning:
		v.add(at(t.TargetAt, severityWarning, drift.TargetCheck, "target: "+target.Why, ""))
	case target.State == drift.Drifted:
		v.drifted = true
		v.add(at(t.TargetAt, severityError, drift.TargetCheck, "target: "+target.Why, "point the tool at a target its engine serves"))
	case target.State == drift.Unknown:
		v.add(at(t.TargetAt, severityError, drift.TargetCheck, target.Why, ""))
		return // and the inputs were not read
	}
	switch inputs := r.Inputs; inputs.State {
	case drift.Drifted:
		v.drifted = true
		for _, f := range inputs.Findings {
			e := at(t.InputSchemaAt, severityError, drift.InputsCheck, "recent inputs: "+f.String(), driftHint)
			e.Input = &f
			v.add(e)
		}
	case drift.Skipped:
		v.add(at(t.InputSchemaAt, severityNote, drift.InputsCheck, "recent inputs not checked: "+inputs.Why, ""))
	case drift.Unknown:
		v.add(at(t.InputSchemaAt, severityWarning, drift.InputsCheck, "recent inputs not checked: "+inputs.Why, ""))
	}
}

// finish writes what was found in format and says how validate exits.
func (v *validation) finish(format string, stdout, stderr io.Writer) error {
	if v.readingErr != nil {
		return v.readingErr
	}
	ok := ""
	if !v.failed {
		ok = fmt.Sprintf("ok: %s, %s in %s", count(v.tools, "tool"), count(v.engines, "engine"), strings.Join(v.paths, ", "))
		if v.engineChecked {
			ok += ", every target checked against its engine"
			if v.samples > 0 {
				ok += fmt.Sprintf(" with the inputs of its %d latest executions", v.samples)
			}
		}
	}
	if format == "json" {
		out := struct {
			OK       bool      `json:"ok"`
			Drift    bool      `json:"drift"`
			Summary  string    `json:"summary,omitempty"`
			Findings []finding `json:"findings"`
		}{!v.failed, v.drifted, ok, v.findings}
		if out.Findings == nil {
			out.Findings = []finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		for _, f := range v.findings {
			fmt.Fprintln(stderr, f.text())
		}
		if ok != "" {
			fmt.Fprintln(stdout, ok)
		}
	}
	if v.failed {
		return exitError{1}
	}
	return nil
}

// checkEngines connects to the engines, as serve does at startup, and checks every tool's target
// and the inputs of its latest executions. Its task ids are native, since it hands out none, with
// serve's keys (TASKGATE_TOKEN_KEYS): a mapping with auth: needs them to record callers.
func checkEngines(ctx context.Context, set *mapping.Set, samples int, stderr io.Writer) ([]drift.Report, error) {
	tokens, err := codec(set, "native", "", "")
	if err != nil {
		return nil, err
	}
	engines, err := connect(ctx, set, adapters.OpenOptions{}, nil)
	if err != nil {
		return nil, err
	}
	defer closeAll(engines)
	svc, err := newTasks(set, engines, tokens, &serverSetup{}, stderr)
	if err != nil {
		return nil, err
	}
	return drift.NewChecker(svc, samples).All(ctx), nil
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
