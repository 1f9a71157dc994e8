package restate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

func init() { adapters.Register("restate", Driver{}) }

// Driver is the "restate" engine kind of mapping files:
//
//	engines:
//	  local:
//	    restate: {ingress: http://127.0.0.1:8080, admin: http://127.0.0.1:9070}
//	tools:
//	  - name: build_release
//	    engine: local
//	    invoke: {service: BuildRelease, handler: run}
//
// What an engine block leaves out comes from the Restate CLI's environment variables. Its native
// task ids are "SERVICE/HANDLER/TASK-KEY/INVOCATION-ID" (ref.go).
type Driver struct{}

//go:embed schema.json
var schema []byte

// Defaults of the Restate CLI, and the variables it reads them from.
const (
	defaultIngress = "http://localhost:8080"
	defaultAdmin   = "http://localhost:9070"
	ingressEnv     = "RESTATE_INGRESS_URL"
	adminEnv       = "RESTATE_ADMIN_URL"
	tokenEnv       = "RESTATE_AUTH_TOKEN"
)

// Info describes the engine block and the invoke key.
func (Driver) Info() driver.DriverInfo {
	return driver.DriverInfo{
		Title:         "Restate",
		TargetKey:     "invoke",
		Schema:        schema,
		EngineExample: "restate: {ingress: http://127.0.0.1:8080, admin: http://127.0.0.1:9070}",
		TargetExample: "invoke: {service: ..., handler: run}",
	}
}

// engineBlock is a decoded engine block: what it sets over the environment.
type engineBlock struct {
	ingress, admin string
	// tokenEnv names the variable that holds the API token.
	tokenEnv string
}

const urlHint = "an http:// or https:// URL, like %s; or leave it out for $%s"

// DecodeEngine reads ingress, admin and authTokenEnv, all optional.
func (Driver) DecodeEngine(b driver.Block) driver.EngineConfig {
	c := &engineBlock{}
	for _, k := range []struct {
		key, example, env string
		to                *string
	}{{"ingress", defaultIngress, ingressEnv, &c.ingress}, {"admin", defaultAdmin, adminEnv, &c.admin}} {
		if u, ok := b.String(k.key); ok && u != "" {
			if validURL(u) {
				*k.to = u
			} else {
				b.Errorf(k.key, fmt.Sprintf(urlHint, k.example, k.env), "%q is not an http:// or https:// URL", u)
			}
		}
	}
	c.tokenEnv, _ = b.EnvName("authTokenEnv", "like RESTATE_AUTH_TOKEN; the token itself never goes in a mapping file")
	return c
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Open configures a client for the block's server, with what the block leaves out from opts.Env
// (RESTATE_INGRESS_URL, RESTATE_ADMIN_URL, RESTATE_AUTH_TOKEN, as the Restate CLI reads them). It
// makes no call: Check is the first.
func (c *engineBlock) Open(_ context.Context, opts driver.OpenOptions) (driver.Conn, error) {
	cfg := Config{Ingress: c.ingress, Admin: c.admin}
	for _, k := range []struct {
		to              *string
		env, fallback   string
		what, fromBlock string
	}{
		{&cfg.Ingress, ingressEnv, defaultIngress, "ingress URL", "ingress"},
		{&cfg.Admin, adminEnv, defaultAdmin, "admin API URL", "admin"},
	} {
		if *k.to != "" {
			continue
		}
		*k.to = k.fallback
		if v, _ := opts.Env.LookupEnv(k.env); v != "" {
			if !validURL(v) {
				return nil, fmt.Errorf("restate: %s is %q, not an http:// or https:// URL: fix it, or set %s in the engine block", k.env, v, k.fromBlock)
			}
			*k.to = v
		}
	}
	cfg.Token, _ = opts.Env.LookupEnv(tokenEnv)
	if c.tokenEnv != "" {
		cfg.Token, _ = opts.Env.LookupEnv(c.tokenEnv)
		if cfg.Token == "" {
			return nil, fmt.Errorf("restate: authTokenEnv names %s, which is not set: export the Restate API token in it", c.tokenEnv)
		}
	}
	return New(cfg)
}

// nameRE is what Restate accepts as a service or handler name.
var nameRE = regexp.MustCompile(`^([a-zA-Z]|_[a-zA-Z0-9])[a-zA-Z0-9._-]*$`)

const nameHint = "letters, digits, ., _ and -, starting with a letter, as the deployment registers it"

// DecodeTarget reads invoke: {service, handler, cancel}.
func (Driver) DecodeTarget(tool driver.Block) driver.Target {
	b, ok := tool.Block("invoke", "write invoke: {service: ..., handler: run}")
	if !ok {
		return driver.Target{}
	}
	names := map[string]string{}
	for _, key := range []string{"service", "handler"} {
		v, ok := b.Required(key, "the "+key+" to invoke, as the deployment registers it")
		if ok && !nameRE.MatchString(v) {
			b.Errorf(key, nameHint, "%q is not a Restate %s name", v, key)
		}
		names[key] = v
	}
	stop := Cancel
	if s, ok := b.String("cancel"); ok && s != "" {
		switch Stop(s) {
		case Cancel, Kill:
			stop = Stop(s)
		default:
			b.Errorf("cancel", "cancel (the handler may clean up) or kill (it ends at once)", "%q is not a way to stop an invocation", s)
		}
	}
	return Handler(names["service"], names["handler"], stop)
}

// Stop is how Cancel stops an invocation.
type Stop string

const (
	// Cancel is Restate's cancellation: the handler sees a terminal error at its next step and
	// may clean up; a handler that never reaches a step (one failing before it, retried) goes on.
	Cancel Stop = "cancel"
	// Kill ends the invocation at once, whatever it was doing, without letting it clean up.
	Kill Stop = "kill"
)

// handler is the Spec of a Restate target.
type handler struct {
	service, handler string
	stop             Stop
}

// Handler returns the target whose tasks invoke handler of service, stopped by stop when cancelled:
// what DecodeTarget reads from invoke: {service, handler, cancel}. Its Name is
// "SERVICE/HANDLER", as Restate names an invocation's target.
func Handler(service, name string, stop Stop) driver.Target {
	return driver.Target{Name: service + "/" + name, Spec: handler{service: service, handler: name, stop: stop}}
}

// handlerOf reads a target's Spec, which must be a handler with valid names.
func handlerOf(t driver.Target) (handler, error) {
	h, ok := t.Spec.(handler)
	if !ok || !nameRE.MatchString(h.service) || !nameRE.MatchString(h.handler) || (h.stop != Cancel && h.stop != Kill) {
		return handler{}, fmt.Errorf("restate: %w: target %q is not a Restate handler: map it as invoke: {service: ..., handler: ...}", driver.ErrInvalid, t.Name)
	}
	return h, nil
}

// FormatRef writes the Ref's ID: "SERVICE/HANDLER/TASK-KEY/INVOCATION-ID".
func (Driver) FormatRef(r driver.Ref) string { return r.ID }

// ParseRef accepts "SERVICE/HANDLER/TASK-KEY/INVOCATION-ID" with names, a task key and an
// invocation id of the shapes Start gives.
func (Driver) ParseRef(id string) (driver.Ref, error) {
	if p, ok := parseRef(driver.Ref{ID: id}); !ok || p.invocation == "" {
		return driver.Ref{}, errors.New("restate: not a task's invocation: want SERVICE/HANDLER/TASK-KEY/INVOCATION-ID, the invocation id like inv_1gdJBtdVEcM942bjcDmb1c1khoaJe11Hbz")
	}
	return driver.Ref{ID: id}, nil
}

// trimSlash drops the trailing slashes of a base URL.
func trimSlash(u string) string { return strings.TrimRight(u, "/") }
