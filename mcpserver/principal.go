package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/mapping"
)

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

// principalOf is who sent the request: the authenticated principal, or the local one when no one
// is authenticated (stdio, and HTTP without auth, which serves only loopback unless the operator
// insists): the user who started taskgate.
func principalOf(ctx context.Context) string {
	if id, _ := ctx.Value(identityKey{}).(identity); id.principal != "" {
		return id.principal
	}
	return mapping.LocalPrincipal
}

// permits reports whether the request's caller may use tool: the local principal may use every
// tool; others what the tool's allow grants. missing lists the scopes they lack.
func permits(ctx context.Context, tool *mapping.Tool) (ok bool, missing []string) {
	id, _ := ctx.Value(identityKey{}).(identity)
	if id.principal == "" {
		return true, nil
	}
	return tool.Allow.Permits(id.principal, id.scopes)
}

// errNotPermitted is the answer to a call of a tool the caller may not use.
func errNotPermitted(ctx context.Context, tool *mapping.Tool, missing []string) *jsonrpc.Error {
	msg := fmt.Sprintf("tool %q is not available to %s", tool.Name, principalOf(ctx))
	if len(missing) > 0 {
		msg += fmt.Sprintf(": it needs the scopes %s", strings.Join(missing, " "))
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// callerOf is the caller recorded in the tasks a request starts and checked on every request
// about one: a hash of the principal, so that ids and engine records do not name it.
func callerOf(ctx context.Context) string {
	sum := sha256.Sum256([]byte(principalOf(ctx)))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
