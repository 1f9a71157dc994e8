package deploycheck

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

var update = flag.Bool("update", false, "rewrite the examples' iam-policy.json from the Go function")

const awsExample = "terraform/examples/aws-stepfunctions-pipeline"
const k8sExample = "terraform/examples/kubernetes-temporal"

// awsExampleFixture stands for what only an apply of the AWS example knows: the ARN of the
// sample state machine's alias, in the account and region of terraform.tfvars.example.
var awsExampleFixture = map[string]cty.Value{
	"aws_sfn_alias.live.arn": cty.StringVal("arn:aws:states:eu-west-1:123456789012:stateMachine:taskgate-sample-order-review:live"),
}

// accessesOf turns the Step Functions arguments of a call of the taskgate-aws module into the Go
// function's input.
func accessesOf(t *testing.T, args map[string]cty.Value) []stepfunctions.Access {
	t.Helper()
	caller := stepfunctions.Access{}
	if v, ok := args["state_machine_arns"]; ok {
		caller.StateMachines = ctyStrings(t, v)
	}
	if v, ok := args["sync_express_state_machine_arns"]; ok {
		caller.SyncExpress = ctyStrings(t, v)
	}
	if v, ok := args["human_input"]; ok && !v.IsNull() {
		caller.HumanInput = v.True()
	}
	accesses := []stepfunctions.Access{caller}
	if v, ok := args["cross_account"]; ok && !v.IsNull() {
		for it := v.ElementIterator(); it.Next(); {
			_, c := it.Element()
			a := stepfunctions.Access{RoleARN: c.GetAttr("role_arn").AsString()}
			for _, attr := range []string{"state_machine_arns", "sync_express_state_machine_arns", "human_input"} {
				if !c.Type().HasAttribute(attr) || c.GetAttr(attr).IsNull() {
					continue
				}
				switch attr {
				case "state_machine_arns":
					a.StateMachines = ctyStrings(t, c.GetAttr(attr))
				case "sync_express_state_machine_arns":
					a.SyncExpress = ctyStrings(t, c.GetAttr(attr))
				case "human_input":
					a.HumanInput = c.GetAttr(attr).True()
				}
			}
			accesses = append(accesses, a)
		}
	}
	return accesses
}

// The AWS example's task role gets exactly the policy `taskgate iam-policy` makes for its mapping:
// iam-policy.json beside the example is the Go function's output for the example's inputs, and the
// taskgate-iam-policy module, which the taskgate-aws module attaches, builds the same policy from
// them. Run with -update after changing the example or the generator.
func TestAWSExamplePolicy(t *testing.T) {
	mods := loadModules(t)
	e := newEvaluator(t, mods, awsExample, awsExampleFixture)
	args := e.moduleArgs("taskgate")
	accesses := accessesOf(t, args)
	want, err := stepfunctions.IAMPolicies(accesses)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Caller.Statement) == 0 {
		t.Fatal("the example's policy has no statement")
	}

	golden := filepath.Join(repoRoot(t), awsExample, "iam-policy.json")
	if *update {
		if err := os.WriteFile(golden, want.Caller.JSON(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestAWSExamplePolicy -update to write it)", err)
	}
	if !bytes.Equal(committed, want.Caller.JSON()) {
		t.Errorf("%s is not what the Go function makes of the example's inputs (run with -update if that is expected):\n%s\nGo:\n%s",
			golden, committed, want.Caller.JSON())
	}

	results := runPolicyModule(t, []policyInputs{inputsOf(accesses)})
	checkSamePolicies(t, "AWS example", results[0], want)

	// The task role may start exactly the mapping's targets.
	mapping := args["mapping_yaml"].AsString()
	var targets []string
	for _, m := range regexp.MustCompile(`(?m)^\s*stateMachine:\s*(\S+)\s*$`).FindAllStringSubmatch(mapping, -1) {
		targets = append(targets, m[1])
	}
	var granted []string
	for _, a := range accesses {
		granted = append(granted, a.StateMachines...)
		granted = append(granted, a.SyncExpress...)
	}
	slices.Sort(targets)
	slices.Sort(granted)
	if !slices.Equal(targets, granted) {
		t.Errorf("the mapping's targets %v are not the state machines the task role may start %v", targets, granted)
	}
}

// Each example's mapping, as the example hands it to its module, passes `taskgate validate`.
func TestExampleMappingsValidate(t *testing.T) {
	mods := loadModules(t)
	tests := []struct {
		dir     string
		fixture map[string]cty.Value
		env     func(args map[string]cty.Value) []string
	}{
		{awsExample, awsExampleFixture, func(map[string]cty.Value) []string { return nil }},
		{k8sExample, nil, func(args map[string]cty.Value) []string {
			// What the module sets in the pod's environment.
			return []string{
				"TEMPORAL_ADDRESS=" + args["temporal_address"].AsString(),
				"TEMPORAL_NAMESPACE=" + args["temporal_namespace"].AsString(),
			}
		}},
	}
	bin := taskgateBinary(t)
	for _, tc := range tests {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			args := newEvaluator(t, mods, tc.dir, tc.fixture).moduleArgs("taskgate")
			file := filepath.Join(t.TempDir(), "tools.yaml")
			if err := os.WriteFile(file, []byte(args["mapping_yaml"].AsString()), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "validate", file)
			cmd.Env = append(os.Environ(), append(tc.env(args), "TASKGATE_KEY_CLIENTS=example-key-0123456789")...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("taskgate validate: %v\n%s\nmapping:\n%s", err, out, args["mapping_yaml"].AsString())
			}
		})
	}
}

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
	binOut    []byte
)

// taskgateBinary builds taskgate as the Dockerfile does (CGO_ENABLED=0, -trimpath, the version
// stamped with -X main.version) once per test run.
func taskgateBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deploycheck")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "taskgate")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+stampedVersion, "-o", binPath, "./cmd/taskgate")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		binOut, binErr = cmd.CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("building taskgate: %v\n%s", binErr, binOut)
	}
	return binPath
}

const stampedVersion = "v0.0.0-deploycheck"

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// Every `yaml-language-server: $schema=PATH` comment of the repository names a file that exists,
// relative to the file it is in, so that editors find the mapping schema.
func TestSchemaPathsResolve(t *testing.T) {
	root := repoRoot(t)
	schemaRef := regexp.MustCompile(`yaml-language-server:\s*\$schema=(\S+)`)
	found := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".tftpl"}, filepath.Ext(path)):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range schemaRef.FindAllStringSubmatch(string(src), -1) {
			found++
			if strings.Contains(m[1], "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), m[1])); err != nil {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: $schema=%s does not resolve: %v", rel, m[1], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no $schema comment found: the walk looked in the wrong place")
	}
}
