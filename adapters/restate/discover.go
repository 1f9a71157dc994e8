package restate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/taskgate/taskgate/adapters/draft"
	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Discoverer = Driver{}

// Discover serves `taskgate discover restate`: it drafts a mapping file with one tool per handler
// that can back a task (every handler of a service, a workflow's run handler, a virtual object's
// exclusive handlers) of the registered services, typed with the input and output JSON schemas the
// SDKs declare.
func (Driver) Discover(fs *flag.FlagSet) func(ctx context.Context, w, warn io.Writer) error {
	ingress := fs.String("ingress", "", "the ingress URL (default: $RESTATE_INGRESS_URL, else "+defaultIngress+")")
	admin := fs.String("admin", "", "the admin API URL (default: $RESTATE_ADMIN_URL, else "+defaultAdmin+")")
	tokenName := fs.String("auth-token-env", "", "the NAME of the variable that holds an API token (Restate Cloud)")
	prefix := fs.String("prefix", "", "only services whose name starts with this")
	infer := draft.InferFlags(fs)
	return func(ctx context.Context, w, warn io.Writer) error {
		block := &engineBlock{ingress: *ingress, admin: *admin, tokenEnv: *tokenName}
		opened, err := block.Open(ctx, driver.OpenOptions{})
		if err != nil {
			return err
		}
		e := opened.(*conn)
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
		sample := func(t driver.Target) ([]json.RawMessage, error) { return draft.Sample(ctx, e, t, infer.Executions) }
		return writeDraft(w, warn, block, services, sample, *infer)
	}
}

// listServices reads every registered service, sorted by name.
func (e *conn) listServices(ctx context.Context) ([]service, error) {
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

// toolName is the tool of a handler: the service's name in snake case, and the handler's unless
// it is run.
func toolName(service, handler string, taken map[string]bool) string {
	name := service
	if handler != "run" {
		name += "_" + handler
	}
	return draft.SnakeName(name, taken)
}

// sampler reads the inputs of a target's latest invocations (none without --infer).
type sampler func(driver.Target) ([]json.RawMessage, error)

func writeDraft(w, warn io.Writer, block *engineBlock, services []service, sample sampler, infer draft.Inference) error {
	var b strings.Builder
	b.WriteString("# Drafted by `taskgate discover restate`. Review every tool (names, descriptions, schemas)\n")
	b.WriteString("# and check the result with `taskgate validate --engines` before serving it.\n")
	fmt.Fprintf(&b, "version: 1\nengines:\n  restate:\n    restate:\n      ingress: %s\n      admin: %s\n", draft.Quote(block.ingress), draft.Quote(block.admin))
	if block.tokenEnv != "" {
		fmt.Fprintf(&b, "      authTokenEnv: %s\n", draft.Quote(block.tokenEnv))
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
			if err := draftTool(&b, warn, s, h, toolName(s.Name, h.Name, taken), sample, infer); err != nil {
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

func draftTool(b *strings.Builder, warn io.Writer, s service, h handlerMeta, name string, sample sampler, infer draft.Inference) error {
	desc := h.Documentation
	if desc == "" {
		desc = s.Documentation
	}
	what := s.Name + "/" + h.Name
	if desc == "" {
		desc = fmt.Sprintf("Invokes the Restate handler %s.", what)
		fmt.Fprintf(warn, "taskgate: warning: %s has no documentation: the draft says only what it invokes\n", what)
	}
	fmt.Fprintf(b, "  - name: %s\n    description: %s\n    engine: restate\n    invoke: {service: %s, handler: %s}\n",
		name, draft.Quote(desc), draft.Quote(s.Name), draft.Quote(h.Name))
	samples, err := sample(Handler(s.Name, h.Name, Cancel))
	if err != nil {
		return err
	}
	in := draft.Schema{Declared: cleanSchema(h.Input), DeclaredBy: "the handler's JSON schema", Inference: infer, Samples: samples, Missing: "declares no input schema"}
	if err := in.Write(b, warn, what); err != nil {
		return err
	}
	if output := cleanSchema(h.Output); draft.IsObject(output) {
		fmt.Fprintf(b, "    outputSchema: %s\n", output)
	}
	return nil
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
