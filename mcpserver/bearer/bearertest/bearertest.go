// Package bearertest is an OAuth authorization server for tests: it signs JWT access tokens and
// serves its keys as a JWKS.
package bearertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer signs tokens with its newest key and serves all of its keys at URL.
type Issuer struct {
	// Name is the issuer (iss) of its tokens.
	Name string
	// URL serves the JWKS.
	URL string
	// Fetches counts the JWKS requests.
	Fetches atomic.Int64
	// Delay is how long the JWKS endpoint takes to answer, in nanoseconds (0: at once).
	Delay atomic.Int64

	mu   sync.Mutex
	keys []*ecdsa.PrivateKey
}

// Claims are what a token says.
type Claims struct {
	jwt.Claims
	Scope string   `json:"scope,omitempty"`
	Scp   []string `json:"scp,omitempty"`
}

// New starts an issuer with one key; it stops when the test ends.
func New(t testing.TB, name string) *Issuer {
	is := &Issuer{Name: name}
	is.Rotate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.Fetches.Add(1)
		select {
		case <-time.After(time.Duration(is.Delay.Load())):
		case <-r.Context().Done():
			return
		}
		is.mu.Lock()
		defer is.mu.Unlock()
		var set jose.JSONWebKeySet
		for i, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: KeyID(i), Algorithm: "ES256", Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// KeyID returns the id of the issuer's i-th key.
func KeyID(i int) string { return "key-" + string(rune('a'+i)) }

// Rotate adds a new key, which signs from now on.
func (is *Issuer) Rotate(t testing.TB) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append(is.keys, k)
}

// Token signs an access token for subject, valid for an hour for audience, with the scopes
// (space-separated); edit, when set, changes its claims and header before it is signed.
func (is *Issuer) Token(t testing.TB, subject, audience, scopes string, edit func(*Claims, *jose.SignerOptions)) string {
	t.Helper()
	now := time.Now()
	c := Claims{Claims: jwt.Claims{Issuer: is.Name, Subject: subject, Audience: jwt.Audience{audience},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}, Scope: strings.TrimSpace(scopes)}
	is.mu.Lock()
	i := len(is.keys) - 1
	key := is.keys[i]
	is.mu.Unlock()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", KeyID(i))
	if edit != nil {
		edit(&c, opts)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
