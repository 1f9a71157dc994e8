package stepfunctions

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/taskgate/taskgate/adapters/driver"
)

// machineARN is a parsed state machine ARN:
// arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME[:VERSION-OR-ALIAS].
type machineARN struct {
	partition, region, account, name string
	// qualifier is a version number or an alias name; empty for the state machine itself.
	qualifier string
}

func parseMachineARN(s string) (machineARN, error) {
	m, p, ok := parseARN(s, "stateMachine")
	if !ok || (len(p) != 1 && len(p) != 2) || !validName(p[0]) || (len(p) == 2 && !validName(p[1])) {
		return machineARN{}, fmt.Errorf("%q is not a Step Functions state machine ARN: want "+
			"arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS", s)
	}
	m.name = p[0]
	if len(p) == 2 {
		m.qualifier = p[1]
	}
	return m, nil
}

// parseExecutionARN reads the ARN of a Standard execution:
// arn:PARTITION:states:REGION:ACCOUNT:execution:STATE-MACHINE-NAME:EXECUTION-NAME. m is its state
// machine, without qualifier.
func parseExecutionARN(s string) (m machineARN, name string, ok bool) {
	m, p, ok := parseARN(s, "execution")
	if !ok || len(p) != 2 || !validName(p[0]) || !validName(p[1]) {
		return machineARN{}, "", false
	}
	m.name = p[0]
	return m, p[1], true
}

// parseARN reads the parts every Step Functions ARN of a resource type has, and returns the
// parts after the type.
func parseARN(s, resource string) (m machineARN, rest []string, ok bool) {
	p := strings.Split(s, ":")
	if len(p) < 7 || p[0] != "arn" || p[1] == "" || p[2] != "states" || p[3] == "" || !validAccount(p[4]) || p[5] != resource {
		return machineARN{}, nil, false
	}
	return machineARN{partition: p[1], region: p[3], account: p[4]}, p[6:], true
}

// alias reports whether the ARN names an alias (a version qualifier is a number).
func (m machineARN) alias() bool {
	return m.qualifier != "" && strings.Trim(m.qualifier, "0123456789") != ""
}

// String writes the ARN as it was parsed: with its version or alias, if any.
func (m machineARN) String() string {
	if m.qualifier == "" {
		return m.unqualified()
	}
	return m.unqualified() + ":" + m.qualifier
}

// unqualified is the ARN of the state machine itself, without version or alias.
func (m machineARN) unqualified() string {
	return "arn:" + m.partition + ":states:" + m.region + ":" + m.account + ":stateMachine:" + m.name
}

// execution is the ARN of the execution named name. Executions started through a version or alias
// ARN belong to the state machine itself, so the qualifier plays no part.
func (m machineARN) execution(name string) string {
	return "arn:" + m.partition + ":states:" + m.region + ":" + m.account + ":execution:" + m.name + ":" + name
}

func validAccount(s string) bool {
	return len(s) == 12 && strings.Trim(s, "0123456789") == ""
}

// validName applies the Step Functions rules for state machine, alias and execution names: 1 to 80
// characters, no white space, no control characters and none of < > { } [ ] ? * " # % \ ^ | ~ ` $ & , ; : /.
func validName(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > 80 {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) ||
			strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return false
		}
	}
	return true
}

// keyName is the execution name for an idempotency key: a fixed-length hash, so that any key gives
// a valid name and the key itself is not visible in the execution ARN. The caller who used the key
// is hashed in too, so that another caller's same key names another execution.
func keyName(key, caller string) string {
	return driver.CallerTag(caller) + "-" + driver.KeySuffix(key, caller, "k-", 40)
}
