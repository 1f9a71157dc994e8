package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/bearer"
)

// httpAuth is the auth: block of a mapping made ready to serve: the bearer verifier with the keys
// read from their variables and files, and the protected resource metadata (RFC 9728) with the
// paths it is served at. Nil without an auth: block.
type httpAuth struct {
	config   *mcpserver.HTTPAuth
	metadata http.Handler
	paths    []string
	origins  []string
	hosts    []string
}

// loadAuth reads what a mapping's auth: block names: keys from the environment, public keys
// from files. Every problem is an error that says which key and what to do. log gets the
// failures to read the issuer's keys.
func loadAuth(a *mapping.Auth, getenv func(string) string, log *slog.Logger) (*httpAuth, error) {
	if a == nil {
		return nil, nil
	}
	var cfg bearer.Config
	var required []string
	if a.OAuth != nil {
		required = a.OAuth.Scopes
	}
	for _, k := range a.APIKeys {
		key := getenv(k.KeyEnv)
		if len(key) < bearer.MinKeyLength {
			return nil, fmt.Errorf("auth (%s): the API key of %s: $%s is not set, or shorter than %d characters: export the key in it (e.g. openssl rand -base64 32)", a.Source, k.Principal, k.KeyEnv, bearer.MinKeyLength)
		}
		// The scopes OAuth requires of every token are the authorization server's business; a
		// key is a principal the operator vouches for, and passes that gate.
		scopes := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(k.Scopes), required...))))
		cfg.APIKeys = append(cfg.APIKeys, bearer.APIKey{Principal: k.Principal, Key: key, Scopes: scopes})
	}
	h := &httpAuth{origins: a.Origins, hosts: a.Hosts, config: &mcpserver.HTTPAuth{}}
	if o := a.OAuth; o != nil {
		cfg.JWT = &bearer.JWT{Issuer: o.Issuer, Audiences: o.Audiences, JWKSURL: o.JWKSURL, ClockSkew: o.ClockSkew, Log: log}
		for _, f := range o.KeyFiles {
			keys, err := publicKeys(f)
			if err != nil {
				return nil, fmt.Errorf("auth (%s): oauth.keyFiles: %w", a.Source, err)
			}
			cfg.JWT.Keys = append(cfg.JWT.Keys, keys...)
		}
		u, err := url.Parse(o.Resource)
		if err != nil {
			return nil, fmt.Errorf("auth (%s): oauth.resource %q: %w", a.Source, o.Resource, err)
		}
		// RFC 9728: the metadata of https://host/path is at https://host/.well-known/oauth-protected-resource/path.
		path := "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
		h.paths = slices.Compact([]string{path, "/.well-known/oauth-protected-resource"})
		h.metadata = auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: o.Resource, AuthorizationServers: o.AuthorizationServers, ScopesSupported: o.Scopes,
			BearerMethodsSupported: []string{"header"}, ResourceName: "taskgate",
		})
		h.config.Scopes, h.config.ClockSkew = o.Scopes, o.ClockSkew
		h.config.ResourceMetadataURL = u.Scheme + "://" + u.Host + path
	}
	verify, err := bearer.NewVerifier(cfg)
	if err != nil {
		return nil, fmt.Errorf("auth (%s): %w", a.Source, err)
	}
	h.config.Verify = verify
	return h, nil
}

// checkAuth checks what validate can of an auth: block offline, beyond the files and variables
// it names being there (Set.CheckNeeds): the keys are long enough, the key files hold public keys.
// An allow: that names a principal no key stands for is worth a warning (an OAuth token's
// principal is oauth:SUBJECT).
func checkAuth(set *mapping.Set, getenv func(string) string) (warnings []string, err error) {
	a := set.Auth
	if a == nil {
		return nil, nil
	}
	keyed := map[string]bool{}
	for _, k := range a.APIKeys {
		keyed[k.Principal] = true
		if key := getenv(k.KeyEnv); key != "" && len(key) < bearer.MinKeyLength {
			return nil, fmt.Errorf("auth (%s): $%s, the API key of %s, is shorter than %d characters: serve refuses it; make a longer one (e.g. openssl rand -base64 32)", a.Source, k.KeyEnv, k.Principal, bearer.MinKeyLength)
		}
	}
	for _, t := range set.Tools {
		if t.Allow == nil {
			continue
		}
		for _, p := range t.Allow.Principals {
			if !keyed[p] && !mapping.IsOAuthPrincipal(p) {
				warnings = append(warnings, fmt.Sprintf("tool %q (%s): allow names %s, whom no API key stands for; an OAuth token with the subject %s is the principal %s", t.Name, t.Source, p, p, mapping.OAuthPrincipal(p)))
			}
		}
	}
	if a.OAuth != nil {
		for _, f := range a.OAuth.KeyFiles {
			if _, err := publicKeys(f); err != nil {
				return warnings, fmt.Errorf("auth (%s): oauth.keyFiles: %w", a.Source, err)
			}
		}
	}
	return warnings, nil
}

// publicKeys reads the PEM public keys of a file.
func publicKeys(file string) ([]jose.JSONWebKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var keys []jose.JSONWebKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: a PEM block that is no public key (want PUBLIC KEY, as openssl pkey -pubout writes): %w", file, err)
		}
		keys = append(keys, jose.JSONWebKey{Key: pub})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no PEM public key", file)
	}
	return keys, nil
}
