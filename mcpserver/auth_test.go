package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/bearer"
	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const (
	aliceKey = "alice-0123456789abcdef"
	bobKey   = "bob-0123456789abcdef"
	audience = "https://taskgate.example/mcp"
)

// authEnv serves the test tools to callers with API keys (alice, bob) or JWTs of a test issuer,
// with the changes of more to the server's configuration.
func authEnv(t *testing.T, more ...func(*mcpserver.Config)) (*env, *bearertest.Issuer) {
	t.Helper()
	is := bearertest.New(t, "https://auth.example")
	verify, err := bearer.NewVerifier(bearer.Config{
		APIKeys: []bearer.APIKey{{Principal: "alice", Key: aliceKey}, {Principal: "bob", Key: bobKey}},
		JWT:     &bearer.JWT{Issuer: is.Name, Audiences: []string{audience}, JWKSURL: is.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.HTTPAuth = &mcpserver.HTTPAuth{Verify: verify, ResourceMetadataURL: "https://taskgate.example/.well-known/oauth-protected-resource"}
		for _, f := range more {
			f(c)
		}
	})
	return e, is
}

func (e *env) as(token string, extensions ...string) *rpctest.Client {
	return rpctest.Modern(rpctest.HTTP{URL: e.url, Header: http.Header{"Authorization": {"Bearer " + token}}}, extensions...)
}

// TestCallersSeeOnlyTheirOwnTasks: a task id is bound to the principal that started it; to any
// other it is an unknown id, in every dialect, and the workflow is untouched.
func TestCallersSeeOnlyTheirOwnTasks(t *testing.T) {
	e, is := authEnv(t)
	for name, tokens := range map[string][2]string{
		"api keys": {aliceKey, bobKey},
		"jwts":     {is.Token(t, "alice", audience, "", nil), is.Token(t, "bob", audience, "", nil)},
	} {
		t.Run(name, func(t *testing.T) {
			alice, bob := e.as(tokens[0], ext), e.as(tokens[1], ext)
			id := call(t, alice, "wait_and_echo", map[string]any{"seconds": 60, "text": "alice's"})["taskId"].(string)
			ref := e.ref(t, id)
			_, unknown := bob.Call(t, "tasks/get", map[string]any{"taskId": "never-issued"})
			for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
				_, rerr := bob.Call(t, m, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
				if rerr == nil || rerr.Code != unknown.Code || rerr.Message != unknown.Message {
					t.Errorf("bob's %s of alice's task: %v, want what an unknown id gets: %v", m, rerr, unknown)
				}
			}
			legacyBob := rpctest.Legacy(rpctest.HTTP{URL: e.url, Header: http.Header{"Authorization": {"Bearer " + tokens[1]}}})
			if _, rerr := legacyBob.Call(t, "tasks/get", map[string]any{"taskId": id}); rerr == nil || rerr.Message != unknown.Message {
				t.Errorf("bob's 2025-11-25 tasks/get of alice's task: %v", rerr)
			}
			for _, tool := range []string{"task_status", "task_result", "task_cancel"} {
				r := call(t, e.as(tokens[1]), tool, map[string]any{"handle": id})
				if r["isError"] != true || firstText(t, r) != tool+": "+unknown.Message {
					t.Errorf("bob's %s of alice's task: %v", tool, r)
				}
			}
			if st, err := e.engine.Describe(context.Background(), adapters.Target{}, ref); err != nil || st.State.Terminal() {
				t.Fatalf("alice's workflow after bob's attempts: %v %v", st.Native, err)
			}
			if got := alice.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
				t.Fatalf("alice reads her task: %v", got)
			}
			alice.Decode(t, "tasks/cancel", map[string]any{"taskId": id})

			// SEP-1391 client tokens are scoped by principal: the same token names different operations.
			sepAlice, sepBob := e.as(tokens[0]), e.as(tokens[1])
			sepAlice.Experimental, sepBob.Experimental = []string{"sep1391"}, []string{"sep1391"}
			clientToken := "nightly-report-" + uuid.NewString()
			args := map[string]any{"seconds": 0, "text": "alice's report"}
			sepAlice.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": args, "operation": map[string]any{"token": clientToken}})
			pollOperation(t, sepAlice, clientToken, "completed")
			_, rerr := sepBob.Call(t, "tools/async/result", map[string]any{"token": clientToken})
			wantError(t, "bob reads alice's client token", rerr, -32602, "Failed to retrieve operation: Operation not found")
			sepBob.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "bob's"}, "operation": map[string]any{"token": clientToken}})
			pollOperation(t, sepBob, clientToken, "completed")
			if r := sepBob.Decode(t, "tools/async/result", map[string]any{"token": clientToken}); !strings.Contains(jsonOf(r), "bob's") {
				t.Fatalf("bob's own operation under the same token: %v", r)
			}
		})
	}
}

// TestUnauthenticatedRequestsStartNothing: no token, a wrong one, an expired or wrong-audience
// JWT, a forged signature: 401 with a Bearer challenge, and no engine call.
func TestUnauthenticatedRequestsStartNothing(t *testing.T) {
	e, is := authEnv(t)
	expired := is.Token(t, "alice", audience, "", func(c *bearertest.Claims, _ *jose.SignerOptions) {
		c.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","arguments":{"seconds":1,"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	for name, authz := range map[string]string{
		"no token":       "",
		"not bearer":     "Basic YWxpY2U6eA==",
		"wrong key":      "Bearer alice-0123456789abcdeX",
		"expired jwt":    "Bearer " + expired,
		"wrong audience": "Bearer " + is.Token(t, "alice", "https://elsewhere.example/mcp", "", nil),
		"other issuer":   "Bearer " + bearertest.New(t, "https://auth.example").Token(t, "alice", audience, "", nil),
	} {
		req := modernRequest(context.Background(), e.url, body, "tools/call", "wait_and_echo")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, "resource_metadata=") {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %q", name, resp.StatusCode, challenge)
		}
	}
	if n := e.count.starts.Load(); n != 0 {
		t.Fatalf("%d executions started without a valid token", n)
	}
}

// TestMalformedBodiesAreRefusedBeforeAuthentication: a small body that is not one message gets
// 400 whatever its credentials, and no token is verified for it; a large one, or a small one
// while the unauthenticated bodies' pool is full, is authenticated first (401 without a token),
// then refused as well.
func TestMalformedBodiesAreRefusedBeforeAuthentication(t *testing.T) {
	var verified atomic.Int64
	countVerifications := func(c *mcpserver.Config) {
		verify := c.HTTPAuth.Verify
		c.HTTPAuth.Verify = func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
			verified.Add(1)
			return verify(ctx, token, r)
		}
	}
	e, is := authEnv(t, countVerifications)
	poll := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`
	malformed := map[string]string{
		"trailing data":      poll + "}",
		"a case-folded twin": `{"jsonrpc":"2.0","id":1,"method":"tasks/get","METHOD":"ping","params":{"taskId":"x"}}`,
		"an escaped twin":    `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x","task\u0049d":"y"}}`,
		"invalid UTF-8":      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"\xff\"}}",
		"not JSON":           `{"jsonrpc":`,
		"a batch":            "[" + poll + "]",
	}
	credentials := map[string]string{"none": "", "an API key": "Bearer " + aliceKey, "a forged key": "Bearer alice-0123456789abcdeX",
		"a JWT": "Bearer " + is.Token(t, "alice", audience, "", nil)}
	for what, body := range malformed {
		for who, authz := range credentials {
			h := headers("2025-11-25", "tasks/get")
			if authz != "" {
				h.Set("Authorization", authz)
			}
			got := exchangeWith(t, e.url, body, h)
			if got.status != http.StatusBadRequest || !strings.Contains(got.body, `"code":-3260`) && !strings.Contains(got.body, `"code":-32700`) {
				t.Errorf("%s, credentials %s: HTTP %d %s", what, who, got.status, got.body)
			}
		}
	}
	if n := verified.Load(); n != 0 {
		t.Errorf("%d tokens verified for malformed bodies", n)
	}

	large := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x","pad":"` + strings.Repeat("p", 70<<10) + `"}}}`
	if got := exchangeWith(t, e.url, large, headers("2025-11-25", "tasks/get")); got.status != http.StatusUnauthorized {
		t.Errorf("a large malformed body without a token: HTTP %d %s", got.status, got.body)
	}
	h := headers("2025-11-25", "tasks/get")
	h.Set("Authorization", "Bearer "+aliceKey)
	if got := exchangeWith(t, e.url, large, h); got.status != http.StatusBadRequest {
		t.Errorf("a large malformed body of alice's: HTTP %d %s", got.status, got.body)
	}

	full, _ := authEnv(t, func(c *mcpserver.Config) { c.Limits.BodyBudget = 16 * 64 })
	if got := exchangeWith(t, full.url, malformed["trailing data"]+strings.Repeat(" ", 64), headers("2025-11-25", "tasks/get")); got.status != http.StatusUnauthorized {
		t.Errorf("a small malformed body without a token, beyond the unauthenticated bodies' pool: HTTP %d %s", got.status, got.body)
	}
}

// TestOriginsAndHosts: a browser page of another origin gets 403, and so does a Host the operator
// did not list.
func TestOriginsAndHosts(t *testing.T) {
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		c.AllowedOrigins = []string{"https://console.example"}
	})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for origin, want := range map[string]int{"": 200, "https://console.example": 200, "http://attacker.example": 403, "null": 403, "http://127.0.0.1:6274": 200} {
		req := modernRequest(context.Background(), e.url, ping, "ping", "")
		req.Header.Del("Mcp-Protocol-Version")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %q: HTTP %d, want %d", origin, resp.StatusCode, want)
		}
	}
	hosts := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) { c.AllowedHosts = []string{"mcp.example"} })
	for host, want := range map[string]int{"mcp.example": 200, "mcp.example:443": 200, "attacker.example": 403} {
		req := modernRequest(context.Background(), hosts.url, ping, "ping", "")
		req.Header.Del("Mcp-Protocol-Version")
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: HTTP %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// recorder keeps every response a test client reads.
type recorder struct {
	mu   sync.Mutex
	seen strings.Builder
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(&r.seen, "%d %v\n%s\n", resp.StatusCode, resp.Header, body)
	return resp, nil
}

// TestNoSecretInLogsOrAnswers runs a session of good and bad calls with API keys and JWTs and
// finds no key, token or token key in any log line or response.
func TestNoSecretInLogsOrAnswers(t *testing.T) {
	logs := &panicLog{}
	is := bearertest.New(t, "https://auth.example")
	verify, _ := bearer.NewVerifier(bearer.Config{
		APIKeys: []bearer.APIKey{{Principal: "alice", Key: aliceKey}},
		JWT:     &bearer.JWT{Issuer: is.Name, Audiences: []string{audience}, JWKSURL: is.URL},
	})
	tokenKey := token.NewKey("secret")
	keys, _ := token.ParseKeys(tokenKey)
	sealed, _ := token.NewSealed(keys)
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.Logger, tc.Logger, tc.Audit, tc.Tokens = log, log, log, sealed
		c.HTTPAuth = &mcpserver.HTTPAuth{Verify: verify}
	})
	rec := &recorder{}
	defer func(t http.RoundTripper) { http.DefaultClient.Transport = t }(http.DefaultClient.Transport)
	http.DefaultClient.Transport = rec

	jwtToken := is.Token(t, "bob", audience, "", nil)
	for _, bad := range []string{aliceKey + "x", jwtToken[:len(jwtToken)-3] + "abc"} {
		req := modernRequest(context.Background(), e.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "tools/list", "")
		req.Header.Set("Authorization", "Bearer "+bad)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	for _, bearerToken := range []string{aliceKey, jwtToken} {
		c := e.as(bearerToken, ext)
		raw, rerr := c.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "secret-free"}})
		if rerr != nil {
			continue
		}
		var created map[string]any
		mustUnmarshal(t, raw, &created)
		if id, ok := created["taskId"].(string); ok {
			waitFor(t, c, id, "completed")
			c.Call(t, "tasks/cancel", map[string]any{"taskId": id})
		}
		c.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": "bad"}})
		c.Call(t, "tasks/get", map[string]any{"taskId": "forged"})
	}
	_, secret, _ := strings.Cut(tokenKey, ":")
	for what, text := range map[string]string{"logs": logs.buf.String(), "responses": rec.seen.String()} {
		for name, s := range map[string]string{"API key": aliceKey, "JWT": jwtToken, "JWT signature": jwtToken[strings.LastIndex(jwtToken, ".")+1:], "token key": secret} {
			if strings.Contains(text, s) {
				t.Errorf("the %s shows the %s", what, name)
			}
		}
	}
	if !strings.Contains(rec.seen.String(), "secret-free") {
		t.Fatal("the session recorded no successful call")
	}
}

// TestToolsPerCaller: a caller sees the tools its allow grants, and an OAuth caller also those it
// lacks scopes for, whose call answers 403 with the scopes it needs (for its client to ask for
// them, step-up); nothing starts.
func TestToolsPerCaller(t *testing.T) {
	e, is := authEnv(t)
	deployer := is.Token(t, "carol", audience, "deploy", nil)
	for name, c := range map[string]struct {
		token      string
		sees, hide []string
	}{
		"alice (key, no scopes)": {aliceKey, []string{"echo_for_alice", "wait_and_echo"}, []string{"echo_deploy_scope"}},
		"bob (key, no scopes)":   {bobKey, []string{"wait_and_echo"}, []string{"echo_deploy_scope", "echo_for_alice"}},
		"carol (jwt, deploy)":    {deployer, []string{"echo_deploy_scope", "wait_and_echo"}, []string{"echo_for_alice"}},
		"dave (jwt, read)":       {is.Token(t, "dave", audience, "read", nil), []string{"echo_deploy_scope", "wait_and_echo"}, []string{"echo_for_alice"}},
	} {
		tools := toolsByName(t, e.as(c.token, ext))
		for _, n := range c.sees {
			if tools[n] == nil {
				t.Errorf("%s does not see %s", name, n)
			}
		}
		for _, n := range c.hide {
			if tools[n] != nil {
				t.Errorf("%s sees %s", name, n)
			}
		}
	}
	before := e.count.starts.Load()
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo_deploy_scope","arguments":{"seconds":0,"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	req := modernRequest(context.Background(), e.url, body, "tools/call", "echo_deploy_scope")
	req.Header.Set("Authorization", "Bearer "+is.Token(t, "dave", audience, "read", nil))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if challenge := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) ||
		!strings.Contains(challenge, `scope="deploy"`) || !strings.Contains(string(raw), `tool \"echo_deploy_scope\" is not available to oauth:dave: it needs the scopes deploy`) {
		t.Fatalf("dave calls echo_deploy_scope: HTTP %d %q %s", resp.StatusCode, challenge, raw)
	}
	created := call(t, e.as(deployer, ext), "echo_deploy_scope", map[string]any{"seconds": 0, "text": "carol's"})
	if created["taskId"] == nil {
		t.Fatalf("carol calls echo_deploy_scope: %v", created)
	}
	if n := e.count.starts.Load() - before; n != 1 {
		t.Fatalf("%d starts, want carol's only", n)
	}
}

// TestNativeIDsAreBoundToo: with native ids (the engine's own), whose an execution is is read
// from the id itself: another caller's id is not found, with no engine call.
func TestNativeIDsAreBoundToo(t *testing.T) {
	verify, _ := bearer.NewVerifier(bearer.Config{APIKeys: []bearer.APIKey{{Principal: "alice", Key: aliceKey}, {Principal: "bob", Key: bobKey}}})
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		tc.Tokens = token.Native{Refs: tc.Mapping}
		c.HTTPAuth = &mcpserver.HTTPAuth{Verify: verify}
	})
	alice, bob := e.as(aliceKey, ext), e.as(bobKey, ext)
	id := call(t, alice, "wait_and_echo", map[string]any{"seconds": 30, "text": "native"})["taskId"].(string)
	if !strings.HasPrefix(id, "taskgate/WaitAndEcho/") {
		t.Fatalf("not a native id: %s", id)
	}
	reads := e.count.reads.Load()
	_, unknown := bob.Call(t, "tasks/get", map[string]any{"taskId": "taskgate/WaitAndEcho/x/" + uuid.NewString()})
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		_, rerr := bob.Call(t, m, map[string]any{"taskId": id})
		if rerr == nil || rerr.Message != unknown.Message {
			t.Errorf("bob's %s of alice's native id: %v, want %v", m, rerr, unknown)
		}
	}
	if n := e.count.reads.Load() - reads; n != 0 {
		t.Fatalf("bob's attempts made %d engine reads", n)
	}
	if got := alice.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] == nil {
		t.Fatalf("alice reads her native id: %v", got)
	}
	alice.Decode(t, "tasks/cancel", map[string]any{"taskId": id})
}

// TestTasksListShowsOnlyOwnTasks: on 2025-11-25, tasks/list lists the caller's tasks, every page
// of them, and no other caller's.
func TestTasksListShowsOnlyOwnTasks(t *testing.T) {
	e, _ := authEnv(t)
	legacyAs := func(key string) *rpctest.Client {
		return rpctest.Legacy(rpctest.HTTP{URL: e.url, Header: http.Header{"Authorization": {"Bearer " + key}}})
	}
	alice, bob := legacyAs(aliceKey), legacyAs(bobKey)
	start := func(c *rpctest.Client) adapters.Ref {
		r := c.Decode(t, "tools/call", map[string]any{"name": "echo_unpolled", "arguments": map[string]any{}, "task": map[string]any{}})
		return e.ref(t, r["task"].(map[string]any)["taskId"].(string))
	}
	mine := map[adapters.Ref]bool{start(alice): true, start(alice): true, start(alice): true}
	bobs := start(bob)
	listed := map[adapters.Ref]bool{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		clear(listed)
		cursor := ""
		for pages := 0; pages < 100; pages++ {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			page := alice.Decode(t, "tasks/list", params)
			for _, task := range page["tasks"].([]any) {
				// Read as of the task's creation: a listed task of another test may expire meanwhile.
				claims, err := e.tokens.Open(task.(map[string]any)["taskId"].(string), time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				listed[claims.Ref] = true
			}
			next, _ := page["nextCursor"].(string)
			if cursor = next; cursor == "" {
				break
			}
		}
		if len(listed) >= len(mine) && func() bool {
			for r := range mine {
				if !listed[r] {
					return false
				}
			}
			return true
		}() || time.Now().After(deadline) {
			break
		}
	}
	for r := range mine {
		if !listed[r] {
			t.Errorf("alice's task %v is not listed", r)
		}
	}
	if listed[bobs] {
		t.Errorf("bob's task %v is in alice's list", bobs)
	}
	_, rerr := alice.Call(t, "tasks/list", map[string]any{"cursor": "not-a-cursor"})
	wantError(t, "a forged cursor", rerr, -32602, "Failed to list tasks: the cursor is not one tasks/list gave")
}

// TestPrincipalsCannotCollide: an OAuth subject named like an API-key principal is another
// principal (oauth:alice): it neither reads alice's tasks nor uses her tools, and a task id that
// taskgate issued to API-key alice before principals carried their kind (and before callers were
// keyed) is still hers.
func TestPrincipalsCannotCollide(t *testing.T) {
	var legacy struct{ TokenKey, Caller, TaskID string }
	raw, err := os.ReadFile("testdata/legacy-task-id.json")
	if err != nil {
		t.Fatal(err)
	}
	mustUnmarshal(t, raw, &legacy)
	is := bearertest.New(t, "https://auth.example")
	verify, err := bearer.NewVerifier(bearer.Config{
		APIKeys: []bearer.APIKey{{Principal: "alice", Key: aliceKey}, {Principal: "bob", Key: bobKey}},
		JWT:     &bearer.JWT{Issuer: is.Name, Audiences: []string{audience}, JWKSURL: is.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := token.ParseKeys(legacy.TokenKey)
	sealed, _ := token.NewSealed(keys)
	audit := &panicLog{}
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {
		tc.Tokens, tc.Audit = sealed, slog.New(slog.NewJSONHandler(audit, nil))
		c.HTTPAuth = &mcpserver.HTTPAuth{Verify: verify}
	})
	alice, bob, oauthAlice := e.as(aliceKey, ext), e.as(bobKey, ext), e.as(is.Token(t, "alice", audience, "", nil), ext)

	id := call(t, alice, "wait_and_echo", map[string]any{"seconds": 60, "text": "alice's"})["taskId"].(string)
	defer alice.Call(t, "tasks/cancel", map[string]any{"taskId": id})
	claims, _ := e.tokens.Open(id, time.Now())
	if claims.Caller == "" || claims.Caller == legacy.Caller {
		t.Fatalf("API-key alice's new tasks carry the caller %q, want one keyed by the deployment's secret, not the plain hash of before", claims.Caller)
	}
	_, unknown := oauthAlice.Call(t, "tasks/get", map[string]any{"taskId": "never-issued"})
	reads := e.count.reads.Load()
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if _, rerr := oauthAlice.Call(t, m, map[string]any{"taskId": id}); rerr == nil || rerr.Message != unknown.Message {
			t.Errorf("oauth:alice's %s of API-key alice's task: %v, want %v", m, rerr, unknown)
		}
	}
	if n := e.count.reads.Load() - reads; n != 0 {
		t.Fatalf("oauth:alice's attempts made %d engine reads", n)
	}
	if tools := toolsByName(t, oauthAlice); tools["echo_for_alice"] != nil || tools["wait_and_echo"] == nil {
		t.Errorf("oauth:alice sees %v", tools)
	}
	before := e.count.starts.Load()
	if r, rerr := oauthAlice.Call(t, "tools/call", map[string]any{"name": "echo_for_alice", "arguments": map[string]any{"seconds": 0, "text": "x"}}); rerr == nil {
		t.Errorf("oauth:alice called echo_for_alice: %s", r)
	}
	if e.count.starts.Load() != before {
		t.Fatal("oauth:alice started alice's tool")
	}
	call(t, oauthAlice, "wait_and_echo", map[string]any{"seconds": 0, "text": "oauth alice's"})
	if !strings.Contains(audit.buf.String(), `"principal":"oauth:alice"`) || !strings.Contains(audit.buf.String(), `"principal":"alice"`) {
		t.Errorf("the audit log does not tell the two alices apart:\n%s", audit.buf.String())
	}

	// The id minted by the old code reaches the engine for API-key alice only: the engine then
	// says it has no such execution (it was never started), which the others never get to ask.
	for who, c := range map[string]*rpctest.Client{"alice": alice, "bob": bob, "oauth:alice": oauthAlice} {
		reads := e.count.reads.Load()
		_, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": legacy.TaskID})
		wantError(t, who+" reads the old id", rerr, -32602, unknown.Message)
		if n, want := e.count.reads.Load()-reads, map[bool]int64{true: 1, false: 0}[who == "alice"]; n != want {
			t.Errorf("%s's read of the old id made %d engine reads, want %d", who, n, want)
		}
	}
}

// TestHiddenToolsAreUnknown: a tool the caller may not see is answered exactly as a tool that
// does not exist (the same HTTP status, error code and message shape), through the HTTP front,
// on go-sdk's path, and on a connection of its own; an API key lacking a tool's scopes cannot get
// them, so for it that tool is hidden too.
func TestHiddenToolsAreUnknown(t *testing.T) {
	e, _ := authEnv(t)
	var sdkServed atomic.Int64
	fastH, sdkH := e.srv.HTTPHandlers(&sdkServed)
	fast, sdk := httptest.NewServer(fastH), httptest.NewServer(sdkH)
	defer fast.Close()
	defer sdk.Close()
	for _, hidden := range []string{"echo_for_alice", "echo_deploy_scope"} {
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			for path, url := range map[string]string{"front": e.url, "fast path": fast.URL, "go-sdk": sdk.URL} {
				answer := func(tool string) httpExchange {
					meta, h := "", headers(version, "tools/call")
					if version == "2026-07-28" {
						meta = `,"_meta":` + modernMeta
						h.Set("Mcp-Name", tool)
					}
					h.Set("Authorization", "Bearer "+bobKey)
					return exchangeWith(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"seconds":0,"text":"x"}`+meta+`}}`, h)
				}
				got, unknown := answer(hidden), answer("no_such_tool_at_all")
				if got.status != unknown.status || strings.ReplaceAll(got.body, hidden, "T") != strings.ReplaceAll(unknown.body, "no_such_tool_at_all", "T") ||
					!strings.Contains(got.body, `unknown tool \"`+hidden+`\"`) {
					t.Errorf("bob calls %s (%s, %s): HTTP %d %s\nan unknown tool: HTTP %d %s", hidden, version, path, got.status, got.body, unknown.status, unknown.body)
				}
			}
		}
		// A connection of bob's own (in-memory, as stdio), without the HTTP front.
		ct, st := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(tasks.WithPrincipal(context.Background(), "bob"))
		go e.srv.Serve(ctx, st)
		conn, err := ct.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := rpctest.Modern(&rpctest.Conn{C: conn}, ext)
		_, got := c.Call(t, "tools/call", map[string]any{"name": hidden, "arguments": map[string]any{"seconds": 0, "text": "x"}})
		_, unknown := c.Call(t, "tools/call", map[string]any{"name": "no_such_tool_at_all", "arguments": map[string]any{}})
		if got == nil || unknown == nil || got.Code != unknown.Code || got.Message != fmt.Sprintf("unknown tool %q", hidden) {
			t.Errorf("bob calls %s on a connection: %v, an unknown tool: %v", hidden, got, unknown)
		}
		conn.Close()
		cancel()
	}
	if n := e.count.starts.Load(); n != 0 {
		t.Fatalf("%d executions started", n)
	}
}
