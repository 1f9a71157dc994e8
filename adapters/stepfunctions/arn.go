package stepfunctions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// machineARN is a parsed state machine ARN:
// arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME[:VERSION-OR-ALIAS].
type machineARN struct {
	partition, region, account, name string
	// qualifier is a version number or an alias name; empty for the state machine itself.
	qualifier string
}

func parseMachineARN(s string) (machineARN, error) {
	p := strings.Split(s, ":")
	if (len(p) != 7 && len(p) != 8) || p[0] != "arn" || p[1] == "" || p[2] != "states" || p[3] == "" ||
		!validAccount(p[4]) || p[5] != "stateMachine" || !validName(p[6]) || (len(p) == 8 && !validName(p[7])) {
		return machineARN{}, fmt.Errorf("%q is not a Step Functions state machine ARN: want "+
			"arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS", s)
	}
	m := machineARN{partition: p[1], region: p[3], account: p[4], name: p[6]}
	if len(p) == 8 {
		m.qualifier = p[7]
	}
	return m, nil
}

// alias reports whether the ARN names an alias (a version qualifier is a number).
func (m machineARN) alias() bool {
	return m.qualifier != "" && strings.Trim(m.qualifier, "0123456789") != ""
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

// owns reports whether arn is the ARN of a Standard execution of this state machine.
func (m machineARN) owns(arn string) bool {
	p := strings.Split(arn, ":")
	return len(p) == 8 && p[0] == "arn" && p[1] == m.partition && p[2] == "states" && p[3] == m.region &&
		p[4] == m.account && p[5] == "execution" && p[6] == m.name && validName(p[7])
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
// a valid name and the key itself is not visible in the execution ARN.
func keyName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "k-" + hex.EncodeToString(sum[:])[:40]
}
