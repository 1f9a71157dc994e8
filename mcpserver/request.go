package mcpserver

import (
	"context"
	"time"
)

// request is what mcpserver knows of one request, handed from layer to layer in its context
// under one key: the HTTP front makes it once it has read the body, and the middleware makes it
// for a request that comes without one (stdio). The fields only HTTP sets are zero on stdio.
//
// The layers of one request run one after another (the front, then go-sdk or the fast path, then
// the middleware, then the handlers), so each writes its fields before the next reads them; only
// refusal is written while the front may read it, and it locks.
type request struct {
	// reading is the HTTP front's reading of the body (reading.go), so that the fast path reads
	// neither the body nor its method again.
	reading *reading
	// clientGone is the HTTP request's context: the stateless SDK handler runs the handlers in a
	// context that outlives the request, so a blocking call (tasks/result, a waiting tool) would
	// otherwise go on for a client that left (withClient).
	clientGone context.Context
	// maxWait is the longest an HTTP request may wait for a workflow (0: no bound).
	maxWait time.Duration
	// releaseBody gives back the request's share of the body budget before the request ends, and
	// drops the body: a long-lived request (a listen) that has read what it needs of it holds no
	// more of it.
	releaseBody func()
	// refusal is where the middleware leaves a -32601 error for the HTTP front to write as it is
	// (refusal.go); on stdio the connection keeps it.
	refusal *methodNotFound
	// record is the observer's record of the request, nil when nobody observes (observer.go).
	record *Request
	// answerFirst is set by a transport that tells the observer how the request went only once
	// its answer is on the wire (the fast path), so that no client waits for a log line or a
	// metric: the middleware then leaves that in answered instead of doing it.
	answerFirst bool
	answered    func()
}

type requestKey struct{}

// requestOf is what is known of the request ctx serves, nil when no transport or middleware
// made it.
func requestOf(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// withRequest is ctx with what is known of its request, made empty when there is none yet.
func withRequest(ctx context.Context) (context.Context, *request) {
	if r := requestOf(ctx); r != nil {
		return ctx, r
	}
	r := &request{}
	return context.WithValue(ctx, requestKey{}, r), r
}

// readingOf is the HTTP front's reading of the request ctx serves, nil when it read none.
func readingOf(ctx context.Context) *reading {
	if r := requestOf(ctx); r != nil {
		return r.reading
	}
	return nil
}

// releaseBody gives back the share of the body budget that the request ctx serves holds.
func releaseBody(ctx context.Context) {
	if r := requestOf(ctx); r != nil && r.releaseBody != nil {
		r.releaseBody()
	}
}

// withClient ends ctx when the HTTP client that sent the request goes away.
func withClient(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if r := requestOf(ctx); r != nil && r.clientGone != nil {
		stop := context.AfterFunc(r.clientGone, cancel)
		return ctx, func() { stop(); cancel() }
	}
	return ctx, cancel
}
