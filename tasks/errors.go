package tasks

import (
	"errors"
	"fmt"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

// Kind is what went wrong with a request about a task, whatever the dialect calls it.
type Kind int

const (
	// NotFound: the id leads to no task this caller may see (malformed, forged, of an unmapped
	// target, of another caller, or gone from the engine).
	NotFound Kind = iota + 1
	// Expired: the id is past its ttl, or the result past its keep-alive.
	Expired
	// Invalid: the request itself is wrong; the message says how.
	Invalid
	// Refused: nothing started, for a reason the caller's model can read and act on (arguments
	// that do not fit the tool, input the engine refused, a question declined): most dialects
	// answer it as a tool error, not as an error of the request.
	Refused
	// Conflict: an idempotency key already names an execution started with other input.
	Conflict
	// Ended: cancel of an execution that had already ended.
	Ended
	// Unavailable: the engine did not answer or throttled; nothing changed, a retry may work.
	Unavailable
	// Internal: the engine failed in a way a retry does not mend.
	Internal
)

// Error is the one error type of the task service. Each dialect renders it in its own words.
type Error struct {
	Kind Kind
	// Message is what the caller did wrong (Invalid, Refused, Conflict, Ended), or what failed
	// (Unavailable, Internal: "Failed to retrieve the task"). NotFound and Expired have none: the
	// dialects have fixed words for them.
	Message string
	// RetryAfter, for Unavailable, is when a retry may succeed, when known.
	RetryAfter time.Duration
	// Err is the engine's own error: for the log, never for the client.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Invalidf returns an Invalid error with a formatted message.
func Invalidf(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...)}
}

func refusedf(format string, args ...any) *Error {
	return &Error{Kind: Refused, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns err's Kind, or 0 when err is no *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// engineError classifies an engine failure for the caller; what says what failed.
func engineError(what string, err error) *Error {
	switch {
	case errors.Is(err, adapters.ErrNotFound):
		return &Error{Kind: NotFound, Err: err}
	case errors.Is(err, adapters.ErrEnded):
		return &Error{Kind: Ended, Message: what + ": the task had already ended", Err: err}
	case errors.Is(err, adapters.ErrUnavailable):
		e := &Error{Kind: Unavailable, Message: what, Err: err}
		var th *adapters.Throttle
		if errors.As(err, &th) {
			e.RetryAfter = max(th.RetryAfter, time.Millisecond)
		}
		return e
	}
	return &Error{Kind: Internal, Message: what, Err: err}
}
