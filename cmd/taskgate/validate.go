package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/token"
)

const validateUsage = `usage: taskgate validate [--engines] FILE_OR_DIR...

Checks mapping files (a folder: its *.yaml and *.yml files) as serve reads them, with the
environment variables they use, and lists every problem as file:line:col: message (hint).
--engines also connects to each engine and checks every tool's target as serve does at startup
(the workflow's namespace and task queue; the state machine exists and, if Express, backs only
sync tools).
Exit status: 0 valid, 1 problems found, 2 usage error.
`

// runValidate is `taskgate validate`.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	withEngines := fs.Bool("engines", false, "also check every target against its engine")
	fs.Usage = func() { fmt.Fprint(fs.Output(), validateUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	paths := fs.Args()
	if len(paths) == 0 {
		fmt.Fprint(stderr, "taskgate validate: no mapping files given\n\n"+validateUsage)
		return 2
	}
	set, err := mapping.Load(paths...)
	if err != nil {
		var errs *mapping.Errors
		if !errors.As(err, &errs) {
			fmt.Fprintln(stderr, "taskgate validate:", err)
			return 1
		}
		for _, e := range errs.List {
			fmt.Fprintln(stderr, e)
		}
		return 1
	}
	checked := ""
	if *withEngines {
		if err := checkEngines(ctx, set, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		checked = ", every target checked against its engine"
	}
	fmt.Fprintf(stdout, "ok: %s, %s in %s%s\n", count(len(set.Tools), "tool"), count(len(set.Engines), "engine"), strings.Join(paths, ", "), checked)
	return 0
}

// checkEngines connects to the engines and checks every target, as serve does at startup.
func checkEngines(ctx context.Context, set *mapping.Set, stderr io.Writer) error {
	engines, err := connect(ctx, set, adapters.OpenOptions{})
	if err != nil {
		return err
	}
	defer closeAll(engines)
	_, err = newServer(ctx, set, engines, token.Native{Format: set.FormatRef}, mcpserver.NoTaskHandles, stderr)
	return err
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
