package deploycheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// providerFreeLocals are the locals of m that depend only on variables and on other such locals:
// OpenTofu can evaluate them without any provider.
func providerFreeLocals(m *tfModule) map[string]bool {
	free := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, a := range m.locals {
			if free[name] || !exprProviderFree(a.Expr, free) {
				continue
			}
			free[name] = true
			changed = true
		}
	}
	return free
}

func exprProviderFree(expr hclsyntax.Expression, free map[string]bool) bool {
	for _, tr := range expr.Variables() {
		switch tr.RootName() {
		case "var", "path":
		case "local":
			if !free[traversalKey(tr[:2])[len("local."):]] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// source is the text of an expression in its file.
func source(t *testing.T, expr hclsyntax.Expression) string {
	t.Helper()
	r := expr.Range()
	b, err := os.ReadFile(r.Filename)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[r.Start.Byte:r.End.Byte])
}

// evalModuleLocals runs, through OpenTofu and with no provider, the module's variables (with their
// validations), its provider-free locals, and the count and for_each expressions of its resources
// and dynamic blocks that depend only on those, for the given inputs. OpenTofu then checks what
// `tofu validate` and `plan` would check of these expressions: types, functions, and that no
// count or for_each is sensitive. It returns the locals' values.
func evalModuleLocals(t *testing.T, m *tfModule, inputs map[string]cty.Value) map[string]json.RawMessage {
	t.Helper()
	values, err := tryModuleLocals(t, m, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return values
}

// tryModuleLocals is evalModuleLocals that returns OpenTofu's refusal (a validation's message).
func tryModuleLocals(t *testing.T, m *tfModule, inputs map[string]cty.Value) (map[string]json.RawMessage, error) {
	t.Helper()
	dir := t.TempDir()
	var vars, locals, outputs strings.Builder
	files := make([]string, 0, len(m.files))
	for f := range m.files {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		for _, b := range m.files[f].Blocks {
			if b.Type == "variable" {
				r := b.Range()
				src, _ := os.ReadFile(r.Filename)
				vars.Write(src[r.Start.Byte:r.End.Byte])
				vars.WriteString("\n\n")
			}
		}
	}
	free := providerFreeLocals(m)
	names := make([]string, 0, len(free))
	for name := range free {
		names = append(names, name)
	}
	sort.Strings(names)
	locals.WriteString("locals {\n")
	for _, name := range names {
		fmt.Fprintf(&locals, "  %s = %s\n", name, source(t, m.locals[name].Expr))
		fmt.Fprintf(&outputs, "output \"local_%s\" {\n  value     = local.%s\n  sensitive = true\n}\n", name, name)
	}
	locals.WriteString("}\n")
	// count and for_each may not be sensitive: as outputs not marked sensitive, OpenTofu refuses
	// them if they are.
	metas := 0
	var walk func(prefix string, body *hclsyntax.Body)
	walk = func(prefix string, body *hclsyntax.Body) {
		for _, meta := range []string{"count", "for_each"} {
			if a, ok := body.Attributes[meta]; ok && exprProviderFree(a.Expr, free) {
				metas++
				fmt.Fprintf(&outputs, "output \"meta_%d\" {\n  description = %q\n  value       = %s\n}\n", metas, prefix+" "+meta, source(t, a.Expr))
			}
		}
		for _, b := range body.Blocks {
			if b.Type == "dynamic" {
				walk(prefix+" dynamic "+b.Labels[0], b.Body)
			} else {
				walk(prefix+" "+b.Type, b.Body)
			}
		}
	}
	for _, b := range m.blocks {
		if b.Type == "resource" || b.Type == "data" || b.Type == "module" {
			walk(b.Type+"."+strings.Join(b.Labels, "."), b.Body)
		}
	}
	for name, content := range map[string]string{"variables.tf": vars.String(), "locals.tf": locals.String(), "outputs.tf": outputs.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tfvars := map[string]json.RawMessage{}
	for name, v := range inputs {
		b, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			t.Fatal(err)
		}
		tfvars[name] = b
	}
	b, _ := json.Marshal(tfvars)
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := tofuApply(t, dir)
	if err != nil {
		return nil, err
	}
	var result map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(out, &result); err != nil {
		t.Fatal(err)
	}
	values := map[string]json.RawMessage{}
	for name, o := range result {
		if strings.HasPrefix(name, "local_") {
			values[strings.TrimPrefix(name, "local_")] = o.Value
		}
	}
	for _, name := range names {
		if _, ok := values[name]; !ok {
			values[name] = json.RawMessage("null") // tofu output leaves out null values
		}
	}
	return values, nil
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
}

// The AWS module's expressions that need no provider evaluate in OpenTofu for the example's inputs
// and for inputs that take the other branches, with the expected results.
func TestAWSModuleLocals(t *testing.T) {
	mods := loadModules(t)
	m := mods["terraform/modules/taskgate-aws"]
	example := newEvaluator(t, mods, awsExample, awsExampleFixture).moduleArgs("taskgate")
	if !providerFreeLocals(m)["loader_script"] {
		t.Fatal("loader_script should need no provider")
	}

	got := evalModuleLocals(t, m, example)
	if s := decode[string](t, got["loader_script"]); s != `set -eu; umask 0222; printf '%s' "$TASKGATE_MAPPING" > /etc/taskgate/tools.yaml` {
		t.Errorf("loader_script = %s", s)
	}
	type ecrImage struct{ Account, Region, Repository string }
	if r := decode[[]ecrImage](t, got["ecr_images"]); !slices.Equal(r, []ecrImage{{"123456789012", "eu-west-1", "taskgate"}}) {
		t.Errorf("ecr_images = %v", r)
	}

	more := map[string]cty.Value{}
	for k, v := range example {
		more[k] = v
	}
	more["image"] = cty.StringVal("123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/platform/taskgate@sha256:" + strings.Repeat("a", 64))
	more["secret_files"] = cty.MapVal(map[string]cty.Value{
		"temporal.key":    cty.StringVal("arn:aws:secretsmanager:eu-west-1:123456789012:secret:temporal-key-AbCdEf"),
		"temporal-ca.pem": cty.StringVal("arn:aws:ssm:eu-west-1:123456789012:parameter/temporal/ca"),
	})
	more["secret_environment"] = cty.MapVal(map[string]cty.Value{
		"TEMPORAL_API_KEY": cty.StringVal("arn:aws:secretsmanager:eu-west-1:123456789012:secret:temporal-api-key-XyZ123:apiKey::"),
	})
	more["extra_egress"] = cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{
		"description": cty.StringVal("Temporal frontend"), "port": cty.NumberIntVal(7233),
		"cidr_blocks": cty.ListVal([]cty.Value{cty.StringVal("10.0.0.0/16"), cty.StringVal("2001:db8::/32")}),
	})})
	more["redirect_http"] = cty.True
	got = evalModuleLocals(t, m, more)
	wantScript := `set -eu; umask 0222; printf '%s' "$TASKGATE_MAPPING" > /etc/taskgate/tools.yaml; ` +
		`printf '%s' "${TASKGATE_FILE_0}" > '/etc/taskgate/temporal-ca.pem'; printf '%s' "${TASKGATE_FILE_1}" > '/etc/taskgate/temporal.key'`
	if s := decode[string](t, got["loader_script"]); s != wantScript {
		t.Errorf("loader_script = %s\nwant          %s", s, wantScript)
	}
	if r := decode[[]ecrImage](t, got["ecr_images"]); !slices.Equal(r, []ecrImage{{"123456789012", "cn-north-1", "platform/taskgate"}}) {
		t.Errorf("ecr_images = %v", r)
	}
	if r := decode[[]string](t, got["secretsmanager_arns"]); !slices.Equal(r, []string{
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:taskgate/client-api-key-GhIjKl",
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:taskgate/token-keys-AbCdEf",
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:temporal-api-key-XyZ123",
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:temporal-key-AbCdEf",
	}) {
		t.Errorf("secretsmanager_arns = %v", r)
	}
	if r := decode[[]string](t, got["ssm_parameter_arns"]); !slices.Equal(r, []string{"arn:aws:ssm:eu-west-1:123456789012:parameter/temporal/ca"}) {
		t.Errorf("ssm_parameter_arns = %v", r)
	}
	if e := decode[map[string]any](t, got["egress"]); len(e) != 3 {
		t.Errorf("egress = %v, want 443 to 0.0.0.0/0 and 7233 to two blocks", e)
	}
	if i := decode[map[string]any](t, got["ingress"]); len(i) != 2 {
		t.Errorf("ingress = %v, want 443 and 80 from one block", i)
	}
}

// The same for the Kubernetes module: the example's inputs, then TLS, an API key and OAuth.
func TestKubernetesModuleLocals(t *testing.T) {
	mods := loadModules(t)
	m := mods["terraform/modules/taskgate-kubernetes"]
	example := newEvaluator(t, mods, k8sExample, nil).moduleArgs("taskgate")

	got := evalModuleLocals(t, m, example)
	env := decode[map[string]string](t, got["environment"])
	if env["TEMPORAL_ADDRESS"] != "temporal-frontend.temporal.svc.cluster.local:7233" || env["TEMPORAL_NAMESPACE"] != "default" || len(env) != 2 {
		t.Errorf("environment = %v", env)
	}
	if names := decode[[]string](t, got["secret_env_names"]); !slices.Equal(names, []string{"TASKGATE_KEY_CLIENTS", "TASKGATE_TOKEN_KEYS"}) {
		t.Errorf("secret_env_names = %v", names)
	}
	if a := decode[map[string]string](t, got["scrape_annotations"]); a["prometheus.io/port"] != "9090" || a["prometheus.io/path"] != "/metrics" || a["prometheus.io/scrape"] != "true" {
		t.Errorf("scrape_annotations = %v, want the ops port's /metrics", a)
	}

	more := map[string]cty.Value{}
	for k, v := range example {
		more[k] = v
	}
	delete(more, "token_keys")
	more["token_keys_secret_name"] = cty.StringVal("taskgate-token-keys")
	more["temporal_tls"] = cty.ObjectVal(map[string]cty.Value{
		"ca_pem": cty.StringVal("CA"), "cert_pem": cty.StringVal("CERT"), "key_pem": cty.StringVal("KEY"),
		"server_name": cty.StringVal("temporal.internal"),
	})
	more["api_keys"] = cty.MapVal(map[string]cty.Value{"OPS_API_KEY": cty.StringVal("k")})
	more["restate"] = cty.ObjectVal(map[string]cty.Value{
		"ingress_url": cty.StringVal("http://restate.restate.svc.cluster.local:8080"),
		"admin_url":   cty.StringVal("http://restate.restate.svc.cluster.local:9070"),
	})
	more["restate_auth_token"] = cty.StringVal("restate-token")
	more["stepfunctions_events_topic_arn"] = cty.StringVal("arn:aws:sns:eu-west-1:123456789012:taskgate-sfn-events")
	more["oauth"] = cty.ObjectVal(map[string]cty.Value{
		"issuer": cty.StringVal("https://id.example.com"), "audience": cty.StringVal("taskgate"),
		"jwks_url": cty.NullVal(cty.String), "scopes": cty.ListVal([]cty.Value{cty.StringVal("tools:call"), cty.StringVal("tasks:read")}),
	})
	got = evalModuleLocals(t, m, more)
	env = decode[map[string]string](t, got["environment"])
	for k, v := range map[string]string{
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/etc/taskgate/temporal/ca.crt", "TEMPORAL_TLS_CLIENT_CERT_PATH": "/etc/taskgate/temporal/tls.crt",
		"TEMPORAL_TLS_CLIENT_KEY_PATH": "/etc/taskgate/temporal/tls.key", "TEMPORAL_TLS_SERVER_NAME": "temporal.internal",
		"TASKGATE_OAUTH_ISSUER": "https://id.example.com", "TASKGATE_OAUTH_SCOPES": "tools:call tasks:read",
		"RESTATE_INGRESS_URL":           "http://restate.restate.svc.cluster.local:8080",
		"RESTATE_ADMIN_URL":             "http://restate.restate.svc.cluster.local:9070",
		"TASKGATE_SFN_EVENTS_TOPIC_ARN": "arn:aws:sns:eu-west-1:123456789012:taskgate-sfn-events",
	} {
		if env[k] != v {
			t.Errorf("environment[%s] = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["TASKGATE_OAUTH_JWKS_URL"]; ok {
		t.Error("TASKGATE_OAUTH_JWKS_URL is set without a jwks_url")
	}
	restateOnly := map[string]cty.Value{}
	for k, v := range more {
		restateOnly[k] = v
	}
	restateOnly["temporal_address"] = cty.NullVal(cty.String)
	only := decode[map[string]string](t, evalModuleLocals(t, m, restateOnly)["environment"])
	if a, ok := only["TEMPORAL_ADDRESS"]; ok || only["RESTATE_ADMIN_URL"] == "" {
		t.Errorf("without temporal_address: TEMPORAL_ADDRESS %q (set: %v), RESTATE_ADMIN_URL %q; want only Restate's", a, ok, only["RESTATE_ADMIN_URL"])
	}
	if names := decode[[]string](t, got["secret_env_names"]); !slices.Equal(names, []string{"OPS_API_KEY", "RESTATE_AUTH_TOKEN", "TASKGATE_TOKEN_KEYS"}) {
		t.Errorf("secret_env_names = %v", names)
	}
	if s := decode[string](t, got["token_keys_secret"]); s != "taskgate-token-keys" {
		t.Errorf("token_keys_secret = %q", s)
	}
}

// A Restate URL without a scheme is refused with the module's own message.
func TestKubernetesModuleRestateURLs(t *testing.T) {
	mods := loadModules(t)
	m := mods["terraform/modules/taskgate-kubernetes"]
	inputs := newEvaluator(t, mods, k8sExample, nil).moduleArgs("taskgate")
	inputs["restate"] = cty.ObjectVal(map[string]cty.Value{
		"ingress_url": cty.StringVal("restate.restate.svc.cluster.local:8080"),
		"admin_url":   cty.StringVal("http://restate.restate.svc.cluster.local:9070"),
	})
	_, err := tryModuleLocals(t, m, inputs)
	const want = "restate.ingress_url and restate.admin_url must be http:// or https:// URLs, such as http://restate.restate.svc.cluster.local:8080 and :9070."
	if err == nil || !strings.Contains(strings.Join(strings.Fields(err.Error()), " "), want) {
		t.Fatalf("err = %v, want one with %q", err, want)
	}
}

// The AWS module's event source: its rule follows the module's own Standard targets unless
// stepfunctions_events names others, or none ([]: every state machine).
func TestAWSModuleEventsLocals(t *testing.T) {
	mods := loadModules(t)
	m := mods["terraform/modules/taskgate-aws"]
	example := newEvaluator(t, mods, awsExample, awsExampleFixture).moduleArgs("taskgate")
	own := cty.ListVal([]cty.Value{cty.StringVal("arn:aws:states:eu-west-1:123456789012:stateMachine:orders:live")})
	other := cty.ListVal([]cty.Value{cty.StringVal("arn:aws:states:eu-west-1:123456789012:stateMachine:billing")})
	for _, c := range []struct {
		name   string
		events cty.Value
		want   []string
	}{
		{"none", cty.NullVal(cty.DynamicPseudoType), []string{}},
		{"the module's targets", cty.ObjectVal(map[string]cty.Value{"state_machine_arns": cty.NullVal(cty.List(cty.String))}),
			[]string{"arn:aws:states:eu-west-1:123456789012:stateMachine:orders:live"}},
		{"others", cty.ObjectVal(map[string]cty.Value{"state_machine_arns": other}), []string{"arn:aws:states:eu-west-1:123456789012:stateMachine:billing"}},
		{"every state machine", cty.ObjectVal(map[string]cty.Value{"state_machine_arns": cty.ListValEmpty(cty.String)}), []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := map[string]cty.Value{}
			for k, v := range example {
				in[k] = v
			}
			in["state_machine_arns"] = own
			in["stepfunctions_events"] = c.events
			got := decode[[]string](t, evalModuleLocals(t, m, in)["events_state_machines"])
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("events_state_machines = %v, want %v", got, c.want)
			}
		})
	}
}

// The event source module's rule matches Step Functions' status changes, of the state machines
// given (without version or alias, as the events name them), or of all.
func TestStepFunctionsEventsModulePattern(t *testing.T) {
	m := loadModules(t)["terraform/modules/taskgate-stepfunctions-events"]
	type pattern struct {
		Source     []string `json:"source"`
		DetailType []string `json:"detail-type"`
		Detail     *struct {
			StateMachineARN []string `json:"stateMachineArn"`
		} `json:"detail"`
	}
	all := decode[pattern](t, evalModuleLocals(t, m, map[string]cty.Value{})["event_pattern"])
	if !slices.Equal(all.Source, []string{"aws.states"}) || !slices.Equal(all.DetailType, []string{"Step Functions Execution Status Change"}) || all.Detail != nil {
		t.Errorf("the pattern without state machines is %+v, want every status change of Step Functions", all)
	}
	some := decode[pattern](t, evalModuleLocals(t, m, map[string]cty.Value{"state_machine_arns": cty.ListVal([]cty.Value{
		cty.StringVal("arn:aws:states:eu-west-1:123456789012:stateMachine:orders:live"),
		cty.StringVal("arn:aws:states:eu-west-1:123456789012:stateMachine:orders:7"),
		cty.StringVal("arn:aws:states:eu-west-1:123456789012:stateMachine:billing"),
	})})["event_pattern"])
	if some.Detail == nil || !slices.Equal(some.Detail.StateMachineARN, []string{
		"arn:aws:states:eu-west-1:123456789012:stateMachine:orders", "arn:aws:states:eu-west-1:123456789012:stateMachine:billing",
	}) {
		t.Errorf("the pattern of three targets is %+v, want their two state machines", some)
	}
	if _, err := tryModuleLocals(t, m, map[string]cty.Value{"state_machine_arns": cty.ListVal([]cty.Value{cty.StringVal("arn:aws:sns:eu-west-1:123456789012:t")})}); err == nil ||
		!strings.Contains(strings.Join(strings.Fields(err.Error()), " "), "state_machine_arns must be Step Functions state machine ARNs") {
		t.Errorf("a topic ARN as a state machine: %v", err)
	}
}
