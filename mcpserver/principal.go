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

// access says what the request's caller may do with tool: see it, and call it when it lacks none
// of the scopes it needs (missing). A tool whose allow names other principals is hidden: to the
// caller it does not exist. So is one that needs scopes an API key lacks (a key's scopes are
// what they are); an OAuth caller sees it, to ask its authorization server for them (step-up).
// The local principal sees and calls every tool.
func access(ctx context.Context, tool *mapping.Tool) (visible bool, missing []string) {
	id, _ := ctx.Value(identityKey{}).(identity)
	if id.principal == "" {
		return true, nil
	}
	missing = tool.Allow.Missing(id.scopes)
	return tool.Allow.Admits(id.principal) && (len(missing) == 0 || mapping.IsOAuthPrincipal(id.principal)), missing
}

// errNotPermitted is the answer to a call of a tool the caller sees but lacks scopes for.
func errNotPermitted(ctx context.Context, tool *mapping.Tool, missing []string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("tool %q is not available to %s: it needs the scopes %s", tool.Name, principalOf(ctx), strings.Join(missing, " "))}
}

// callerOf is the caller recorded in the tasks a request starts and checked on every request
// about one: a hash of the principal, so that ids and engine records do not name it.
func callerOf(ctx context.Context) string {
	sum := sha256.Sum256([]byte(principalOf(ctx)))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
