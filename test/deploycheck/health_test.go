package deploycheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// block is the top-level block of m with this type and labels, or the test fails.
func block(t *testing.T, m *tfModule, typ string, labels ...string) *hclsyntax.Block {
	t.Helper()
	for _, b := range m.blocks {
		if b.Type == typ && slices.Equal(b.Labels, labels) {
			return b
		}
	}
	t.Fatalf("%s: no %s %q", m.dir, typ, labels)
	return nil
}

// nested are the blocks of body with this type, at any depth.
func nested(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var found []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == typ {
			found = append(found, b)
		}
		found = append(found, nested(b.Body, typ)...)
	}
	return found
}

// value is the literal value of an attribute of body (no references), or the test fails.
func value(t *testing.T, body *hclsyntax.Body, name string) cty.Value {
	t.Helper()
	a, ok := body.Attributes[name]
	if !ok {
		t.Fatalf("no attribute %s at %s", name, rng(body.SrcRange))
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("%s at %s is not a literal: %s", name, rng(a.SrcRange), diags.Error())
	}
	return v
}

// exprSource is the text of an attribute's expression.
func exprSource(t *testing.T, body *hclsyntax.Body, name string) string {
	t.Helper()
	a, ok := body.Attributes[name]
	if !ok {
		t.Fatalf("no attribute %s at %s", name, rng(body.SrcRange))
	}
	return source(t, a.Expr)
}

func variableDefault(t *testing.T, m *tfModule, name string) string {
	t.Helper()
	v, ok := m.variables[name]
	if !ok {
		t.Fatalf("%s: no variable %s", m.dir, name)
	}
	return value(t, v.Body, "default").AsString()
}

// The AWS module agrees with what taskgate serves: MCP and the OAuth metadata through the load
// balancer and nothing else (no /metrics, no health endpoints), health checks on /readyz of the
// operations listener, which the task's command turns on.
func TestAWSModuleServesOnlyMCPAndChecksReadiness(t *testing.T) {
	m := loadModules(t)["terraform/modules/taskgate-aws"]

	https := block(t, m, "resource", "aws_lb_listener", "https")
	if action := nested(https.Body, "default_action"); len(action) != 1 || value(t, action[0].Body, "type").AsString() != "fixed-response" {
		t.Errorf("the HTTPS listener's default action must answer itself, not forward")
	}
	var forwarded []string
	for _, b := range m.blocks {
		if b.Type != "resource" || b.Labels[0] != "aws_lb_listener_rule" {
			continue
		}
		for _, p := range nested(b.Body, "path_pattern") {
			for _, v := range value(t, p.Body, "values").AsValueSlice() {
				forwarded = append(forwarded, v.AsString())
			}
		}
	}
	if want := []string{"/mcp", "/.well-known/*"}; !slices.Equal(forwarded, want) {
		t.Errorf("the listener rules forward %q, want exactly %q", forwarded, want)
	}

	hc := nested(block(t, m, "resource", "aws_lb_target_group", "this").Body, "health_check")
	if len(hc) != 1 || exprSource(t, hc[0].Body, "port") != "tostring(var.ops_port)" || exprSource(t, hc[0].Body, "path") != "var.health_check_path" {
		t.Errorf("the target group's health check must use health_check_path on ops_port")
	}
	if p := variableDefault(t, m, "health_check_path"); p != "/readyz" {
		t.Errorf("health_check_path defaults to %q, want /readyz", p)
	}
	if c := source(t, m.locals["containers"].Expr); !strings.Contains(c, `"--ops-http", ":${var.ops_port}"`) {
		t.Error("the taskgate container does not run with --ops-http :ops_port")
	}
}

// The Kubernetes module probes the operations listener: liveness and startup on /healthz,
// readiness on /readyz, which the container's arguments turn on.
func TestKubernetesModuleProbesTheOpsListener(t *testing.T) {
	m := loadModules(t)["terraform/modules/taskgate-kubernetes"]
	deployment := block(t, m, "resource", "kubernetes_deployment_v1", "this")
	for probe, path := range map[string]string{"liveness_probe": "var.liveness_path", "readiness_probe": "var.readiness_path", "startup_probe": "var.liveness_path"} {
		b := nested(deployment.Body, probe)
		if len(b) != 1 {
			t.Fatalf("%d %s blocks, want 1", len(b), probe)
		}
		get := nested(b[0].Body, "http_get")
		if len(get) != 1 || value(t, get[0].Body, "port").AsString() != "ops" || exprSource(t, get[0].Body, "path") != path {
			t.Errorf("%s: want http_get of %s on the port ops", probe, path)
		}
	}
	for name, want := range map[string]string{"liveness_path": "/healthz", "readiness_path": "/readyz"} {
		if got := variableDefault(t, m, name); got != want {
			t.Errorf("%s defaults to %q, want %q", name, got, want)
		}
	}
	container := nested(deployment.Body, "container")
	if len(container) != 1 || !strings.Contains(exprSource(t, container[0].Body, "args"), `"--ops-http", ":${var.ops_port}"`) {
		t.Error("the taskgate container does not run with --ops-http :ops_port")
	}
}
