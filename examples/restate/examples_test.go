package restateexamples_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestIAMPolicySaysNothing: Restate has no cloud IAM, so `taskgate iam-policy` has no policy for
// the examples' engine, and says which engines it is for.
func TestIAMPolicySaysNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "taskgate")
	if out, err := exec.Command("go", "build", "-tags", "dev", "-o", bin, "../../cmd/taskgate").CombinedOutput(); err != nil {
		t.Fatalf("building taskgate: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "iam-policy", "--config", "tools.yaml").CombinedOutput()
	const want = "taskgate: no engine of this mapping has a cloud policy to print: iam-policy is for engines such as Step Functions\n"
	if err == nil || string(out) != want {
		t.Fatalf("iam-policy of the Restate examples: %v\n%s\nwant %q", err, out, want)
	}
}
