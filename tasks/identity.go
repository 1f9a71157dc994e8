package tasks

import (
	"context"
	"strings"

	"github.com/taskgate/taskgate/mapping"
)

// Who sends a request is told by the transport (WithPrincipal) and bound into every task the
// request starts (callers.go): a task id opens only for the caller it was issued to, and only
// while that caller may use the tool it was started through.

// WithPrincipal marks ctx as a request of the authenticated principal, with the scopes its token
// grants. It begins the request's state (request.go), so a transport calls it before Charging and
// Track.
func WithPrincipal(ctx context.Context, principal string, scopes ...string) context.Context {
	ctx, r := newRequest(ctx)
	r.principal, r.scopes = principal, scopes
	return ctx
}

// Principal says who sent the request: the authenticated principal, or the local one when no one
// is authenticated (stdio, and HTTP without auth, which serves only loopback unless the operator
// insists): the user who started taskgate.
func Principal(ctx context.Context) string {
	if r := requestOf(ctx); r != nil && r.principal != "" {
		return r.principal
	}
	return mapping.LocalPrincipal
}

// Access says what the request's caller may do with tool: see it, and call it when it lacks none
// of the scopes it needs (missing). A tool whose allow names other principals is hidden: to the
// caller it does not exist. So is one that needs scopes an API key lacks (a key's scopes are
// what they are); an OAuth caller sees it, to ask its authorization server for them (step-up).
// The local principal sees and calls every tool.
func Access(ctx context.Context, tool *mapping.Tool) (visible bool, missing []string) {
	r := requestOf(ctx)
	if r == nil || r.principal == "" {
		return true, nil
	}
	missing = tool.Allow.Missing(r.scopes)
	return tool.Allow.Admits(r.principal) && (len(missing) == 0 || mapping.IsOAuthPrincipal(r.principal)), missing
}

// permitted checks that the request's caller may use tool now, as tools/call checks it: a tool
// hidden from the caller is not found, like its tasks; one it sees but lacks scopes for is refused
// with the scopes it needs.
func permitted(ctx context.Context, tool *mapping.Tool) error {
	visible, missing := Access(ctx, tool)
	switch {
	case !visible:
		return &Error{Kind: NotFound}
	case len(missing) > 0:
		return NotPermitted(ctx, tool, missing)
	}
	return nil
}

// NotPermitted returns the refusal of a request about tool from a caller that sees it but lacks the
// scopes missing.
func NotPermitted(ctx context.Context, tool *mapping.Tool, missing []string) *Error {
	return Invalidf("tool %q is not available to %s: it needs the scopes %s", tool.Name, Principal(ctx), strings.Join(missing, " "))
}
