package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/base64"

	"github.com/taskgate/taskgate/mapping"
)

// Who sends a request is told by the transport (WithPrincipal) and bound into every task the
// request starts: a task id opens only for the caller it was issued to.

type identityKey struct{}

// identity is who sent a request and the scopes their token grants.
type identity struct {
	principal string
	scopes    []string
}

// WithPrincipal marks ctx as a request of the authenticated principal, with the scopes its token
// grants.
func WithPrincipal(ctx context.Context, principal string, scopes ...string) context.Context {
	return context.WithValue(ctx, identityKey{}, identity{principal: principal, scopes: scopes})
}

// Principal is who sent the request: the authenticated principal, or the local one when no one
// is authenticated (stdio, and HTTP without auth, which serves only loopback unless the operator
// insists): the user who started taskgate.
func Principal(ctx context.Context) string {
	if id, _ := ctx.Value(identityKey{}).(identity); id.principal != "" {
		return id.principal
	}
	return mapping.LocalPrincipal
}

// Access says what the request's caller may do with tool: see it, and call it when it lacks none
// of the scopes it needs (missing). A tool whose allow names other principals is hidden: to the
// caller it does not exist. So is one that needs scopes an API key lacks (a key's scopes are
// what they are); an OAuth caller sees it, to ask its authorization server for them (step-up).
// The local principal sees and calls every tool.
func Access(ctx context.Context, tool *mapping.Tool) (visible bool, missing []string) {
	id, _ := ctx.Value(identityKey{}).(identity)
	if id.principal == "" {
		return true, nil
	}
	missing = tool.Allow.Missing(id.scopes)
	return tool.Allow.Admits(id.principal) && (len(missing) == 0 || mapping.IsOAuthPrincipal(id.principal)), missing
}

// caller is the caller recorded in the tasks a request starts and checked on every request
// about one: a hash of the principal, so that ids and engine records do not name it.
func caller(ctx context.Context) string {
	sum := sha256.Sum256([]byte(Principal(ctx)))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
