package restate_test

import (
	"fmt"
	"strings"
	"testing"

	sdk "github.com/restatedev/sdk-go"

	"github.com/taskgate/taskgate/mapping"
)

// TestDiscoverInfer: --infer drafts the input schema of a handler that declares none from its
// latest invocations, says how many, and keeps a declared schema (saying it wins); with no
// invocation, the draft accepts any object and says why.
func TestDiscoverInfer(t *testing.T) {
	v := newEnv(t)
	untyped, idle := "Untyped"+randomHex(4), "Idle"+randomHex(4)
	deploy(t, v.engine, false,
		sdk.NewService(untyped).Handler("run", sdk.NewServiceHandler(func(sdk.Context, map[string]any) (sdk.Void, error) { return sdk.Void{}, nil })),
		sdk.NewService(idle).Handler("run", sdk.NewServiceHandler(func(sdk.Context, map[string]any) (sdk.Void, error) { return sdk.Void{}, nil })))
	for _, in := range []string{`{"sku":"A-1","count":1}`, `{"sku":"B-2"}`, `{"sku":"C-3","count":2.5}`} {
		send(t, untyped+"/run", in)
	}
	for i := range 2 {
		send(t, fmt.Sprintf("%s/key-%d/add", v.counter, i), fmt.Sprint(i))
	}

	d, warnings, err := discover(t, "--prefix", untyped, "--infer", "10")
	if err != nil {
		t.Fatal(err)
	}
	want := `    inputSchema: {"properties":{"count":{"type":"number"},"sku":{"type":"string"}},"required":["sku"],"type":"object"}   # inferred from the 3 latest inputs: review it` + "\n"
	if !strings.HasSuffix(d, want) || strings.Contains(warnings, "input schema") {
		t.Errorf("draft:\n%s\nwant it to end with:\n%swarnings:\n%s", d, want, warnings)
	}
	if _, err := mapping.Parse("draft.yaml", []byte(d)); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, d)
	}

	d, _, err = discover(t, "--prefix", v.counter, "--infer", "10")
	if err != nil {
		t.Fatal(err)
	}
	want = `    input: .input
    inputSchema: {"properties":{"input":{"type":"integer"}},"required":["input"],"type":"object"}   # from the handler's JSON schema, which wins over the schema inferred from 2 inputs` + "\n"
	if !strings.Contains(d, want) {
		t.Errorf("draft:\n%s\nwant it to hold:\n%s", d, want)
	}

	d, warnings, err = discover(t, "--prefix", idle, "--infer", "10")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(d, "    inputSchema: {\"type\":\"object\"}\n") ||
		!strings.Contains(warnings, "taskgate: warning: "+idle+"/run declares no input schema and no execution to infer one from: the draft accepts any object\n") {
		t.Errorf("draft of a handler never invoked:\n%s\nwarnings:\n%s", d, warnings)
	}
}
