package tasks

import "context"

// request is what the service is told of one request besides its arguments, carried in the
// request's context under one key: who sent it (WithPrincipal), what its engine calls after the
// first are charged to (Charging), and what it turned out to be about (Track, Note).
//
// It is made once per request: WithPrincipal always makes it anew, so that a context derived for
// another caller never changes who its parent's request is from; Charging and Track fill in the
// one they find, or make it. The transport's layers run one after another, so each writes its
// field before the service reads it; only the subject (locked) and the charge's first call
// (atomic) change while the request's engine calls may run at once.
//
// Which tool an engine call is for is not here: it belongs to the call, not the request, since one
// request calls the engine for several tools (a key looked up across them, a listing), so it rides
// in each call's own context (toolKey, service.go).
type request struct {
	principal string
	scopes    []string
	charge    charge
	// tracked says whether the transport wants the subject filled in (Track).
	tracked bool
	subject Subject
}

type requestKey struct{}

// requestOf is the state of the request ctx serves, nil when nobody made it.
func requestOf(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// withRequest is ctx with the state of its request, made empty when there is none yet.
func withRequest(ctx context.Context) (context.Context, *request) {
	if r := requestOf(ctx); r != nil {
		return ctx, r
	}
	return newRequest(ctx)
}

// newRequest is ctx with a new, empty state of its request.
func newRequest(ctx context.Context) (context.Context, *request) {
	r := &request{}
	return context.WithValue(ctx, requestKey{}, r), r
}
