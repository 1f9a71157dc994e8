package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
)

type principalKey struct{}

// localPrincipal is who speaks when no one is authenticated: stdio, and HTTP without auth (which
// serves only loopback unless the operator insists): the user who started taskgate.
const localPrincipal = "local"

// WithPrincipal marks ctx as a request of the authenticated principal.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// principalOf is who sent the request: the authenticated principal, or the local one.
func principalOf(ctx context.Context) string {
	if p, _ := ctx.Value(principalKey{}).(string); p != "" {
		return p
	}
	return localPrincipal
}

// callerOf is the caller recorded in the tasks a request starts and checked on every request
// about one: a hash of the principal, so that ids and engine records do not name it.
func callerOf(ctx context.Context) string {
	sum := sha256.Sum256([]byte(principalOf(ctx)))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
