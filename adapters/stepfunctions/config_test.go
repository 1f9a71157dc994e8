package stepfunctions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

func TestNewNeedsRegion(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_PROFILE", "")
	_, err := stepfunctions.New(t.Context(), stepfunctions.Config{})
	const want = "no AWS region for Step Functions: set region: in the engine block, or AWS_REGION, or a region in the AWS profile"
	if err == nil || err.Error() != want {
		t.Errorf("New without a region: error %v, want %s", err, want)
	}
}
