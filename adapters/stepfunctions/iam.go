package stepfunctions

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Access is what taskgate does with Step Functions through one set of credentials: its own
// (RoleARN empty) or a role it assumes (an engine block's roleArn). IAMPolicies turns a list of
// them into the least-privilege IAM policies those calls need.
type Access struct {
	// RoleARN is the role taskgate assumes to reach these state machines; empty for taskgate's own
	// credentials (the ECS task role, the pod's IRSA role, the instance profile).
	RoleARN string
	// StateMachines are the targets started with StartExecution and then read, polled and stopped
	// (every tool on a Standard state machine, whatever its taskSupport): state machine, version or
	// alias ARNs.
	StateMachines []string
	// SyncExpress are the targets of tools on Express state machines, which taskgate runs with
	// StartSyncExecution and never reads again.
	SyncExpress []string
	// HumanInput: some tool on these state machines answers .waitForTaskToken states, through
	// SendTaskSuccess and SendTaskFailure.
	HumanInput bool
	// Events, when set, is an engine block's event source (its events: block): taskgate makes,
	// reads and deletes queues of its prefix and subscribes them to its topic.
	Events *EventsAccess
}

// EventsAccess is the event source of an engine block, as its IAM policy needs it.
type EventsAccess struct {
	// TopicARN is the SNS topic of Step Functions' status change events (events.topicArn).
	TopicARN string `json:"topicArn"`
	// QueuePrefix starts the names of the queues taskgate makes (events.queuePrefix); empty:
	// DefaultQueuePrefix.
	QueuePrefix string `json:"queuePrefix,omitempty"`
}

// Policy is an IAM policy document. Its JSON is deterministic: statements in a fixed order with
// stable Sids, and every list sorted.
type Policy struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement of a Policy. Action and Resource are always lists.
type Statement struct {
	Sid       string                         `json:"Sid"`
	Effect    string                         `json:"Effect"`
	Action    []string                       `json:"Action"`
	Resource  []string                       `json:"Resource"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

// JSON writes the policy as indented JSON with a final newline, ready for
// `aws iam put-role-policy --policy-document file://...` or a Terraform file() call.
func (p Policy) JSON() []byte {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil { // only strings, lists and maps of them: cannot fail
		panic(err)
	}
	return append(b, '\n')
}

// RolePolicy is the policy an assumed role needs, in its own account.
type RolePolicy struct {
	RoleARN string
	Policy  Policy
}

// Policies are the IAM policies a mapping needs.
type Policies struct {
	// Caller is the policy of taskgate's own identity: the Step Functions calls it makes with its
	// own credentials, and sts:AssumeRole on every role it assumes. It has no statement when
	// taskgate makes no AWS call (a mapping of Temporal workflows only).
	Caller Policy
	// Roles are the policies of the assumed roles, sorted by role ARN. Each role also needs a trust
	// policy that lets the Caller's identity assume it; that is the role owner's to write.
	Roles []RolePolicy
}

const (
	policyVersion = "2012-10-17"
	qualifierKey  = "states:StateMachineQualifier"
)

// machineActions are the Step Functions actions on state machines, in the order of their
// statements.
var machineActions = []string{
	"StartExecution", "StartSyncExecution", "DescribeStateMachine", "DescribeStateMachineAlias", "ListExecutions",
}

// IAMPolicies returns the least-privilege IAM policies for what accesses describe. Accesses with
// the same RoleARN are merged; an access to a role with no state machine is left out.
//
// What taskgate calls, and so what the policies allow (AWS Service Authorization Reference,
// "Actions, resources, and condition keys for AWS Step Functions"):
//
//   - StartExecution (Standard targets) and StartSyncExecution (Express targets). Step Functions
//     authorizes a call on a version or alias ARN against the state machine's own ARN, with the
//     version number or alias name in the condition key states:StateMachineQualifier. So every
//     statement on a state machine names the unqualified ARN: targets used unqualified get a
//     statement with {"Null": {"states:StateMachineQualifier": ["true"]}}, so that it does not also
//     allow every version and alias; qualified targets get
//     {"ForAnyValue:StringEquals": {"states:StateMachineQualifier": [...]}} with exactly the
//     qualifiers used. State machines used with the same qualifiers share a statement.
//   - DescribeStateMachine on every target's state machine without qualifier (taskgate reads the
//     state machine's type) and with the version number of version targets (the startup check
//     describes the version); DescribeStateMachineAlias with the alias name of alias targets.
//   - ListExecutions on Standard targets' state machines without qualifier: tasks/list reads the
//     caller's executions from the state machine's listing.
//   - DescribeExecution, GetExecutionHistory (the cause of a stopped execution) and StopExecution on
//     arn:PARTITION:states:REGION:ACCOUNT:execution:NAME:* for Standard targets: executions started
//     through a version or alias belong to the state machine, so the pattern has no qualifier.
//     Express executions are never read.
//   - SendTaskSuccess and SendTaskFailure only with HumanInput, on "*": they take a task token and
//     support no resource-level permission.
//   - With Events, what the event source does (Notices, Close): on the queues of its
//     prefix, arn:PARTITION:sqs:REGION:ACCOUNT:PREFIX* in the topic's partition and region and the
//     account the queues are made in (the role's, for an assumed role; else the topic's, the
//     account of taskgate's own credentials as Terraform sets it up), CreateQueue (with its tag:
//     TagQueue too), GetQueueAttributes and SetQueueAttributes (the queue's ARN, and its policy
//     that lets only the topic send), ReceiveMessage, DeleteMessage, TagQueue (the renewed
//     expiry), ListQueueTags and DeleteQueue (its own at exit, and the expired queues of replicas
//     that ended without deleting theirs); sqs:ListQueues on "*", which supports no resource-level
//     permission; and sns:Subscribe and sns:Unsubscribe on the topic (SNS authorizes Unsubscribe
//     against the topic of the subscription).
//   - sts:AssumeRole on every role, in the Caller's policy.
//
// Statements come in that order, with Sids named after the action ("StartExecution" for the
// unqualified statement, "StartExecutionQualified1", "...2" for the qualified ones in the order of
// their sorted qualifiers), then "Executions", "HumanInput", "EventQueues", "ListEventQueues",
// "EventSubscriptions" and "AssumeRoles".
//
// The `taskgate iam-policy` command builds one Access per Step Functions engine block of the
// mapping (its roleArn, its tools' targets) and prints Caller.JSON(), or a role's Policy.
func IAMPolicies(accesses []Access) (Policies, error) {
	merged := map[string]*access{}
	for _, a := range accesses {
		if a.RoleARN != "" && !roleARNRE.MatchString(a.RoleARN) {
			return Policies{}, fmt.Errorf("%q is not an IAM role ARN: want arn:PARTITION:iam::ACCOUNT:role/NAME (the engine's roleArn)", a.RoleARN)
		}
		m := merged[a.RoleARN]
		if m == nil {
			m = &access{machines: map[string]*machineUse{}, queues: map[string]bool{}, topics: map[string]bool{}}
			merged[a.RoleARN] = m
		}
		m.humanInput = m.humanInput || a.HumanInput
		if a.Events != nil {
			if err := m.addEvents(a.RoleARN, *a.Events); err != nil {
				return Policies{}, err
			}
		}
		for _, arn := range a.StateMachines {
			if err := m.add(arn, false); err != nil {
				return Policies{}, err
			}
		}
		for _, arn := range a.SyncExpress {
			if err := m.add(arn, true); err != nil {
				return Policies{}, err
			}
		}
	}

	var p Policies
	var roles []string
	for role, m := range merged {
		if role != "" && len(m.machines) > 0 {
			roles = append(roles, role)
		}
	}
	slices.Sort(roles)
	caller := merged[""]
	if caller == nil {
		caller = &access{machines: map[string]*machineUse{}, queues: map[string]bool{}, topics: map[string]bool{}}
	}
	p.Caller = caller.policy()
	if len(roles) > 0 {
		p.Caller.Statement = append(p.Caller.Statement, Statement{
			Sid: "AssumeRoles", Effect: "Allow", Action: []string{"sts:AssumeRole"}, Resource: roles,
		})
	}
	for _, role := range roles {
		p.Roles = append(p.Roles, RolePolicy{RoleARN: role, Policy: merged[role].policy()})
	}
	return p, nil
}

// access is one set of credentials' merged use.
type access struct {
	machines   map[string]*machineUse // by unqualified ARN
	humanInput bool
	// queues are the ARN patterns of the event sources' queues, topics their topics.
	queues, topics map[string]bool
}

// addEvents adds an event source reached with the credentials of role ("" for taskgate's own).
func (a *access) addEvents(role string, ev EventsAccess) error {
	t, ok := parseTopicARN(ev.TopicARN)
	if !ok {
		return fmt.Errorf("%q is not an SNS topic ARN: want arn:PARTITION:sns:REGION:ACCOUNT:NAME (the engine's events.topicArn)", ev.TopicARN)
	}
	prefix := ev.QueuePrefix
	if prefix == "" {
		prefix = DefaultQueuePrefix
	}
	if !validQueuePrefix(prefix) {
		return fmt.Errorf("%q cannot start an SQS queue name: want at most %d letters, digits, - and _ (the engine's events.queuePrefix)", prefix, maxQueuePrefix)
	}
	account := t.account
	if role != "" {
		account = strings.Split(role, ":")[4]
	}
	a.queues[queueARNPattern(t, account, prefix)] = true
	a.topics[ev.TopicARN] = true
	return nil
}

// eventQueueActions are what the event source does with its queues.
var eventQueueActions = []string{
	"sqs:CreateQueue", "sqs:DeleteMessage", "sqs:DeleteQueue", "sqs:GetQueueAttributes",
	"sqs:ListQueueTags", "sqs:ReceiveMessage", "sqs:SetQueueAttributes", "sqs:TagQueue",
}

// machineUse is how taskgate uses one state machine: the qualifiers ("" for none) of its targets.
type machineUse struct {
	arn               machineARN
	standard, express map[string]bool
}

func (a *access) add(arn string, express bool) error {
	m, err := parseMachineARN(arn)
	if err != nil {
		return err
	}
	// The engine reads partition and region as they are (the SDK rejects a bad region); a policy
	// must not carry an unexpanded ${VAR} or a wildcard there.
	if !lowerWord(m.partition) || !lowerWord(m.region) {
		return fmt.Errorf("%q is not a Step Functions state machine ARN: want "+
			"arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS", arn)
	}
	u := a.machines[m.unqualified()]
	if u == nil {
		u = &machineUse{arn: m, standard: map[string]bool{}, express: map[string]bool{}}
		a.machines[m.unqualified()] = u
	}
	if express {
		u.express[m.qualifier] = true
	} else {
		u.standard[m.qualifier] = true
	}
	if len(u.standard) > 0 && len(u.express) > 0 {
		return fmt.Errorf("state machine %s is listed both as a Standard state machine and as a sync Express one: "+
			"a state machine has one type; list all its targets under the one it has", m.unqualified())
	}
	return nil
}

// qualifiers is, for one action, each state machine's qualifiers ("" for none).
func (a *access) qualifiers(action string) map[string][]string {
	q := map[string][]string{}
	for unq, u := range a.machines {
		var set map[string]bool
		switch action {
		case "StartExecution":
			set = u.standard
		case "StartSyncExecution":
			set = u.express
		case "DescribeStateMachine":
			set = map[string]bool{"": true}
			for qual := range u.all() {
				if qual != "" && !isAlias(qual) {
					set[qual] = true
				}
			}
		case "DescribeStateMachineAlias":
			set = map[string]bool{}
			for qual := range u.all() {
				if isAlias(qual) {
					set[qual] = true
				}
			}
		case "ListExecutions":
			if len(u.standard) > 0 {
				set = map[string]bool{"": true}
			}
		}
		if len(set) > 0 {
			q[unq] = slices.Sorted(maps.Keys(set))
		}
	}
	return q
}

func (u *machineUse) all() map[string]bool {
	all := map[string]bool{}
	for q := range u.standard {
		all[q] = true
	}
	for q := range u.express {
		all[q] = true
	}
	return all
}

func isAlias(qualifier string) bool {
	return machineARN{qualifier: qualifier}.alias()
}

func (a *access) policy() Policy {
	p := Policy{Version: policyVersion, Statement: []Statement{}}
	for _, action := range machineActions {
		p.Statement = append(p.Statement, machineStatements(action, a.qualifiers(action))...)
	}
	var executions []string
	for _, u := range a.machines {
		if len(u.standard) > 0 {
			executions = append(executions, u.arn.execution("*"))
		}
	}
	if len(executions) > 0 {
		slices.Sort(executions)
		p.Statement = append(p.Statement, Statement{
			Sid: "Executions", Effect: "Allow",
			Action:   []string{"states:DescribeExecution", "states:GetExecutionHistory", "states:StopExecution"},
			Resource: executions,
		})
	}
	if a.humanInput && len(a.machines) > 0 {
		p.Statement = append(p.Statement, Statement{
			Sid: "HumanInput", Effect: "Allow",
			Action:   []string{"states:SendTaskFailure", "states:SendTaskSuccess"},
			Resource: []string{"*"},
		})
	}
	if len(a.topics) > 0 {
		p.Statement = append(p.Statement,
			Statement{Sid: "EventQueues", Effect: "Allow", Action: slices.Clone(eventQueueActions), Resource: slices.Sorted(maps.Keys(a.queues))},
			Statement{Sid: "ListEventQueues", Effect: "Allow", Action: []string{"sqs:ListQueues"}, Resource: []string{"*"}},
			Statement{Sid: "EventSubscriptions", Effect: "Allow", Action: []string{"sns:Subscribe", "sns:Unsubscribe"}, Resource: slices.Sorted(maps.Keys(a.topics))},
		)
	}
	return p
}

// machineStatements are the statements for one action: one for the state machines used without
// qualifier, then one per distinct set of qualifiers.
func machineStatements(action string, qualifiers map[string][]string) []Statement {
	var plain []string
	groups := map[string][]string{} // qualifiers joined with "," (no name contains one) -> machines
	for unq, quals := range qualifiers {
		if quals[0] == "" { // sorted: "" comes first
			plain = append(plain, unq)
			quals = quals[1:]
		}
		if len(quals) > 0 {
			key := strings.Join(quals, ",")
			groups[key] = append(groups[key], unq)
		}
	}
	var out []Statement
	if len(plain) > 0 {
		slices.Sort(plain)
		out = append(out, Statement{
			Sid: action, Effect: "Allow", Action: []string{"states:" + action}, Resource: plain,
			Condition: map[string]map[string][]string{"Null": {qualifierKey: {"true"}}},
		})
	}
	for i, key := range slices.Sorted(maps.Keys(groups)) {
		machines := groups[key]
		slices.Sort(machines)
		out = append(out, Statement{
			Sid: fmt.Sprintf("%sQualified%d", action, i+1), Effect: "Allow", Action: []string{"states:" + action},
			Resource:  machines,
			Condition: map[string]map[string][]string{"ForAnyValue:StringEquals": {qualifierKey: strings.Split(key, ",")}},
		})
	}
	return out
}

// lowerWord reports whether s is made of lower-case letters, digits and hyphens, as partitions and
// regions are.
func lowerWord(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}
