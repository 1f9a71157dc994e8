package chartcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

const (
	chartDir       = "../../charts/taskgate"
	releaseName    = "taskgate"
	releaseNS      = "taskgate"
	kubeVersion    = "v1.33.0"
	notesTemplate  = "taskgate/templates/NOTES.txt"
	defaultsValues = "" // no values file: the chart's own values.yaml
)

// release is the chart rendered for one set of values: every object decoded into its Kubernetes
// type, by kind and name, and NOTES.txt.
type release struct {
	objects map[string]any // "Deployment/taskgate" => *appsv1.Deployment
	notes   string
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// ciValuesFiles are the chart-testing values files, ci/*-values.yaml, plus "" for the defaults.
func ciValuesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 ci/*-values.yaml, found %v (%v)", files, err)
	}
	sort.Strings(files)
	return append([]string{defaultsValues}, files...)
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == defaultsValues {
		return map[string]any{}
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	values, err := loader.LoadValues(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return values
}

// renderManifests renders the chart as `helm template` does: the values coalesced with the chart's
// defaults and validated against values.schema.json, then the templates in strict mode (a
// reference to a value that does not exist fails).
func renderManifests(ch *chart.Chart, values map[string]any) (map[string]string, error) {
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = common.KubeVersion{Version: kubeVersion, Major: "1", Minor: "33"}
	options := common.ReleaseOptions{Name: releaseName, Namespace: releaseNS, Revision: 1, IsInstall: true}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, values, options, caps, false)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.RenderWithContext(context.Background(), ch, top)
}

func render(t *testing.T, values map[string]any) release {
	t.Helper()
	manifests, err := renderManifests(loadChart(t), values)
	if err != nil {
		t.Fatal(err)
	}
	r := release{objects: map[string]any{}, notes: manifests[notesTemplate]}
	if strings.TrimSpace(r.notes) == "" {
		t.Errorf("%s renders empty", notesTemplate)
	}
	for name, text := range manifests {
		if name == notesTemplate {
			continue
		}
		for i, doc := range documentSeparator.Split(text, -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			obj, err := decodeStrict([]byte(doc))
			if err != nil {
				t.Errorf("%s, document %d: %v\n%s", name, i, err, doc)
				continue
			}
			key := kindName(obj)
			if _, dup := r.objects[key]; dup {
				t.Errorf("%s: a second %s", name, key)
			}
			r.objects[key] = obj
		}
	}
	return r
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func stripComments(doc string) string {
	var kept []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// decodeStrict decodes one rendered object into the Go type of its apiVersion and kind, failing on
// a field the type does not have or a value of the wrong type (sigs.k8s.io/yaml's UnmarshalStrict:
// YAML to JSON, then encoding/json with DisallowUnknownFields, and no duplicate keys).
func decodeStrict(doc []byte) (any, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &serviceMonitor{}
	default:
		return nil, fmt.Errorf("no Go type for %s %s: add one to decodeStrict", meta.APIVersion, meta.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func kindName(obj any) string {
	o := obj.(interface {
		GetObjectKind() schema.ObjectKind
		GetName() string
	})
	return o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()
}

func object[T any](t *testing.T, r release, kind, name string) T {
	t.Helper()
	obj, ok := r.objects[kind+"/"+name].(T)
	if !ok {
		t.Fatalf("no %s/%s among %v", kind, name, r.keys())
	}
	return obj
}

func (r release) keys() []string {
	var keys []string
	for k := range r.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor (monitoring.coreos.com/v1)
// that the chart writes, with the field names of its CRD. k8s.io/api has no type for it, and the
// operator's Go module would bring its whole API into this one; a field the chart writes that is
// not here, or is misspelt, fails the strict decode.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}
