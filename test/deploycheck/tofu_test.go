package deploycheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tofu is the OpenTofu binary from $TOFU. Without it the test fails when CI is set and skips
// otherwise: scripts/deploy-checks always provides it.
func tofu(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("TOFU")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TOFU is not set: run scripts/deploy-checks, which builds OpenTofu and sets it")
		}
		t.Skip("TOFU is not set: run scripts/deploy-checks, which builds OpenTofu and sets it")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("TOFU=%s: %v", bin, err)
	}
	return bin
}

// tofuRun runs tofu in dir, offline: an empty CLI configuration, no update check, no color.
func tofuRun(t *testing.T, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cliConfig := filepath.Join(t.TempDir(), "tofurc")
	if err := os.WriteFile(cliConfig, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tofu(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0",
		"TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// tofuApply initializes and applies the configuration in dir (no provider: nothing is
// downloaded) and returns `tofu output -json`.
func tofuApply(t *testing.T, dir string) ([]byte, error) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-no-color", "-input=false", "-backend=false"},
		{"apply", "-no-color", "-input=false", "-auto-approve", "-lock=false", "-state=" + filepath.Join(dir, "state.tfstate")},
	} {
		if out, errOut, err := tofuRun(t, dir, args...); err != nil {
			return nil, &tofuError{args: args, out: out + errOut, err: err}
		}
	}
	out, errOut, err := tofuRun(t, dir, "output", "-no-color", "-json", "-state="+filepath.Join(dir, "state.tfstate"))
	if err != nil {
		return nil, &tofuError{args: []string{"output"}, out: out + errOut, err: err}
	}
	return []byte(out), nil
}

type tofuError struct {
	args []string
	out  string
	err  error
}

func (e *tofuError) Error() string {
	return "tofu " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.out
}

// The OpenTofu binary the checks use is the one scripts/deploy-checks pins.
func TestTofuVersion(t *testing.T) {
	out, errOut, err := tofuRun(t, t.TempDir(), "version")
	if err != nil {
		t.Fatalf("tofu version: %v\n%s", err, errOut)
	}
	want := os.Getenv("TOFU_VERSION")
	if want == "" {
		t.Skip("TOFU_VERSION is not set")
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "OpenTofu v"+want {
		t.Errorf("tofu version says %q, want OpenTofu v%s", first, want)
	}
}
