package mcpserver

import "context"

type principalKey struct{}

// localPrincipal is who speaks on stdio: the user who started taskgate.
const localPrincipal = "local"

// WithPrincipal marks ctx as a request of the authenticated principal.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// principalOf is who sent the request: the authenticated principal, or "" when the transport
// authenticates no one.
func principalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
