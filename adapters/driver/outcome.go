package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// InvalidOutputError is the error of the Failed outcome of an execution that the engine says
// succeeded, with an output taskgate cannot return (SucceededWith).
const InvalidOutputError = "taskgate.InvalidOutput"

// SucceededWith returns the outcome of an execution that succeeded with output, as the engine holds
// it (empty: JSON null). Every driver reads a succeeded execution's output through it, so that what
// is not JSON never reaches the MCP layer, which cannot send it: an output that is not JSON makes
// the outcome Failed, with InvalidOutputError and a cause that says why.
func SucceededWith(native string, output []byte) Outcome {
	if len(bytes.TrimSpace(output)) == 0 {
		return Outcome{State: Succeeded, Native: native, Output: json.RawMessage("null")}
	}
	var checked json.RawMessage
	if err := json.Unmarshal(output, &checked); err != nil {
		return UnreadableOutput(native, fmt.Errorf("it is not valid JSON (%w%s)", err, offset(err)))
	}
	return Outcome{State: Succeeded, Native: native, Output: output}
}

// UnreadableOutput returns the outcome of an execution that succeeded with an output taskgate
// cannot return, and why: Failed, with InvalidOutputError, so that the client is told rather than
// kept waiting.
func UnreadableOutput(native string, why error) Outcome {
	return Outcome{State: Failed, Native: native, Error: InvalidOutputError,
		Cause: fmt.Sprintf("the execution succeeded, but taskgate cannot return its output: %v", why)}
}

// offset says where a JSON syntax error is, when it says.
func offset(err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Sprintf(", at byte %d", syntax.Offset)
	}
	return ""
}
