package main

import (
	"flag"
	"os"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

// newDiscoverCmd has a subcommand for every engine driver that drafts mapping files.
func newDiscoverCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "discover ENGINE",
		Short: "Draft a mapping file from what an engine already runs",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{"discover needs the kind of engine\n\n" + cmd.UsageString()}
		},
	}
	for _, name := range adapters.Drivers() {
		d, _ := adapters.Lookup(name)
		if dd, ok := d.(driver.Discoverer); ok {
			cmd.AddCommand(newDiscoverEngineCmd(name, d.Info().Title, dd))
		}
	}
	return cmd
}

func newDiscoverEngineCmd(name, title string, d driver.Discoverer) *cobra.Command {
	fs := flag.NewFlagSet("discover "+name, flag.ContinueOnError)
	draft := d.Discover(fs)
	var out string
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: "Draft a mapping file from what a " + title + " engine runs",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			return draft(cmd.Context(), w, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().AddGoFlagSet(fs)
	cmd.Flags().StringVar(&out, "out", "", "write the draft to this `FILE` instead of standard output")
	return cmd
}
