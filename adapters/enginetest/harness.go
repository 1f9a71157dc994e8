// Package enginetest is the conformance suite every driver's adapters.Conn passes against a real
// engine, through the whole adapters.Engine taskgate serves it with (Stack). A provider supplies
// a Harness (the set-up); the suite owns the behaviour.
package enginetest

import (
	"encoding/json"

	"github.com/taskgate/taskgate/adapters"
)

// ConfirmSchema is the schema of the questions the targets "ask" and "ask-two" ask.
var ConfirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// Harness sets up one real engine for the suite.
type Harness interface {
	// Conn is the driver's connection to the engine under test.
	Conn() adapters.Conn
	// Driver is the engine's driver: the suite writes and reads the Refs Start returns with it.
	Driver() adapters.Driver
	// Target returns the target of one conformance workflow, by name:
	//   "echo":      input {"seconds": n, "text": s}; waits n seconds, succeeds with output {"text": s}.
	//   "fail":      input {"seconds": n, "reason": s}; waits n seconds, fails with error
	//                "Example.Failure" and cause s.
	//   "timeout":   input {"seconds": n}; waits n seconds, but the execution itself times out after
	//                2 seconds, so it ends Failed with native state "TIMED_OUT".
	//   "unpolled":  like "echo", but no worker serves it, so its executions stay Submitted (engines
	//                without workers skip the test "Submitted").
	//   "absent":    a target the engine does not have (a state machine nobody created, a task queue
	//                no worker polls): Check must fail, or warn.
	//   "wrongkind": a target of a shape the engine cannot serve, one its driver never decodes
	//                (another kind of ARN, a workflow without a task queue): Check and Start must
	//                fail with ErrInvalid.
	//   "ask":       input {"message": s}; asks one question, key "confirm", message s, schema
	//                ConfirmSchema. Accepted, it succeeds with the answer's content as output;
	//                declined, it fails with error "taskgate.Declined" and cause
	//                `the question "confirm" was declined`; dismissed (cancel), with
	//                "taskgate.Dismissed" and `the question "confirm" was dismissed`.
	//   "ask-two":   input {}; asks two questions at once, keys "first" and "second", each with
	//                ConfirmSchema, and succeeds with {"first": answer, "second": answer} once both
	//                are accepted.
	//   "steps":     input {"version": s, "stepSeconds": n}; runs several steps of about n seconds
	//                each, saying in Status.Message which one runs, and succeeds.
	// "echo" and "fail" must have different Names: the suite checks that Owns keeps them apart.
	Target(name string) adapters.Target
	// Missing returns a Ref that Owns accepts for Target("echo") but that names no execution.
	Missing() adapters.Ref
	// Foreign returns Refs that Owns must reject for Target("echo"): another target's executions,
	// another account or namespace, malformed ids.
	Foreign() []adapters.Ref
	// Unreachable returns a Conn like Conn() whose server does not answer (a closed port, a
	// connection cut): every call that needs the server must fail with ErrUnavailable. The suite
	// closes it.
	Unreachable() adapters.Conn
	// ShouldSkip says whether the engine cannot do what a named test checks, and why.
	ShouldSkip(test string) (bool, string)
	// Close releases what the harness set up.
	Close()
}
