package chartcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Helm's lint (what `helm lint` runs): Chart.yaml, values against the schema, every template
// rendered and parsed. Its only information message, that Chart.yaml has no icon, is not a fault.
func TestLint(t *testing.T) {
	for _, file := range ciValuesFiles(t) {
		result := lint.RunAll(chartDir, readValues(t, file), releaseNS,
			lint.WithKubeVersion(&common.KubeVersion{Version: kubeVersion, Major: "1", Minor: "33"}))
		for _, m := range result.Messages {
			if m.Severity == support.InfoSev && strings.Contains(m.Err.Error(), "icon is recommended") {
				continue
			}
			t.Errorf("lint %s: %s", valuesName(file), m)
		}
	}
}

func valuesName(file string) string {
	if file == defaultsValues {
		return "default values"
	}
	return filepath.Base(file)
}

// Every object of every values file decodes strictly into its Kubernetes type (render does it),
// and hangs together: one Deployment whose pod mounts the mapping and takes the token keys from a
// Secret, a Service that selects it.
func TestRenderEveryValuesFile(t *testing.T) {
	for _, file := range ciValuesFiles(t) {
		t.Run(valuesName(file), func(t *testing.T) {
			r := render(t, readValues(t, file))
			d := object[*appsv1.Deployment](t, r, "Deployment", releaseName)
			pod := d.Spec.Template
			if !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(pod.Labels)) {
				t.Errorf("the Deployment's selector %v does not select its pods %v", d.Spec.Selector.MatchLabels, pod.Labels)
			}
			svc := object[*corev1.Service](t, r, "Service", releaseName)
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				t.Errorf("the Service's selector %v does not select the pods %v", svc.Spec.Selector, pod.Labels)
			}
			c := pod.Spec.Containers[0]
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
				return e.Name == "TASKGATE_TOKEN_KEYS" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
			}) {
				t.Errorf("TASKGATE_TOKEN_KEYS does not come from a Secret: %+v", c.Env)
			}
			for _, e := range c.Env {
				if e.ValueFrom == nil && isSecretName(e.Name) {
					t.Errorf("%s is a plain value, not from a Secret", e.Name)
				}
			}
			if !strings.Contains(r.notes, "/mcp") || !strings.Contains(r.notes, "port-forward") {
				t.Errorf("NOTES.txt does not say how to reach MCP:\n%s", r.notes)
			}
		})
	}
}

// isSecretName is whether an environment variable holds a credential taskgate reads.
func isSecretName(name string) bool {
	return name == "TASKGATE_TOKEN_KEYS" || name == "TEMPORAL_API_KEY" || name == "RESTATE_AUTH_TOKEN"
}

// serve --replicas is the most pods that can run: each reads the engines at that share of the
// read budgets (docs/operations-budget.md).
func TestReplicasArgument(t *testing.T) {
	for _, tc := range []struct {
		values       map[string]any
		wantReplicas string
		wantHPA      bool
	}{
		{map[string]any{}, "2", false},
		{map[string]any{"replicaCount": 5}, "5", false},
		{map[string]any{"replicaCount": 5, "autoscaling": map[string]any{"enabled": true, "maxReplicas": 12}}, "12", true},
	} {
		r := render(t, tc.values)
		d := object[*appsv1.Deployment](t, r, "Deployment", releaseName)
		args := d.Spec.Template.Spec.Containers[0].Args
		i := slices.Index(args, "--replicas")
		if i < 0 || i+1 >= len(args) || args[i+1] != tc.wantReplicas {
			t.Errorf("values %v: args %q, want --replicas %s", tc.values, args, tc.wantReplicas)
		}
		_, hasHPA := r.objects["HorizontalPodAutoscaler/"+releaseName]
		if hasHPA != tc.wantHPA {
			t.Errorf("values %v: HorizontalPodAutoscaler %v, want %v", tc.values, hasHPA, tc.wantHPA)
		}
		switch {
		case tc.wantHPA:
			hpa := object[*autoscalingv2.HorizontalPodAutoscaler](t, r, "HorizontalPodAutoscaler", releaseName)
			if d.Spec.Replicas != nil {
				t.Errorf("values %v: the Deployment sets replicas beside the HorizontalPodAutoscaler", tc.values)
			}
			if got := hpa.Spec.MaxReplicas; got != 12 || hpa.Spec.ScaleTargetRef.Name != d.Name {
				t.Errorf("values %v: HorizontalPodAutoscaler scales %s to %d, want %s to 12", tc.values, hpa.Spec.ScaleTargetRef.Name, got, d.Name)
			}
		case d.Spec.Replicas == nil || tc.wantReplicas != strconv.Itoa(int(*d.Spec.Replicas)):
			t.Errorf("values %v: Deployment replicas %v, want %s", tc.values, d.Spec.Replicas, tc.wantReplicas)
		}
	}
}

// The schema refuses a misspelt key and a value of the wrong type, naming it, at any depth.
func TestSchemaRejects(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct {
		values map[string]any
		names  string
	}{
		{map[string]any{"replicaCuont": 3}, "replicaCuont"},
		{map[string]any{"replicaCount": "two"}, "replicaCount"},
		{map[string]any{"image": map[string]any{"tga": "v1"}}, "tga"},
		{map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		{map[string]any{"autoscaling": map[string]any{"maxReplicas": "ten"}}, "maxReplicas"},
		{map[string]any{"secrets": map[string]any{"existingSecret": "s", "tokenKeys": "0:AAAA"}}, "tokenKeys"},
		{map[string]any{"serviceAccount": map[string]any{"anotations": map[string]any{}}}, "anotations"},
		{map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": "yes"}}}, "enabled"},
		{map[string]any{"temporal": map[string]any{"address": "http://temporal:7233"}}, "address"},
		{map[string]any{"env": map[string]any{"AWS_REGION": 1}}, "AWS_REGION"},
	} {
		_, err := renderManifests(ch, tc.values)
		if err == nil {
			t.Errorf("values %v: rendered, want the schema to refuse them", tc.values)
			continue
		}
		if !strings.Contains(err.Error(), tc.names) {
			t.Errorf("values %v: the error does not name %s:\n%v", tc.values, tc.names, err)
		}
	}
}

// The chart's dashboard is the one the repository ships: charts/taskgate/dashboards/taskgate.json
// is a link to it, which Helm's loader follows (and helm package stores as the file).
func TestDashboardIsTheShippedOne(t *testing.T) {
	shipped, err := os.ReadFile("../../docs/grafana/taskgate.json")
	if err != nil {
		t.Fatal(err)
	}
	r := render(t, map[string]any{"metrics": map[string]any{"grafanaDashboard": map[string]any{"enabled": true}}})
	cm := object[*corev1.ConfigMap](t, r, "ConfigMap", releaseName+"-dashboard")
	if strings.TrimSpace(cm.Data["taskgate.json"]) != strings.TrimSpace(string(shipped)) || cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap does not hold the dashboard with the sidecar's label: labels %v", cm.Labels)
	}
}

// The ServiceMonitor scrapes /metrics on the ops port of a Service that selects the pods.
func TestServiceMonitorScrapesTheOpsPort(t *testing.T) {
	r := render(t, map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}})
	sm := object[*serviceMonitor](t, r, "ServiceMonitor", releaseName)
	ops := object[*corev1.Service](t, r, "Service", releaseName+"-ops")
	d := object[*appsv1.Deployment](t, r, "Deployment", releaseName)
	if !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(ops.Labels)) {
		t.Errorf("the ServiceMonitor's selector %v does not select the ops Service %v", sm.Spec.Selector.MatchLabels, ops.Labels)
	}
	if mcp := object[*corev1.Service](t, r, "Service", releaseName); labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(mcp.Labels)) {
		t.Errorf("the ServiceMonitor also selects the MCP Service")
	}
	if !labels.SelectorFromSet(ops.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the ops Service does not select the pods")
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "ops" || sm.Spec.Endpoints[0].Path != "/metrics" ||
		len(ops.Spec.Ports) != 1 || ops.Spec.Ports[0].Name != "ops" || ops.Spec.Ports[0].TargetPort.String() != "ops" {
		t.Errorf("the ServiceMonitor's endpoints %+v do not scrape /metrics on the ops Service's port %+v", sm.Spec.Endpoints, ops.Spec.Ports)
	}
}
