package mapping

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestAuthAndAllow(t *testing.T) {
	set, err := Parse("/etc/taskgate/m.yaml", []byte(`
engines:
  prod: {alpha: {url: "http://x"}, allow: {scopes: [prod]}}
  dev: {alpha: {url: "http://y"}}
tools:
  - {name: deploy, description: d, engine: prod, work: {name: A}, inputSchema: {type: object}, allow: {scopes: [deploy], principals: [alice, ci-bot]}}
  - {name: report, description: d, engine: prod, work: {name: B}, inputSchema: {type: object}}
  - {name: play, description: d, engine: dev, work: {name: C}, inputSchema: {type: object}}
auth:
  oauth:
    issuer: https://auth.example
    audience: [https://mcp.example/mcp, https://mcp2.example/mcp]
    keyFiles: [keys/issuer.pem, /abs/other.pem]
    scopes: [mcp]
  apiKeys:
    - {principal: ci-bot, keyEnv: TASKGATE_KEY_CI, scopes: [deploy, prod]}
  origins: ["https://console.example", "*"]
  hosts: [mcp.example]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Auth{
		OAuth: &OAuth{Issuer: "https://auth.example", Audiences: []string{"https://mcp.example/mcp", "https://mcp2.example/mcp"},
			KeyFiles: []string{"/etc/taskgate/keys/issuer.pem", "/abs/other.pem"}, ClockSkew: 30 * time.Second, Scopes: []string{"mcp"},
			AuthorizationServers: []string{"https://auth.example"}, Resource: "https://mcp.example/mcp"},
		APIKeys: []APIKey{{Principal: "ci-bot", KeyEnv: "TASKGATE_KEY_CI", Scopes: []string{"deploy", "prod"}}},
		Origins: []string{"https://console.example", "*"}, Hosts: []string{"mcp.example"}, Source: "/etc/taskgate/m.yaml:9",
	}
	if !reflect.DeepEqual(set.Auth, want) {
		t.Errorf("auth = %+v\nwant %+v", set.Auth, want)
	}
	deploy, _ := set.Tool("deploy")
	report, _ := set.Tool("report")
	play, _ := set.Tool("play")
	for _, c := range []struct {
		tool      *Tool
		principal string
		scopes    []string
		admits    bool
		missing   []string
	}{
		{deploy, "alice", []string{"deploy"}, true, nil},
		{deploy, "bob", []string{"deploy"}, false, nil},
		{deploy, "alice", []string{"prod"}, true, []string{"deploy"}},
		{report, "bob", []string{"prod"}, true, nil}, // the engine's allow
		{report, "bob", nil, true, []string{"prod"}},
		{play, "anyone", nil, true, nil},
	} {
		admits, missing := c.tool.Allow.Admits(c.principal), c.tool.Allow.Missing(c.scopes)
		if admits != c.admits || !reflect.DeepEqual(missing, c.missing) {
			t.Errorf("%s for %s with %v: %v %v, want %v %v", c.tool.Name, c.principal, c.scopes, admits, missing, c.admits, c.missing)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "b.yaml"} {
		os.WriteFile(filepath.Join(dir, f), []byte("auth: {apiKeys: [{principal: a, keyEnv: A}]}\n"), 0o600)
	}
	_, err = Load(dir)
	if want := filepath.Join(dir, "b.yaml") + `:1:1: auth: is already defined at ` + filepath.Join(dir, "a.yaml") + `:1 (keep one auth: block for the whole set of mapping files)`; err == nil || err.Error() != want {
		t.Fatalf("two auth: blocks: %v, want %s", err, want)
	}
}
