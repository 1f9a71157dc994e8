package chartcheck

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const terraformModule = "../../terraform/modules/taskgate-kubernetes"

// The chart and the Terraform module run the same pod: for the module's defaults and the chart's
// (with autoscaling, which the module always has), the same image, arguments, ports, probes,
// security contexts, resources and mapping mount, the same rolling update, Service ports and
// autoscaling.
func TestChartAgreesWithTerraformModule(t *testing.T) {
	ch := loadChart(t)
	image := ch.Values["image"].(map[string]any)["repository"].(string) + ":" + ch.Metadata.AppVersion
	tf := terraformObjects(t, map[string]cty.Value{"image": cty.StringVal(image), "mapping_yaml": cty.StringVal("")})

	r := render(t, map[string]any{"autoscaling": map[string]any{"enabled": true}})
	d := object[*appsv1.Deployment](t, r, "Deployment", releaseName)
	svc := object[*corev1.Service](t, r, "Service", releaseName)
	hpa := object[*autoscalingv2.HorizontalPodAutoscaler](t, r, "HorizontalPodAutoscaler", releaseName)

	var tfDeployment appsv1.DeploymentSpec
	var tfService corev1.ServiceSpec
	var tfHPA autoscalingv2.HorizontalPodAutoscalerSpec
	decodeTerraform(t, tf, "kubernetes_deployment_v1", &tfDeployment)
	decodeTerraform(t, tf, "kubernetes_service_v1", &tfService)
	decodeTerraform(t, tf, "kubernetes_horizontal_pod_autoscaler_v2", &tfHPA)

	chartPod, tfPod := d.Spec.Template.Spec, tfDeployment.Template.Spec
	if len(chartPod.Containers) != 1 || len(tfPod.Containers) != 1 {
		t.Fatalf("containers: chart %d, Terraform %d, want 1 each", len(chartPod.Containers), len(tfPod.Containers))
	}
	cc, tc := chartPod.Containers[0], tfPod.Containers[0]
	for _, f := range []struct {
		field     string
		chart, tf any
	}{
		{"container name", cc.Name, tc.Name},
		{"image", cc.Image, tc.Image},
		{"imagePullPolicy", cc.ImagePullPolicy, tc.ImagePullPolicy},
		{"args", cc.Args, tc.Args},
		{"ports", cc.Ports, tc.Ports},
		{"livenessProbe", cc.LivenessProbe, tc.LivenessProbe},
		{"readinessProbe", cc.ReadinessProbe, tc.ReadinessProbe},
		{"startupProbe", cc.StartupProbe, tc.StartupProbe},
		{"container securityContext", cc.SecurityContext, tc.SecurityContext},
		{"resources", cc.Resources, tc.Resources},
		{"volumeMounts", cc.VolumeMounts, tc.VolumeMounts},
		{"pod securityContext", chartPod.SecurityContext, tfPod.SecurityContext},
		{"terminationGracePeriodSeconds", chartPod.TerminationGracePeriodSeconds, tfPod.TerminationGracePeriodSeconds},
		{"automountServiceAccountToken", chartPod.AutomountServiceAccountToken, tfPod.AutomountServiceAccountToken},
		{"Deployment strategy", providerStrategy(d.Spec.Strategy), providerStrategy(tfDeployment.Strategy)},
		{"Service type", svc.Spec.Type, tfService.Type},
		{"Service ports", svc.Spec.Ports, tfService.Ports},
		{"autoscaling minReplicas", hpa.Spec.MinReplicas, tfHPA.MinReplicas},
		{"autoscaling maxReplicas", hpa.Spec.MaxReplicas, tfHPA.MaxReplicas},
		{"autoscaling metrics", hpa.Spec.Metrics, tfHPA.Metrics},
	} {
		if !reflect.DeepEqual(f.chart, f.tf) {
			t.Errorf("%s differs:\n  chart:     %s\n  Terraform: %s", f.field, asJSON(f.chart), asJSON(f.tf))
		}
	}
}

// providerStrategy is a rolling update as the Kubernetes provider sends it: its max_surge and
// max_unavailable are strings, which it parses as integers where they are ("0" is 0).
func providerStrategy(s appsv1.DeploymentStrategy) appsv1.DeploymentStrategy {
	if ru := s.RollingUpdate; ru != nil {
		parsed := *ru
		for _, v := range []**intstr.IntOrString{&parsed.MaxSurge, &parsed.MaxUnavailable} {
			if *v != nil {
				p := intstr.Parse((*v).String())
				*v = &p
			}
		}
		s.RollingUpdate = &parsed
	}
	return s
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// terraformObjects are the spec blocks of the module's resources ("kubernetes_service_v1" =>
// spec), evaluated for its variables' defaults and the given inputs, as JSON in the Kubernetes
// API's field names. What the defaults cannot decide is left out: attributes that refer to
// locals or other resources (names, labels, annotations), and dynamic blocks (the environment,
// TLS, tolerations, pull secrets, which depend on optional inputs).
func terraformObjects(t *testing.T, inputs map[string]cty.Value) map[string]any {
	t.Helper()
	parser := hclparse.NewParser()
	files, err := filepath.Glob(filepath.Join(terraformModule, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s (%v)", terraformModule, err)
	}
	vars := map[string]cty.Value{}
	var resources []*hclsyntax.Block
	for _, file := range files {
		f, diags := parser.ParseHCLFile(file)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
			case "variable":
				vars[b.Labels[0]] = variableValue(t, b, inputs)
			case "resource":
				resources = append(resources, b)
			}
		}
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)},
		Functions: map[string]function.Function{
			"concat": stdlib.ConcatFunc, "merge": stdlib.MergeFunc, "tostring": stdlib.MakeToFunc(cty.String),
		},
	}
	specs := map[string]any{}
	for _, b := range resources {
		for _, spec := range b.Body.Blocks {
			if spec.Type == "spec" {
				specs[b.Labels[0]] = blockJSON(t, ctx, spec.Body)
			}
		}
	}
	return specs
}

// variableValue is a variable's input, or its default with its type's optional attributes filled.
func variableValue(t *testing.T, b *hclsyntax.Block, inputs map[string]cty.Value) cty.Value {
	t.Helper()
	name := b.Labels[0]
	ty, defaults, diags := typeexpr.TypeConstraintWithDefaults(b.Body.Attributes["type"].Expr)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	v, given := inputs[name]
	if !given {
		def, ok := b.Body.Attributes["default"]
		if !ok {
			t.Fatalf("variable %q has no default: give it in the test's inputs", name)
		}
		if v, diags = def.Expr.Value(nil); diags.HasErrors() {
			t.Fatal(diags.Error())
		}
	}
	if defaults != nil {
		v = defaults.Apply(v)
	}
	v, err := convert.Convert(v, ty)
	if err != nil {
		t.Fatalf("variable %q: %v", name, err)
	}
	return v
}

// listBlocks are the blocks the Kubernetes provider repeats, and the API's list field each makes.
var listBlocks = map[string]string{
	"container": "containers", "port": "ports", "volume_mount": "volumeMounts", "volume": "volumes", "metric": "metrics",
}

func blockJSON(t *testing.T, ctx *hcl.EvalContext, body *hclsyntax.Body) map[string]any {
	t.Helper()
	out := map[string]any{}
	for name, a := range body.Attributes {
		if !onlyVariables(a.Expr) {
			continue
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		b, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			t.Fatal(err)
		}
		var decoded any
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		out[camelCase(name)] = decoded
	}
	for _, nested := range body.Blocks {
		if nested.Type == "dynamic" || nested.Type == "lifecycle" {
			continue
		}
		value := blockJSON(t, ctx, nested.Body)
		if list, ok := listBlocks[nested.Type]; ok {
			items, _ := out[list].([]any)
			out[list] = append(items, value)
		} else {
			out[camelCase(nested.Type)] = value
		}
	}
	return out
}

// onlyVariables is whether an expression refers to nothing but the module's variables.
func onlyVariables(expr hclsyntax.Expression) bool {
	for _, tr := range expr.Variables() {
		if tr.RootName() != "var" {
			return false
		}
	}
	return true
}

func camelCase(snake string) string {
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// decodeTerraform decodes a resource's spec strictly into its Kubernetes API type: an attribute
// the API does not have (a provider name this test does not translate) fails.
func decodeTerraform(t *testing.T, specs map[string]any, resource string, into any) {
	t.Helper()
	spec, ok := specs[resource]
	if !ok {
		t.Fatalf("no %s with a spec in %s", resource, terraformModule)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s's spec as the Kubernetes API's %T: %v\n%s", resource, into, err, b)
	}
}
