package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
)

func TestJWTs(t *testing.T) {
	is := bearertest.New(t, "https://auth.example")
	const aud = "https://mcp.example/mcp"
	sign := func(edit func(*bearertest.Claims, *jose.SignerOptions)) string {
		return is.Token(t, "alice", aud, "tools:read deploy", edit)
	}
	verify, err := NewVerifier(Config{JWT: &JWT{Issuer: "https://auth.example", Audiences: []string{aud},
		JWKSURL: is.URL, ClockSkew: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	info, err := verify(ctx, sign(nil), nil)
	if err != nil || info.UserID != "oauth:alice" || !slices.Equal(info.Scopes, []string{"tools:read", "deploy"}) || info.Expiration.IsZero() {
		t.Fatalf("a good token: %+v, %v", info, err)
	}

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, c := range map[string]struct {
		edit func(*bearertest.Claims, *jose.SignerOptions)
		want string
	}{
		"expired": {func(c *bearertest.Claims, _ *jose.SignerOptions) {
			c.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Minute))
		}, "invalid token: expired"},
		"expired within skew": {func(c *bearertest.Claims, _ *jose.SignerOptions) {
			c.Expiry = jwt.NewNumericDate(time.Now().Add(-10 * time.Second))
		}, ""},
		"no expiry":      {func(c *bearertest.Claims, _ *jose.SignerOptions) { c.Expiry = nil }, "invalid token: no expiry"},
		"wrong audience": {func(c *bearertest.Claims, _ *jose.SignerOptions) { c.Audience = jwt.Audience{"https://other.example"} }, "invalid token: wrong audience"},
		"wrong issuer":   {func(c *bearertest.Claims, _ *jose.SignerOptions) { c.Issuer = "https://evil.example" }, "invalid token: wrong issuer"},
		"not yet valid": {func(c *bearertest.Claims, _ *jose.SignerOptions) {
			c.NotBefore = jwt.NewNumericDate(time.Now().Add(time.Hour))
		}, "invalid token: not valid yet"},
		"no subject": {func(c *bearertest.Claims, _ *jose.SignerOptions) { c.Subject = "" }, "invalid token: no subject"},
		"scp list":   {func(c *bearertest.Claims, _ *jose.SignerOptions) { c.Scope, c.Scp = "", []string{"a", "b"} }, ""},
	} {
		_, err := verify(ctx, sign(c.edit), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, auth.ErrInvalidToken)):
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}

	// Signed by a key the issuer never published, under a known key id.
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: other}, (&jose.SignerOptions{}).WithHeader("kid", bearertest.KeyID(0)))
	forged, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "https://auth.example", Subject: "mallory", Audience: jwt.Audience{"https://mcp.example/mcp"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if _, err := verify(ctx, forged, nil); err == nil || err.Error() != "invalid token: bad signature" {
		t.Fatalf("a forged signature: %v", err)
	}
	// An HMAC token keyed with the public key must not pass.
	hmac, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithHeader("kid", bearertest.KeyID(0)))
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
	before := is.Fetches.Load()
	is.Rotate(t)
	if info, err := verify(ctx, sign(nil), nil); err != nil || info.UserID != "oauth:alice" {
		t.Fatalf("a token under the rotated key: %v", err)
	}
	jwksMinInterval = time.Hour
	for range 20 {
		verify(ctx, sign(func(_ *bearertest.Claims, o *jose.SignerOptions) { o.WithHeader("kid", "forged") }), nil)
	}
	if n := is.Fetches.Load() - before; n > 1 {
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
	// A key's principal may not be named as an OAuth subject's or the local one.
	for i, p := range []string{"oauth:alice", "local", "a:b"} {
		_, err := NewVerifier(Config{APIKeys: []APIKey{{Principal: p, Key: "k-0123456789abcdef"}}})
		want := fmt.Sprintf(`bearer: API key 1: the principal %q could be taken for another kind of caller: use letters, digits and ._@/-, and not "local"`, p)
		if err == nil || err.Error() != want {
			t.Errorf("principal %d %q: %v", i, p, err)
		}
	}
}
