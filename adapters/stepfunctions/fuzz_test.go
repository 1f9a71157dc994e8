package stepfunctions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

const fuzzMachine = "arn:aws:states:us-east-1:123456789012:stateMachine:orders"

// FuzzOwns: only executions of the target's own state machine are owned, whatever the text; an
// owned id is one the driver reads back as itself.
func FuzzOwns(f *testing.F) {
	for _, s := range []string{fuzzMachine, fuzzMachine + ":live", "arn:aws:states:us-east-1:123456789012:execution:orders:x",
		"arn:aws:states:us-east-1:123456789012:execution:orders:live:x", "arn:aws:states:us-east-1:123456789012:execution:orders2:x",
		"arn:aws-cn:states:cn-north-1:123456789012:execution:orders:x", "arn:aws:states:us-east-1:12345678901:execution:orders:x", "", ":::::::"} {
		f.Add(fuzzMachine, s)
	}
	e := &conn{}
	f.Fuzz(func(t *testing.T, machine, execution string) {
		target, _ := StateMachine(machine) // no Spec when machine is no state machine ARN
		owned := e.Owns(target, driver.Ref{ID: execution}, "alice")
		if !owned {
			return
		}
		m, err := parseMachineARN(machine)
		if err != nil {
			t.Fatalf("%q owned by %q, which is no state machine ARN", execution, machine)
		}
		unqualified := strings.Replace(m.unqualified(), ":stateMachine:", ":execution:", 1) + ":"
		if !strings.HasPrefix(execution, unqualified) {
			t.Fatalf("%q owned by %q, but not an execution of it", execution, machine)
		}
		_, name, _ := parseExecutionARN(execution)
		if !strings.HasPrefix(name, driver.CallerTag("alice")+"-") {
			t.Fatalf("%q owned for alice, but its name does not carry her tag", execution)
		}
		if r, err := (Driver{}).ParseRef(execution); err != nil || r.ID != execution {
			t.Fatalf("%q owned but read back as %v, %v", execution, r, err)
		}
	})
}

// FuzzComment: a definition's Comment yields its text and, after the marker, a JSON object, or an
// error; never a panic.
func FuzzComment(f *testing.F) {
	for _, s := range []string{"Orders. " + schemaMarker + ` {"type":"object"}`, schemaMarker, schemaMarker + " [1]", schemaMarker + " {", "plain", schemaMarker + schemaMarker + " {}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, comment string) {
		text, schema, err := parseComment(comment)
		if err != nil {
			return
		}
		if schema != nil {
			var obj map[string]any
			if json.Unmarshal(schema, &obj) != nil || obj == nil {
				t.Fatalf("%q gave a schema that is no object: %s", comment, schema)
			}
		}
		if strings.Contains(text, schemaMarker) && schema != nil {
			t.Fatalf("%q: the text %q keeps the marker", comment, text)
		}
	})
}
