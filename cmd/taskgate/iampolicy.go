package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/mapping"
)

// permissioner is an engine driver that drafts cloud policies, once it has declared its flags.
type permissioner struct {
	kind, title string
	flags       []string // the flags the driver declared, as the help lists them
	permissions func([]adapters.EngineUse) ([]adapters.Policy, error)
}

// newIAMPolicyCmd prints the policies of every engine driver that drafts them. The drivers declare
// their own flags on the command, for what a mapping cannot tell about their engines.
func newIAMPolicyCmd() *cobra.Command {
	fs := flag.NewFlagSet("iam-policy", flag.ContinueOnError)
	var drivers []permissioner
	for _, kind := range adapters.Drivers() {
		d, _ := adapters.Lookup(kind)
		p, ok := d.(driver.Permissioner)
		if !ok {
			continue
		}
		declared := map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) { declared[f.Name] = true })
		pd := permissioner{kind: kind, title: d.Info().Title, permissions: p.Permissions(fs)}
		fs.VisitAll(func(f *flag.Flag) {
			if !declared[f.Name] {
				arg, _ := flag.UnquoteUsage(f)
				pd.flags = append(pd.flags, strings.TrimSpace("--"+f.Name+" "+arg))
			}
		})
		drivers = append(drivers, pd)
	}

	var configs []string
	var identity string
	cmd := &cobra.Command{
		Use:   "iam-policy --config PATH [--identity NAME]",
		Short: "Print the least-privilege cloud policy the mapping's engines need",
		Long:  iamPolicyLong(drivers),
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(configs) == 0 {
				return usageError{"iam-policy needs --config PATH (a mapping file or folder)"}
			}
			set, err := mapping.Load(configs...)
			if err != nil {
				return err
			}
			var policies []adapters.Policy
			for _, d := range drivers {
				uses := engineUses(set, d.kind)
				if len(uses) == 0 {
					continue
				}
				p, err := d.permissions(uses)
				if err != nil {
					return err
				}
				policies = append(policies, p...)
			}
			if len(policies) == 0 {
				var titles []string
				for _, d := range drivers {
					titles = append(titles, d.title)
				}
				if len(titles) == 0 {
					return fmt.Errorf("no engine of this mapping has a cloud policy to print: no kind of engine taskgate was built with has one")
				}
				return fmt.Errorf("no engine of this mapping has a cloud policy to print: iam-policy is for engines such as %s", strings.Join(titles, ", "))
			}
			out, err := policyDocuments(policies, identity)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&configs, "config", nil, "mapping file or folder (repeatable)")
	cmd.Flags().StringVar(&identity, "identity", "", "print only the policy document of this `NAME`: taskgate (its own identity) or an identity it assumes, like a role ARN")
	fs.VisitAll(func(f *flag.Flag) { // pflag would skip them without a word
		if cmd.Flags().Lookup(f.Name) != nil || f.Name == "help" {
			panic(fmt.Sprintf("iam-policy: an engine driver declares the command's own flag --%s", f.Name))
		}
	})
	cmd.Flags().AddGoFlagSet(fs)
	return cmd
}

// policyDocuments is the document of identity alone, as the cloud's tools take it (aws iam
// put-role-policy --policy-document), or, for no identity, every document by its identity.
func policyDocuments(policies []adapters.Policy, identity string) ([]byte, error) {
	byIdentity := map[string]json.RawMessage{}
	for _, p := range policies {
		byIdentity[p.Identity] = p.Document
	}
	if identity == "" {
		return json.MarshalIndent(byIdentity, "", "  ")
	}
	if doc, ok := byIdentity[identity]; ok {
		return doc, nil
	}
	names := slices.Sorted(maps.Keys(byIdentity))
	return nil, usageError{fmt.Sprintf("--identity %s: the mapping's engines need no policy for it; the identities are %s", identity, strings.Join(names, ", "))}
}

// iamPolicyLong is the help of iam-policy, with the flags that each driver adds.
func iamPolicyLong(drivers []permissioner) string {
	var b strings.Builder
	b.WriteString(`Prints, as JSON, the least-privilege policy of each engine kind that has one: the permissions
taskgate's own identity needs in the engine's cloud to serve the mapping's tools, and those of each
identity that an engine block has taskgate assume, by identity. --identity taskgate prints taskgate's
own policy document alone, as aws iam put-role-policy --policy-document takes it.`)
	var lines []string
	for _, d := range drivers {
		if len(d.flags) > 0 {
			lines = append(lines, "  "+d.title+": "+strings.Join(d.flags, ", "))
		}
	}
	if len(lines) > 0 {
		b.WriteString(" What a mapping cannot tell about its engines\ncomes from flags that their kinds add:\n")
		b.WriteString(strings.Join(lines, "\n"))
	}
	return b.String()
}

// engineUses lists the engine blocks of one kind that tools use, with their tools' targets.
func engineUses(set *mapping.Set, kind string) []adapters.EngineUse {
	var uses []adapters.EngineUse
	for _, name := range slices.Sorted(maps.Keys(set.Engines)) {
		e := set.Engines[name]
		if e.Kind != kind {
			continue
		}
		u := adapters.EngineUse{Name: name, Config: e.Config}
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
