package bearer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

const (
	// jwksMaxAge is how long fetched keys are used before they are fetched again.
	jwksMaxAge = 10 * time.Minute
	maxJWKS    = 1 << 20
)

// jwksMinInterval bounds fetches caused by unknown key ids, so that forged tokens cannot make
// taskgate hammer the issuer.
var jwksMinInterval = 30 * time.Second

// keySet is the issuer's keys: static ones, and those of its JWKS endpoint, fetched when a token
// names a key id not seen yet (the issuer rotated) or the copy is old.
type keySet struct {
	url    string
	client *http.Client
	static jose.JSONWebKeySet

	mu      sync.Mutex
	fetched jose.JSONWebKeySet
	at      time.Time // when fetched was read
	tried   time.Time // the latest fetch, successful or not
}

func (s *keySet) key(ctx context.Context, kid string) (any, error) {
	if k, ok := only(s.static, kid); ok {
		return k, nil
	}
	if len(s.static.Keys) == 1 && s.static.Keys[0].KeyID == "" {
		// One static key with no id of its own (a PEM file) signs whatever id a token names.
		return s.static.Keys[0].Public().Key, nil
	}
	if s.url == "" {
		return nil, fmt.Errorf("%w: unknown signing key", auth.ErrInvalidToken)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := only(s.fetched, kid)
	stale := time.Since(s.at) > jwksMaxAge
	if (!ok || stale) && time.Since(s.tried) > jwksMinInterval {
		s.tried = time.Now()
		set, err := s.fetch(ctx)
		if err != nil {
			if ok { // keep serving the keys known until the issuer answers again
				return k, nil
			}
			return nil, fmt.Errorf("reading the authorization server's keys: %w", err)
		}
		s.fetched, s.at = set, time.Now()
		k, ok = only(set, kid)
	}
	if !ok {
		return nil, fmt.Errorf("%w: unknown signing key", auth.ErrInvalidToken)
	}
	return k, nil
}

// only is the public key of kid; with no kid, the set's only key.
func only(set jose.JSONWebKeySet, kid string) (any, bool) {
	if kid == "" {
		if len(set.Keys) == 1 {
			return set.Keys[0].Public().Key, true
		}
		return nil, false
	}
	for _, k := range set.Key(kid) {
		if k.Use == "" || k.Use == "sig" {
			return k.Public().Key, true
		}
	}
	return nil, false
}

func (s *keySet) fetch(ctx context.Context) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return set, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return set, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return set, fmt.Errorf("GET %s: HTTP %d", s.url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS))
	if err != nil {
		return set, err
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return set, fmt.Errorf("GET %s: not a JWK set: %w", s.url, err)
	}
	return set, nil
}
