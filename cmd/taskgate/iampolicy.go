package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

func newIAMPolicyCmd() *cobra.Command {
	var configs, syncOnly []string
	var humanInput bool
	cmd := &cobra.Command{
		Use:   "iam-policy --config PATH [--express ARN]... [--human-input]",
		Short: "Print the least-privilege cloud policy the mapping's engines need",
		Long: `Prints, as JSON, the least-privilege policy of each engine kind that has one: for Step Functions,
the IAM policy of taskgate's own identity (StartExecution on the mapped state machines, aliases and
versions; DescribeExecution, StopExecution and GetExecutionHistory on their executions; what the
startup check and tasks/list read; sts:AssumeRole for engine blocks with a roleArn) and one per
assumed role. The mapping cannot tell an Express state machine from a Standard one: name those
behind tools that wait with --express, to get StartSyncExecution instead. --human-input adds what
answering a workflow's questions takes (SendTaskSuccess, SendTaskFailure).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(configs) == 0 {
				return usageError{"iam-policy needs --config PATH (a mapping file or folder)"}
			}
			set, err := mapping.Load(configs...)
			if err != nil {
				return err
			}
			printed := false
			for _, kind := range adapters.Drivers() {
				d, _ := adapters.Lookup(kind)
				p, ok := d.(adapters.Permissioner)
				if !ok {
					continue
				}
				uses := engineUses(set, kind, syncOnly, humanInput)
				if len(uses) == 0 {
					continue
				}
				out, err := p.Permissions(uses)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(out))
				printed = true
			}
			if !printed {
				return fmt.Errorf("no engine of this mapping has a cloud policy to print: iam-policy is for engines such as Step Functions")
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&configs, "config", nil, "mapping file or folder (repeatable)")
	cmd.Flags().StringArrayVar(&syncOnly, "express", nil, "an Express state machine `ARN` behind a tool that waits (repeatable)")
	cmd.Flags().BoolVar(&humanInput, "human-input", false, "the workflows ask questions that taskgate answers")
	return cmd
}

// engineUses lists the engine blocks of one kind that tools use, with their tools' targets.
func engineUses(set *mapping.Set, kind string, syncOnly []string, humanInput bool) []adapters.EngineUse {
	var uses []adapters.EngineUse
	for _, name := range sortedNames(set.Engines) {
		e := set.Engines[name]
		if e.Kind != kind {
			continue
		}
		u := adapters.EngineUse{Name: name, Config: e.Config, SyncOnly: syncOnly, HumanInput: humanInput}
		for _, t := range set.Tools {
			if t.Engine == name {
				u.Targets = append(u.Targets, t.Target)
			}
		}
		if len(u.Targets) > 0 {
			uses = append(uses, u)
		}
	}
	return uses
}

func sortedNames(m map[string]*mapping.Engine) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
