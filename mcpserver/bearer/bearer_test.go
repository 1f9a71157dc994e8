package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// issuer is a test authorization server: it signs tokens and serves its keys.
type issuer struct {
	keys    []*ecdsa.PrivateKey
	fetches atomic.Int64
	srv     *httptest.Server
}

func newIssuer(t *testing.T) *issuer {
	is := &issuer{}
	is.rotate(t)
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		var set jose.JSONWebKeySet
		for i, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid(i), Algorithm: "ES256", Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func kid(i int) string { return "key-" + string(rune('a'+i)) }

func (is *issuer) rotate(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.keys = append(is.keys, k)
}

// sign makes a token with the newest key, edited by the caller.
func (is *issuer) sign(t *testing.T, edit func(*claims, *jose.SignerOptions)) string {
	t.Helper()
	now := time.Now()
	c := claims{Claims: jwt.Claims{Issuer: "https://auth.example", Subject: "alice", Audience: jwt.Audience{"https://mcp.example/mcp"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}, Scope: "tools:read deploy"}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid(len(is.keys)-1))
	key := is.keys[len(is.keys)-1]
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

func TestJWTs(t *testing.T) {
	is := newIssuer(t)
	verify, err := NewVerifier(Config{JWT: &JWT{Issuer: "https://auth.example", Audiences: []string{"https://mcp.example/mcp"},
		JWKSURL: is.srv.URL, ClockSkew: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	info, err := verify(ctx, is.sign(t, nil), nil)
	if err != nil || info.UserID != "alice" || !slices.Equal(info.Scopes, []string{"tools:read", "deploy"}) || info.Expiration.IsZero() {
		t.Fatalf("a good token: %+v, %v", info, err)
	}

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, c := range map[string]struct {
		edit func(*claims, *jose.SignerOptions)
		want string
	}{
		"expired": {func(c *claims, _ *jose.SignerOptions) { c.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Minute)) }, "invalid token: expired"},
		"expired within skew": {func(c *claims, _ *jose.SignerOptions) {
			c.Expiry = jwt.NewNumericDate(time.Now().Add(-10 * time.Second))
		}, ""},
		"no expiry":      {func(c *claims, _ *jose.SignerOptions) { c.Expiry = nil }, "invalid token: no expiry"},
		"wrong audience": {func(c *claims, _ *jose.SignerOptions) { c.Audience = jwt.Audience{"https://other.example"} }, "invalid token: wrong audience"},
		"wrong issuer":   {func(c *claims, _ *jose.SignerOptions) { c.Issuer = "https://evil.example" }, "invalid token: wrong issuer"},
		"not yet valid":  {func(c *claims, _ *jose.SignerOptions) { c.NotBefore = jwt.NewNumericDate(time.Now().Add(time.Hour)) }, "invalid token: not valid yet"},
		"no subject":     {func(c *claims, _ *jose.SignerOptions) { c.Subject = "" }, "invalid token: no subject"},
		"scp list":       {func(c *claims, _ *jose.SignerOptions) { c.Scope, c.Scp = "", []string{"a", "b"} }, ""},
	} {
		_, err := verify(ctx, is.sign(t, c.edit), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, auth.ErrInvalidToken)):
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}

	// Signed by a key the issuer never published, under a known key id.
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: other}, (&jose.SignerOptions{}).WithHeader("kid", kid(0)))
	forged, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "https://auth.example", Subject: "mallory", Audience: jwt.Audience{"https://mcp.example/mcp"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if _, err := verify(ctx, forged, nil); err == nil || err.Error() != "invalid token: bad signature" {
		t.Fatalf("a forged signature: %v", err)
	}
	// An HMAC token keyed with the public key must not pass.
	hmac, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithHeader("kid", kid(0)))
	sym, _ := jwt.Signed(hmac).Claims(jwt.Claims{Issuer: "https://auth.example", Subject: "mallory"}).Serialize()
	if _, err := verify(ctx, sym, nil); err == nil || err.Error() != "invalid token: not a signed JWT" {
		t.Fatalf("an HS256 token: %v", err)
	}
	for _, junk := range []string{"", "a.b.c", "not-a-token", "eyJhbGciOiJub25lIn0.e30."} {
		if _, err := verify(ctx, junk, nil); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%q: %v", junk, err)
		}
	}

	// The issuer rotates: once jwksMinInterval has passed since the last fetch, a token under the
	// new key id makes one fetch; forged key ids after it make none for jwksMinInterval.
	defer func(d time.Duration) { jwksMinInterval = d }(jwksMinInterval)
	jwksMinInterval = 0
	before := is.fetches.Load()
	is.rotate(t)
	if info, err := verify(ctx, is.sign(t, nil), nil); err != nil || info.UserID != "alice" {
		t.Fatalf("a token under the rotated key: %v", err)
	}
	jwksMinInterval = time.Hour
	for range 20 {
		verify(ctx, is.sign(t, func(_ *claims, o *jose.SignerOptions) { o.WithHeader("kid", "forged") }), nil)
	}
	if n := is.fetches.Load() - before; n > 1 {
		t.Fatalf("%d JWKS fetches for one rotation and 20 forged key ids, want at most 1", n)
	}
}

func TestAPIKeys(t *testing.T) {
	verify, err := NewVerifier(Config{APIKeys: []APIKey{
		{Principal: "ci-bot", Key: "k-0123456789abcdef-ci", Scopes: []string{"deploy"}},
		{Principal: "nightly", Key: "k-0123456789abcdef-nightly"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := verify(context.Background(), "k-0123456789abcdef-ci", nil)
	if err != nil || info.UserID != "ci-bot" || !slices.Equal(info.Scopes, []string{"deploy"}) {
		t.Fatalf("a good key: %+v %v", info, err)
	}
	for _, bad := range []string{"k-0123456789abcdef-c", "k-0123456789abcdef-cii", "", "K-0123456789ABCDEF-CI"} {
		if _, err := verify(context.Background(), bad, nil); err == nil || err.Error() != "invalid token: unknown key" {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, c := range []Config{{}, {APIKeys: []APIKey{{Principal: "short", Key: "abc"}}}, {JWT: &JWT{Issuer: "x"}}} {
		if _, err := NewVerifier(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
