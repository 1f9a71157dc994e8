// Package adapters is how taskgate uses workflow engines: the one portable Engine (engine.go) over
// a driver's Conn, which adds to it, once for every driver, the hooks around each engine call
// (Hook, Call), the reuse of readings (Readings), waiting and running; and the registry of drivers
// (Register, Lookup). It imports no engine SDK; each engine lives in a package of its own under
// adapters/ and proves itself with adapters/enginetest.
//
// What a driver implements is in package adapters/driver: the narrow Conn and its optional
// capabilities, the Driver that reads its part of mapping files and opens Conns, and the values
// and errors a driver returns. So that the code that uses engines names one package, adapters
// re-exports those values, constants and errors here (aliases of the same types, the same
// sentinel errors for errors.Is); the optional capabilities, which only drivers implement and
// only the Engine looks for, it does not.
//
// The contract is stateless by design: a Ref is the engine's own identifier and nothing else, and
// every call is answered by asking the engine. A driver may cache what can never change (the
// outcome of an ended execution) but never what can.
package adapters

import (
	"github.com/taskgate/taskgate/adapters/driver"
)

// The contract of package adapters/driver, under the names the users of engines know: each is
// the driver package's own (see its documentation there).
type (
	Target       = driver.Target
	StartRequest = driver.StartRequest
	Ref          = driver.Ref
	ExecKey      = driver.ExecKey
	State        = driver.State
	Status       = driver.Status
	Question     = driver.Question
	Answer       = driver.Answer
	AnswerLimit  = driver.AnswerLimit
	Outcome      = driver.Outcome
	Listed       = driver.Listed
	TargetInfo   = driver.TargetInfo
	Conn         = driver.Conn
	Throttle     = driver.Throttle
	ListOptions  = driver.ListOptions
	SweepOptions = driver.SweepOptions
	Driver       = driver.Driver
	DriverInfo   = driver.DriverInfo
	Budget       = driver.Budget
	Block        = driver.Block
	EngineConfig = driver.EngineConfig
	OpenOptions  = driver.OpenOptions
	Env          = driver.Env
	Policy       = driver.Policy
	EngineUse    = driver.EngineUse
)

// The states of an execution, the actions of an Answer, and the other constants of package
// adapters/driver.
const (
	Submitted          = driver.Submitted
	Working            = driver.Working
	Succeeded          = driver.Succeeded
	Failed             = driver.Failed
	Cancelled          = driver.Cancelled
	InputRequired      = driver.InputRequired
	ActionAccept       = driver.ActionAccept
	ActionDecline      = driver.ActionDecline
	ActionCancel       = driver.ActionCancel
	DeclinedError      = driver.DeclinedError
	DismissedError     = driver.DismissedError
	InvalidOutputError = driver.InvalidOutputError
)

// The errors of package adapters/driver, the same values, so that errors.Is tells them apart
// whichever package names them.
var (
	ErrNotFound    = driver.ErrNotFound
	ErrKeyConflict = driver.ErrKeyConflict
	ErrNotEnded    = driver.ErrNotEnded
	ErrEnded       = driver.ErrEnded
	ErrInvalid     = driver.ErrInvalid
	ErrUnavailable = driver.ErrUnavailable
	ErrThrottled   = driver.ErrThrottled
	ErrUnsupported = driver.ErrUnsupported
)
