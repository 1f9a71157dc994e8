package mapping

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/taskgate/taskgate/adapters/driver"
)

// Auth is how HTTP callers authenticate: the auth: block, which one mapping file of a set holds.
type Auth struct {
	// OAuth accepts access tokens of an authorization server (MCP authorization).
	OAuth *OAuth
	// APIKeys are keys for internal callers, sent as bearer tokens.
	APIKeys []APIKey
	// Origins are browser origins allowed besides a page's own ("*": any); Hosts, when set, the
	// only Host headers served.
	Origins, Hosts []string
	// Source is where the block is, "file:line".
	Source string
}

// OAuth is taskgate as an OAuth resource server.
type OAuth struct {
	// Issuer must be the tokens' iss.
	Issuer string
	// Audiences: a token's aud must name one.
	Audiences []string
	// JWKSURL is where the issuer publishes its keys; KeyFiles are PEM public keys instead.
	JWKSURL  string
	KeyFiles []string
	// ClockSkew tolerates clocks that disagree on expiry. Default 30s.
	ClockSkew time.Duration
	// Scopes are required of every caller.
	Scopes []string
	// AuthorizationServers are named in the protected resource metadata. Default: the issuer.
	AuthorizationServers []string
	// Resource is this server's resource identifier, its MCP endpoint's URL. Default: the first
	// audience.
	Resource string
}

// APIKey is a key for one principal, held in an environment variable.
type APIKey struct {
	Principal string
	// KeyEnv names the variable that holds the key; the key itself is never in a mapping file.
	KeyEnv string
	Scopes []string
}

// Allow restricts a tool to callers with every one of Scopes, or to Principals, or both.
type Allow struct {
	Scopes, Principals []string
}

// Admits reports whether the allow names principal, or names no principal.
func (a *Allow) Admits(principal string) bool {
	return a == nil || len(a.Principals) == 0 || slices.Contains(a.Principals, principal)
}

// Missing lists the scopes the allow needs that scopes lacks.
func (a *Allow) Missing(scopes []string) (missing []string) {
	if a == nil {
		return nil
	}
	for _, s := range a.Scopes {
		if !slices.Contains(scopes, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

const defaultClockSkew = 30 * time.Second

// Principal names carry their kind, so that no caller of one kind can be named as one of another:
// an API key's principal is named as configured and never holds ':' (ValidKeyPrincipal), an
// OAuth access token's is "oauth:" and its subject (OAuthPrincipal), and LocalPrincipal is the
// user who started taskgate (stdio, and HTTP without auth:).
const LocalPrincipal = "local"

const oauthPrefix = "oauth:"

// OAuthPrincipal returns the principal of an OAuth access token whose subject is sub.
func OAuthPrincipal(sub string) string { return oauthPrefix + sub }

// IsOAuthPrincipal reports whether principal is an OAuth access token's: one whose scopes its
// authorization server can widen (step-up authorization).
func IsOAuthPrincipal(principal string) bool { return strings.HasPrefix(principal, oauthPrefix) }

// ValidKeyPrincipal reports whether an API key may stand for principal: 1 to 128 letters,
// digits and ._@/-, and not the local principal.
func ValidKeyPrincipal(principal string) bool {
	return keyPrincipalRE.MatchString(principal) && principal != LocalPrincipal
}

var (
	keyPrincipalRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@/-]{0,127}$`)
	oauthPrincipalRE = regexp.MustCompile(`^oauth:\S{1,255}$`)
)

const (
	urlHint          = "an https URL, like https://auth.example.com (http only for localhost)"
	principalHint    = "1 to 128 letters, digits and ._@/-, like ci-bot; no ':', which only OAuth principals (oauth:SUBJECT) have"
	localHint        = "local is the user who started taskgate (stdio, or HTTP without auth:), who may use every tool; give the key another name"
	allowedPrincipal = "an API key's principal, like ci-bot, or an OAuth token's subject after oauth:, like oauth:alice"
)

func (d *doc) auth(e entry) {
	if first := d.l.auth; first != nil {
		d.errorf(e.keyAt, "keep one auth: block for the whole set of mapping files", "auth: is already defined at %s", first.Source)
		return
	}
	o, ok := d.object(e.value, "auth", defKeys("auth"), nil)
	if !ok {
		return
	}
	line, _ := position(e.keyAt)
	a := &Auth{Source: fmt.Sprintf("%s:%d", d.file, line)}
	d.l.auth = a
	if oe, ok := o.m["oauth"]; ok {
		a.OAuth = d.oauth(oe)
	}
	if ke, ok := o.m["apiKeys"]; ok {
		a.APIKeys = d.apiKeys(ke)
	}
	_, hasOAuth := o.m["oauth"]
	if _, hasKeys := o.m["apiKeys"]; !hasOAuth && !hasKeys {
		d.errorf(o.at, "add oauth: {issuer: ..., audience: ..., jwksUrl: ...}, apiKeys: [{principal: ..., keyEnv: ...}], or both",
			"auth: needs oauth:, apiKeys: or both")
	}
	if oe, ok := o.m["origins"]; ok {
		for i, origin := range d.stringList(oe, "browser origins like https://console.example.com, or \"*\"") {
			if u, err := url.Parse(origin); origin != "*" && (err != nil || u.Scheme == "" || u.Host == "" || u.Path != "") {
				d.errorf(oe.value.(*ast.SequenceNode).Values[i], "an origin is scheme://host[:port], like https://console.example.com",
					"%s[%d]: %q is not an origin", oe.path, i, origin)
				continue
			}
			a.Origins = append(a.Origins, origin)
		}
	}
	if he, ok := o.m["hosts"]; ok {
		a.Hosts = d.stringList(he, "the Host headers clients send, like mcp.example.com")
	}
}

func (d *doc) oauth(e entry) *OAuth {
	o, ok := d.object(e.value, e.path, defKeys("oauth"), nil)
	if !ok {
		return nil
	}
	oa := &OAuth{ClockSkew: defaultClockSkew}
	if s, se, ok := o.need("issuer", urlHint, true); ok && d.checkURL(se, s) {
		oa.Issuer = s
	}
	if ae, ok := o.m["audience"]; ok {
		if _, single := ae.value.(*ast.SequenceNode); single {
			oa.Audiences = d.stringList(ae, "the resource identifiers a token may be for, like https://mcp.example.com/mcp")
		} else if s, _, ok := o.str("audience", true); ok {
			oa.Audiences = []string{s}
		}
	} else {
		d.errorf(o.at, "the resource identifier tokens must be for: this server's MCP URL, like https://mcp.example.com/mcp", "%smissing required key %q", prefix(o.path), "audience")
	}
	jwks, je, hasJWKS := o.str("jwksUrl", true)
	if hasJWKS && d.checkURL(je, jwks) {
		oa.JWKSURL = jwks
	}
	if ke, ok := o.m["keyFiles"]; ok {
		for _, f := range d.stringList(ke, "PEM files of the issuer's public keys") {
			oa.KeyFiles = append(oa.KeyFiles, d.needFile(ke, f))
		}
	}
	if _, hasKeys := o.m["keyFiles"]; hasJWKS == hasKeys {
		d.errorf(o.at, "name the issuer's keys one way: jwksUrl: https://.../jwks.json, or keyFiles: [issuer.pem]", "%s: needs exactly one of jwksUrl and keyFiles", e.path)
	}
	oa.ClockSkew = o.durationOr("clockSkew", defaultClockSkew, 0, false)
	if se, ok := o.m["scopes"]; ok {
		oa.Scopes = d.stringList(se, "the scopes every caller needs, like [mcp]")
	}
	oa.AuthorizationServers = []string{oa.Issuer}
	if ae, ok := o.m["authorizationServers"]; ok {
		oa.AuthorizationServers = d.stringList(ae, "the issuer URLs of the authorization servers clients get tokens from")
	}
	if len(oa.Audiences) > 0 {
		oa.Resource = oa.Audiences[0]
	}
	if r, re, ok := o.str("resource", true); ok && d.checkURL(re, r) {
		oa.Resource = r
	}
	return oa
}

// checkURL reports whether s is an https URL (or http on localhost).
func (d *doc) checkURL(e entry, s string) bool {
	u, err := url.Parse(s)
	local := u != nil && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1")
	if err != nil || u.Host == "" || !(u.Scheme == "https" || (u.Scheme == "http" && local)) {
		d.errorf(e.value, urlHint, "%s: %q is not an https URL", e.path, s)
		return false
	}
	return true
}

func (d *doc) apiKeys(e entry) []APIKey {
	seq, ok := e.value.(*ast.SequenceNode)
	if !ok {
		d.errorf(e.value, "list them: apiKeys: [{principal: ci-bot, keyEnv: TASKGATE_KEY_CI}]", "%s: must be a list, not %s", e.path, kind(e.value))
		return nil
	}
	var keys []APIKey
	seen := map[string]bool{}
	for i, item := range seq.Values {
		path := fmt.Sprintf("%s[%d]", e.path, i)
		o, ok := d.object(item, path, defKeys("apiKey"), nil)
		if !ok {
			continue
		}
		var k APIKey
		p, pe, okP := o.need("principal", principalHint, false)
		switch {
		case okP && p == LocalPrincipal:
			d.errorf(pe.value, localHint, "%s: %q is reserved", pe.path, p)
			okP = false
		case okP && !keyPrincipalRE.MatchString(p):
			d.errorf(pe.value, principalHint, "%s: %q is not a valid principal", pe.path, p)
			okP = false
		}
		if okP && seen[p] {
			d.errorf(pe.value, "one key per principal: rotate a key by changing the variable it names", "%s: principal %q has a key already", pe.path, p)
			okP = false
		}
		v, ve, okV := o.need("keyEnv", "the name of the environment variable that holds the key, like TASKGATE_KEY_CI", false)
		if okV && !driver.ValidEnvName(v) {
			d.errorf(ve.value, "letters, digits and _, not starting with a digit", "%s: %q is not an environment variable name", ve.path, v)
			okV = false
		}
		if se, ok := o.m["scopes"]; ok {
			k.Scopes = d.stringList(se, "the scopes this key grants, like [deploy]")
		}
		if okV {
			d.needEnv(ve, v)
		}
		if okP && okV {
			seen[p] = true
			k.Principal, k.KeyEnv = p, v
			keys = append(keys, k)
		}
	}
	return keys
}

// allow reads an allow: block of a tool or an engine.
func (d *doc) allow(e entry) *Allow {
	o, ok := d.object(e.value, e.path, defKeys("allow"), nil)
	if !ok {
		return nil
	}
	a := &Allow{}
	if se, ok := o.m["scopes"]; ok {
		a.Scopes = d.stringList(se, "the scopes a caller needs, like [deploy]")
	}
	if pe, ok := o.m["principals"]; ok {
		for i, p := range d.stringList(pe, "the principals allowed, like [ci-bot, oauth:alice]") {
			if !ValidKeyPrincipal(p) && !oauthPrincipalRE.MatchString(p) {
				d.errorf(pe.value.(*ast.SequenceNode).Values[i], allowedPrincipal, "%s[%d]: %q is not a principal", pe.path, i, p)
				continue
			}
			a.Principals = append(a.Principals, p)
		}
	}
	if len(a.Scopes) == 0 && len(a.Principals) == 0 {
		d.errorf(o.at, "allow: {scopes: [deploy]} or allow: {principals: [alice]}", "%s: names no scope and no principal", e.path)
	}
	return a
}
