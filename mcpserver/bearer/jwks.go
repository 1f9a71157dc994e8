package bearer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

const (
	// jwksMaxAge is how long fetched keys are used before they are fetched again (in the
	// background: the old ones serve meanwhile).
	jwksMaxAge = 10 * time.Minute
	// jwksFetchTimeout bounds one fetch, whoever asked for it.
	jwksFetchTimeout = 10 * time.Second
	maxJWKS          = 1 << 20
)

var (
	// jwksMinInterval bounds the fetches that unknown key ids cause, so that forged tokens cannot
	// make taskgate hammer the issuer; a rotated key works at the latest this long after the
	// previous fetch.
	jwksMinInterval = 10 * time.Second
	// jwksWait is the longest a request with an unknown key id waits for a fetch.
	jwksWait = time.Second
)

// keySet is the issuer's keys: static ones, and those of its JWKS endpoint. Requests read the keys
// fetched last without any lock; a fetch runs in the background, one at a time, with a context
// and timeout of its own, when a token names a key id not seen yet (the issuer rotated) or the
// keys are old. A request that names an unknown key id waits a moment for that fetch; none waits
// for a fetch it did not need, nor hears what went wrong with it (the log does, under an error
// id the request is told).
type keySet struct {
	url    string
	client *http.Client
	static jose.JSONWebKeySet
	log    *slog.Logger

	fetched atomic.Pointer[fetchedKeys]

	mu       sync.Mutex    // guards what follows; never held across a fetch
	fetching chan struct{} // closed when the fetch in flight ends; nil when none is
	tried    time.Time     // when the latest fetch started
	failure  string        // the error id of the latest fetch, if it failed
}

type fetchedKeys struct {
	set jose.JSONWebKeySet
	at  time.Time
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
	keys := s.fetched.Load()
	if k, ok := keys.find(kid); ok {
		if time.Since(keys.at) > jwksMaxAge {
			s.refresh()
		}
		return k, nil
	}
	if done := s.refresh(); done != nil {
		wait := time.NewTimer(jwksWait)
		defer wait.Stop()
		select {
		case <-done:
		case <-wait.C:
		case <-ctx.Done():
		}
		if k, ok := s.fetched.Load().find(kid); ok {
			return k, nil
		}
	}
	s.mu.Lock()
	failure := s.failure
	s.mu.Unlock()
	if failure != "" && s.fetched.Load() == nil {
		return nil, fmt.Errorf("%w: the authorization server's keys cannot be read at the moment; retry in a minute (error id %s)", auth.ErrInvalidToken, failure)
	}
	return nil, fmt.Errorf("%w: unknown signing key", auth.ErrInvalidToken)
}

// refresh starts a fetch unless one is in flight or the latest started within jwksMinInterval,
// and returns the channel that closes when the fetch in flight ends (nil when there is none).
func (s *keySet) refresh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fetching != nil || time.Since(s.tried) < jwksMinInterval {
		return s.fetching
	}
	s.tried = time.Now()
	done := make(chan struct{})
	s.fetching = done
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeout)
		defer cancel()
		set, err := s.fetch(ctx)
		if err == nil {
			s.fetched.Store(&fetchedKeys{set: set, at: time.Now()})
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.fetching, s.failure = nil, ""
		if err != nil {
			s.failure = uuid.NewString()[:8]
			s.log.Error("reading the authorization server's keys failed; tokens signed by keys not read yet are refused", "errorId", s.failure, "url", s.url, "error", err)
		}
	}()
	return done
}

// find is the public key of kid among the fetched keys.
func (f *fetchedKeys) find(kid string) (any, bool) {
	if f == nil {
		return nil, false
	}
	return only(f.set, kid)
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
