package stepfunctions

import (
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Permissioner = Driver{}

// Permissions adds the Step Functions driver's part to `taskgate iam-policy`: the IAM policy of
// taskgate's own identity (StartExecution on the mapped state machines, aliases and versions;
// DescribeExecution, StopExecution and GetExecutionHistory on their executions; what the startup
// check and tasks/list read; the queues and the subscription of engine blocks with events;
// sts:AssumeRole for engine blocks with a roleArn) and one per assumed
// role, as IAMPolicies builds them. The mapping cannot tell an Express state machine from a
// Standard one: --express names those behind tools that wait, to get StartSyncExecution instead.
// --human-input adds what answering a workflow's questions takes (SendTaskSuccess,
// SendTaskFailure).
func (Driver) Permissions(fs *flag.FlagSet) func(uses []driver.EngineUse) ([]driver.Policy, error) {
	var express []string
	fs.Func("express", "an Express state machine `ARN` behind a tool that waits, to get StartSyncExecution instead of StartExecution (repeatable)", func(arn string) error {
		express = append(express, arn)
		return nil
	})
	var humanInput boolValue
	fs.Var(&humanInput, "human-input", "the workflows ask questions that taskgate answers (SendTaskSuccess, SendTaskFailure)")
	return func(uses []driver.EngineUse) ([]driver.Policy, error) {
		return permissions(uses, express, bool(humanInput))
	}
}

// boolValue is a bool flag whose errors say what is wrong with a value, as strconv.ParseBool's
// do (flag.Bool's say "parse error"). Its name ends in Value so that pflag, which taskgate's
// command line is built on, calls its type bool and lists it as one.
type boolValue bool

func (b *boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b = boolValue(v)
	return nil
}

func (b *boolValue) String() string   { return strconv.FormatBool(bool(*b)) }
func (b *boolValue) IsBoolFlag() bool { return true }

// permissions makes the IAM policies of the engines: the one of taskgate's own identity, and one
// per role an engine block assumes.
func permissions(uses []driver.EngineUse, express []string, humanInput bool) ([]driver.Policy, error) {
	var accesses []Access
	for _, u := range uses {
		c, ok := u.Config.(Config)
		if !ok {
			return nil, fmt.Errorf("engine %q: not a Step Functions engine block", u.Name)
		}
		a := Access{RoleARN: c.RoleARN, HumanInput: humanInput}
		if c.Events.TopicARN != "" {
			a.Events = &EventsAccess{TopicARN: c.Events.TopicARN, QueuePrefix: c.Events.QueuePrefix}
		}
		for _, t := range u.Targets {
			m, err := machineOf(t)
			if err != nil {
				return nil, fmt.Errorf("engine %q: %w", u.Name, err)
			}
			if arn := m.String(); slices.Contains(express, arn) {
				a.SyncExpress = append(a.SyncExpress, arn)
			} else {
				a.StateMachines = append(a.StateMachines, arn)
			}
		}
		accesses = append(accesses, a)
	}
	p, err := IAMPolicies(accesses)
	if err != nil {
		return nil, err
	}
	policies := []driver.Policy{{Identity: driver.OwnIdentity, Document: p.Caller.JSON()}}
	for _, r := range p.Roles {
		policies = append(policies, driver.Policy{Identity: r.RoleARN, Document: r.Policy.JSON()})
	}
	return policies, nil
}
