package restate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/taskgate/taskgate/adapters"
)

var _ adapters.Discoverer = Driver{}

// Discover serves `taskgate discover restate`: it drafts a mapping file with one tool per handler
// that can back a task (every handler of a service, a workflow's run handler, a virtual object's
// exclusive handlers) of the registered services, typed with the input and output JSON schemas the
// SDKs declare.
func (Driver) Discover(fs *flag.FlagSet) func(ctx context.Context, w, warn io.Writer) error {
	ingress := fs.String("ingress", "", "the ingress URL (default: $RESTATE_INGRESS_URL, else "+defaultIngress+")")
	admin := fs.String("admin", "", "the admin API URL (default: $RESTATE_ADMIN_URL, else "+defaultAdmin+")")
	tokenName := fs.String("auth-token-env", "", "the NAME of the variable that holds an API token (Restate Cloud)")
	prefix := fs.String("prefix", "", "only services whose name starts with this")
	return func(ctx context.Context, w, warn io.Writer) error {
		block := &engineBlock{ingress: *ingress, admin: *admin, tokenEnv: *tokenName}
		opened, err := block.Open(ctx, adapters.OpenOptions{})
		if err != nil {
			return err
		}
		e := opened.(*Engine)
		defer e.Close()
		services, err := e.listServices(ctx)
		if err != nil {
			return err
		}
		services = slices.DeleteFunc(services, func(s service) bool { return !strings.HasPrefix(s.Name, *prefix) })
		if len(services) == 0 {
			return fmt.Errorf("no service registered in Restate at %s has a name that starts with %q", e.admin, *prefix)
		}
		block.ingress, block.admin = e.ingress, e.admin
		return writeDraft(w, warn, block, services)
	}
}

// listServices reads every registered service, sorted by name.
func (e *Engine) listServices(ctx context.Context) ([]service, error) {
	what := "list the services"
	status, body, err := e.call(ctx, what, http.MethodGet, e.admin+"/services", nil, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, refused(what, status, body)
	}
	var out struct {
		Services []service `json:"services"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("restate: %s: the admin API's answer is not a list of services: %.200s", what, body)
	}
	slices.SortFunc(out.Services, func(a, b service) int { return strings.Compare(a.Name, b.Name) })
	return out.Services, nil
}

var (
	wordStart  = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	notToolRun = regexp.MustCompile(`[^a-z0-9]+`)
)

// toolName is the tool of a handler: the service's name in snake case, and the handler's unless
// it is run.
func toolName(service, handler string, taken map[string]bool) string {
	name := service
	if handler != "run" {
		name += "_" + handler
	}
	base := strings.Trim(notToolRun.ReplaceAllString(strings.ToLower(wordStart.ReplaceAllString(name, "${1}_${2}")), "_"), "_")
	n := base
	for i := 2; taken[n]; i++ {
		n = fmt.Sprintf("%s_%d", base, i)
	}
	taken[n] = true
	return n
}

// quote writes a string as a YAML scalar: JSON strings are valid YAML.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeDraft(w, warn io.Writer, block *engineBlock, services []service) error {
	var b strings.Builder
	b.WriteString("# Drafted by `taskgate discover restate`. Review every tool (names, descriptions, schemas)\n")
	b.WriteString("# and check the result with `taskgate validate --engines` before serving it.\n")
	fmt.Fprintf(&b, "version: 1\nengines:\n  restate:\n    restate:\n      ingress: %s\n      admin: %s\n", quote(block.ingress), quote(block.admin))
	if block.tokenEnv != "" {
		fmt.Fprintf(&b, "      authTokenEnv: %s\n", quote(block.tokenEnv))
	}
	b.WriteString("tools:\n")
	taken, drafted := map[string]bool{}, 0
	for _, s := range services {
		slices.SortFunc(s.Handlers, func(a, b handlerMeta) int { return strings.Compare(a.Name, b.Name) })
		for _, h := range s.Handlers {
			if err := s.serves(h.Name); err != nil {
				fmt.Fprintf(warn, "taskgate: warning: %s/%s is left out: %v\n", s.Name, h.Name, err)
				continue
			}
			if err := draftTool(&b, warn, s, h, toolName(s.Name, h.Name, taken)); err != nil {
				return err
			}
			drafted++
		}
	}
	if drafted == 0 {
		return fmt.Errorf("none of the %d services has a handler that can back a task", len(services))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func draftTool(b *strings.Builder, warn io.Writer, s service, h handlerMeta, name string) error {
	desc := h.Documentation
	if desc == "" {
		desc = s.Documentation
	}
	if desc == "" {
		desc = fmt.Sprintf("Invokes the Restate handler %s/%s.", s.Name, h.Name)
		fmt.Fprintf(warn, "taskgate: warning: %s/%s has no documentation: the draft says only what it invokes\n", s.Name, h.Name)
	}
	fmt.Fprintf(b, "  - name: %s\n    description: %s\n    engine: restate\n    invoke: {service: %s, handler: %s}\n",
		name, quote(desc), quote(s.Name), quote(h.Name))
	input, wrapped, err := inputSchema(h.Input)
	if err != nil {
		return fmt.Errorf("%s/%s: input schema: %w", s.Name, h.Name, err)
	}
	switch {
	case input == nil:
		fmt.Fprintf(warn, "taskgate: warning: %s/%s declares no input schema: the draft accepts any object\n", s.Name, h.Name)
		input = json.RawMessage(`{"type":"object"}`)
	case wrapped:
		// Tool arguments are an object: a handler that takes another value gets it as "input".
		b.WriteString("    input: .input\n")
	}
	fmt.Fprintf(b, "    inputSchema: %s\n", input)
	if output := cleanSchema(h.Output); isObjectSchema(output) {
		fmt.Fprintf(b, "    outputSchema: %s\n", output)
	}
	return nil
}

// inputSchema is the tool's input schema for a handler's: the same when it is an object, else an
// object of one required property, input, that holds it (wrapped). Nil when it declares none.
func inputSchema(s json.RawMessage) (schema json.RawMessage, wrapped bool, err error) {
	s = cleanSchema(s)
	if s == nil {
		return nil, false, nil
	}
	if isObjectSchema(s) {
		return s, false, nil
	}
	var v any
	if err := json.Unmarshal(s, &v); err != nil {
		return nil, false, err
	}
	out, err := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"input": v}, "required": []string{"input"}})
	return out, true, err
}

// cleanSchema compacts a schema as an SDK declared it, without the keys that only name it ("$id",
// "$schema") and without "$defs" that only point back at the schema itself. Nil when it declares
// nothing: no schema, or one with no other key.
func cleanSchema(s json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(s) == 0 || json.Unmarshal(s, &m) != nil {
		return nil
	}
	delete(m, "$id")
	delete(m, "$schema")
	var defs map[string]json.RawMessage
	if json.Unmarshal(m["$defs"], &defs) == nil && len(defs) > 0 && onlySelfReferences(defs) {
		delete(m, "$defs")
	}
	if len(m) == 0 {
		return nil
	}
	out, _ := json.Marshal(m) // a map of valid JSON values always marshals, keys sorted
	return out
}

func isObjectSchema(s json.RawMessage) bool {
	var m struct {
		Type any `json:"type"`
	}
	return s != nil && json.Unmarshal(s, &m) == nil && m.Type == "object"
}

// onlySelfReferences reports whether every definition is {"$ref": "#"}, as Go's schema reflection
// writes for the type of the schema itself.
func onlySelfReferences(defs map[string]json.RawMessage) bool {
	for _, d := range defs {
		var c bytes.Buffer
		if json.Compact(&c, d) != nil || c.String() != `{"$ref":"#"}` {
			return false
		}
	}
	return true
}
