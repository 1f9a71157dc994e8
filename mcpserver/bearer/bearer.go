// Package bearer checks the bearer tokens of HTTP callers: JWT access tokens from an OAuth
// authorization server (MCP authorization, taskgate as the resource server), and API keys for
// internal deployments. It gives go-sdk's auth middleware its TokenVerifier; the principal is
// "oauth:" and the token's subject, or the key's name (which has no ':'), so that no token can
// name the principal of a key (mapping.OAuthPrincipal).
package bearer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/taskgate/taskgate/mapping"
)

// Config says which bearer tokens are accepted. At least one of JWT and APIKeys is set.
type Config struct {
	JWT     *JWT
	APIKeys []APIKey
}

// JWT accepts access tokens signed by an authorization server.
type JWT struct {
	// Issuer must equal the token's iss.
	Issuer string
	// Audiences: the token's aud must name one of them (the resource: this server's URL).
	Audiences []string
	// JWKSURL is where the issuer publishes its keys; they are fetched in the background when a
	// token names a key not read yet, or the keys are old, and cached.
	JWKSURL string
	// Keys are static public keys, for issuers without a JWKS endpoint.
	Keys []jose.JSONWebKey
	// ClockSkew tolerates clocks that disagree by this much on exp, nbf and iat.
	ClockSkew time.Duration
	// HTTPClient fetches the JWKS; default: http.DefaultClient. Each fetch has 10 s.
	HTTPClient *http.Client
	// Log gets a line, with an error id, for each failed fetch of the JWKS. Default: none.
	Log *slog.Logger
}

// APIKey is one key and who it stands for.
type APIKey struct {
	Principal string
	Key       string
	Scopes    []string
}

// algorithms are the signature algorithms accepted: asymmetric only, so that a public key can
// never be used as an HMAC secret.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// apiKeyLifetime is the expiration reported for an API key, which has none of its own: go-sdk's
// middleware requires one, and a key is valid for as long as it is configured.
const apiKeyLifetime = 24 * time.Hour

// MinKeyLength is the shortest API key a Verifier takes.
const MinKeyLength = 16

// NewVerifier builds the verifier of cfg.
func NewVerifier(cfg Config) (auth.TokenVerifier, error) {
	if cfg.JWT == nil && len(cfg.APIKeys) == 0 {
		return nil, errors.New("bearer: configure JWT access tokens, API keys, or both")
	}
	keys := make([]hashedKey, len(cfg.APIKeys))
	for i, k := range cfg.APIKeys {
		if k.Principal == "" || len(k.Key) < MinKeyLength {
			return nil, fmt.Errorf("bearer: API key %d: a principal and a key of at least %d characters are required", i+1, MinKeyLength)
		}
		if !mapping.ValidKeyPrincipal(k.Principal) {
			return nil, fmt.Errorf("bearer: API key %d: the principal %q could be taken for another kind of caller: use letters, digits and ._@/-, and not %q", i+1, k.Principal, mapping.LocalPrincipal)
		}
		keys[i] = hashedKey{APIKey: k, sum: sha256.Sum256([]byte(k.Key))}
	}
	var jwks *keySet
	if cfg.JWT != nil {
		j := cfg.JWT
		if j.Issuer == "" || len(j.Audiences) == 0 || (j.JWKSURL == "" && len(j.Keys) == 0) {
			return nil, errors.New("bearer: JWT access tokens need an issuer, an audience, and a JWKS URL or static keys")
		}
		jwks = &keySet{url: j.JWKSURL, client: cmp.Or(j.HTTPClient, http.DefaultClient), log: cmp.Or(j.Log, slog.New(slog.DiscardHandler)),
			static: jose.JSONWebKeySet{Keys: j.Keys}}
	}
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info := matchKey(keys, token); info != nil {
			return info, nil
		}
		if jwks == nil || strings.Count(token, ".") != 2 {
			return nil, fmt.Errorf("%w: unknown key", auth.ErrInvalidToken)
		}
		return verifyJWT(ctx, cfg.JWT, jwks, token)
	}, nil
}

type hashedKey struct {
	APIKey
	sum [sha256.Size]byte
}

// matchKey compares the token with every key in constant time, so that the time taken says
// nothing about how close a guess was or which key it nearly matched.
func matchKey(keys []hashedKey, token string) *auth.TokenInfo {
	sum := sha256.Sum256([]byte(token))
	var found *hashedKey
	for i := range keys {
		if subtle.ConstantTimeCompare(sum[:], keys[i].sum[:]) == 1 {
			found = &keys[i]
		}
	}
	if found == nil {
		return nil
	}
	return &auth.TokenInfo{UserID: found.Principal, Scopes: found.Scopes, Expiration: time.Now().Add(apiKeyLifetime)}
}

type claims struct {
	jwt.Claims
	Scope string   `json:"scope"`
	Scp   []string `json:"scp"`
}

func verifyJWT(ctx context.Context, cfg *JWT, jwks *keySet, token string) (*auth.TokenInfo, error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil || len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: not a signed JWT", auth.ErrInvalidToken)
	}
	key, err := jwks.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	var c claims
	if err := tok.Claims(key, &c); err != nil {
		return nil, fmt.Errorf("%w: bad signature", auth.ErrInvalidToken)
	}
	if c.Expiry == nil {
		return nil, fmt.Errorf("%w: no expiry", auth.ErrInvalidToken)
	}
	if c.Subject == "" {
		return nil, fmt.Errorf("%w: no subject", auth.ErrInvalidToken)
	}
	if !slices.ContainsFunc(cfg.Audiences, c.Audience.Contains) {
		return nil, fmt.Errorf("%w: wrong audience", auth.ErrInvalidToken)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: cfg.Issuer, Time: time.Now()}, cfg.ClockSkew); err != nil {
		switch {
		case errors.Is(err, jwt.ErrExpired):
			return nil, fmt.Errorf("%w: expired", auth.ErrInvalidToken)
		case errors.Is(err, jwt.ErrInvalidIssuer):
			return nil, fmt.Errorf("%w: wrong issuer", auth.ErrInvalidToken)
		}
		return nil, fmt.Errorf("%w: not valid yet", auth.ErrInvalidToken)
	}
	scopes := c.Scp
	if c.Scope != "" {
		scopes = strings.Fields(c.Scope)
	}
	return &auth.TokenInfo{UserID: mapping.OAuthPrincipal(c.Subject), Scopes: scopes, Expiration: c.Expiry.Time()}, nil
}
