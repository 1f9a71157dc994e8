package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

func newValidateCmd() *cobra.Command {
	var withEngines bool
	cmd := &cobra.Command{
		Use:   "validate [--engines] FILE_OR_DIR...",
		Short: "Check mapping files and list every problem",
		Long: `Checks mapping files (a folder: its *.yaml and *.yml files) as serve reads them, with the
environment variables they use, and lists every problem as file:line:col: message (hint): that
the files they name can be read (TLS certificates and keys, OAuth public keys) and the variables
they name are set (API keys), here, as serve will need them.
--engines also connects to each engine and checks every tool's target as serve does at startup
(that it exists, and what its engine says about it: a task queue no worker polls, a state
machine that can only back a tool that waits).
Exit status: 0 valid, 1 problems found, 2 usage error.`,
		Args: func(cmd *cobra.Command, paths []string) error {
			if len(paths) == 0 {
				return usageError{"validate needs mapping files, or folders of them\n\nUsage:\n  " + cmd.UseLine()}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, paths []string) error {
			stderr := cmd.ErrOrStderr()
			set, err := mapping.Load(paths...)
			if err == nil {
				err = set.CheckNeeds(nil)
			}
			var errs *mapping.Errors
			if errors.As(err, &errs) {
				for _, e := range errs.List {
					fmt.Fprintln(stderr, e)
				}
				return exitError{1}
			}
			if err != nil {
				return err
			}
			warnings, err := checkAuth(set, os.Getenv)
			for _, w := range warnings {
				fmt.Fprintln(stderr, "taskgate: warning:", w)
			}
			if err != nil {
				fmt.Fprintln(stderr, err)
				return exitError{1}
			}
			checked := ""
			if withEngines {
				if err := checkEngines(cmd.Context(), set, stderr); err != nil {
					fmt.Fprintln(stderr, err)
					return exitError{1}
				}
				checked = ", every target checked against its engine"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s, %s in %s%s\n", count(len(set.Tools), "tool"), count(len(set.Engines), "engine"), strings.Join(paths, ", "), checked)
			return nil
		},
	}
	cmd.Flags().BoolVar(&withEngines, "engines", false, "also check every target against its engine")
	return cmd
}

// checkEngines connects to the engines and checks every target, as serve does at startup.
func checkEngines(ctx context.Context, set *mapping.Set, stderr io.Writer) error {
	engines, err := connect(ctx, set, adapters.OpenOptions{}, nil)
	if err != nil {
		return err
	}
	defer closeAll(engines)
	svc, err := newTasks(set, engines, token.Native{Refs: set}, &serverSetup{}, stderr)
	if err != nil {
		return err
	}
	return checkTargets(ctx, svc, stderr)
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
