package bearer

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strings"
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

// TestJWKSOffTheRequestPath runs the key set against JWKS endpoints that are down, slow, and
// rotating: requests use the keys they have and wait at most jwksWait for a fetch they need, a
// caller that hangs up does not end the fetch, and no caller hears where the keys are.
func TestJWKSOffTheRequestPath(t *testing.T) {
	const aud = "https://mcp.example/mcp"
	newVerifier := func(t *testing.T, url string, log *bytes.Buffer) auth.TokenVerifier {
		t.Helper()
		verify, err := NewVerifier(Config{JWT: &JWT{Issuer: "https://auth.example", Audiences: []string{aud}, JWKSURL: url,
			Log: slog.New(slog.NewTextHandler(log, nil))}})
		if err != nil {
			t.Fatal(err)
		}
		return verify
	}
	timed := func(verify auth.TokenVerifier, ctx context.Context, token string) (*auth.TokenInfo, error, time.Duration) {
		start := time.Now()
		info, err := verify(ctx, token, nil)
		return info, err, time.Since(start)
	}
	defer func(i, w time.Duration) { jwksMinInterval, jwksWait = i, w }(jwksMinInterval, jwksWait)
	jwksMinInterval, jwksWait = 500*time.Millisecond, 300*time.Millisecond

	t.Run("down", func(t *testing.T) {
		is := bearertest.New(t, "https://auth.example")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := "http://" + ln.Addr().String() + "/jwks.json"
		ln.Close() // nothing listens: connection refused
		var log bytes.Buffer
		verify := newVerifier(t, down, &log)
		_, err, took := timed(verify, context.Background(), is.Token(t, "alice", aud, "", nil))
		id := regexp.MustCompile(`error id ([0-9a-f]{8})\)$`).FindStringSubmatch(fmt.Sprint(err))
		if !errors.Is(err, auth.ErrInvalidToken) || id == nil || took > time.Second ||
			err.Error() != "invalid token: the authorization server's keys cannot be read at the moment; retry in a minute (error id "+id[1]+")" {
			t.Fatalf("%v after %s", err, took)
		}
		if !strings.Contains(log.String(), "errorId="+id[1]) || !strings.Contains(log.String(), down) || !strings.Contains(log.String(), "connection refused") {
			t.Fatalf("the log does not say what failed under the error id:\n%s", log.String())
		}
	})

	t.Run("slow", func(t *testing.T) {
		is := bearertest.New(t, "https://auth.example")
		var log bytes.Buffer
		verify := newVerifier(t, is.URL, &log)
		good := is.Token(t, "alice", aud, "", nil)
		if _, err := verify(context.Background(), good, nil); err != nil {
			t.Fatal(err)
		}
		is.Delay.Store(int64(2 * time.Second))
		time.Sleep(jwksMinInterval)
		forged := is.Token(t, "mallory", aud, "", func(_ *bearertest.Claims, o *jose.SignerOptions) { o.WithHeader("kid", "forged") })
		forgedDone := make(chan time.Duration)
		go func() {
			_, err, took := timed(verify, context.Background(), forged)
			if err == nil || err.Error() != "invalid token: unknown signing key" {
				t.Errorf("a forged key id: %v", err)
			}
			forgedDone <- took
		}()
		for range 20 {
			if _, err, took := timed(verify, context.Background(), good); err != nil || took > 50*time.Millisecond {
				t.Fatalf("a token under a known key during a slow fetch: %v after %s", err, took)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if took := <-forgedDone; took > jwksWait+200*time.Millisecond {
			t.Fatalf("the forged key id waited %s for the slow fetch, want at most %s", took, jwksWait)
		}
	})

	t.Run("hang-up then rotation", func(t *testing.T) {
		is := bearertest.New(t, "https://auth.example")
		var log bytes.Buffer
		verify := newVerifier(t, is.URL, &log)
		if _, err := verify(context.Background(), is.Token(t, "alice", aud, "", nil), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(jwksMinInterval)
		is.Delay.Store(int64(200 * time.Millisecond))
		is.Rotate(t) // published, not used yet: the fetch a forged key id causes reads it
		fetches := is.Fetches.Load()
		ctx, hangUp := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer hangUp()
		forged := is.Token(t, "mallory", aud, "", func(_ *bearertest.Claims, o *jose.SignerOptions) { o.WithHeader("kid", "forged") })
		if _, err, took := timed(verify, ctx, forged); err == nil || took > 150*time.Millisecond {
			t.Fatalf("a forged key id whose caller hung up: %v after %s", err, took)
		}
		time.Sleep(300 * time.Millisecond) // the fetch goes on without its caller
		if _, err := verify(context.Background(), is.Token(t, "alice", aud, "", nil), nil); err != nil || is.Fetches.Load()-fetches != 1 {
			t.Fatalf("a token under the key the hung-up fetch read: %v, after %d fetches", err, is.Fetches.Load()-fetches)
		}
		// The issuer rotates again: the new key works within one refresh interval.
		is.Rotate(t)
		rotated := is.Token(t, "alice", aud, "", nil)
		start := time.Now()
		for {
			_, err := verify(context.Background(), rotated, nil)
			if err == nil {
				break
			}
			if time.Since(start) > jwksMinInterval+jwksWait {
				t.Fatalf("a token under the rotated key is refused %s after the rotation: %v", time.Since(start), err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := is.Fetches.Load() - fetches; n != 2 {
			t.Fatalf("%d fetches, want 2: the forged key id's and the rotated key's", n)
		}
		if strings.Contains(log.String(), "failed") {
			t.Fatalf("a fetch failed:\n%s", log.String())
		}
	})
}
