package driver_test

import (
	"slices"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

func TestEnv(t *testing.T) {
	t.Setenv("TASKGATE_TEST_ENV", "process")
	if v, ok := driver.Env(nil).LookupEnv("TASKGATE_TEST_ENV"); !ok || v != "process" {
		t.Errorf("a nil Env does not read the process's environment: %q, %v", v, ok)
	}
	e := driver.Env{"A=1", "B=", "A=2"}
	for key, want := range map[string]struct {
		v  string
		ok bool
	}{"A": {"2", true}, "B": {"", true}, "C": {"", false}, "TASKGATE_TEST_ENV": {"", false}} {
		if v, ok := e.LookupEnv(key); v != want.v || ok != want.ok {
			t.Errorf("LookupEnv(%s) = %q, %v; want %q, %v", key, v, ok, want.v, want.ok)
		}
	}
	with := driver.Env(nil).With("TASKGATE_TEST_ENV=override")
	if v, _ := with.LookupEnv("TASKGATE_TEST_ENV"); v != "override" {
		t.Errorf("With does not win over the process's environment: %q", v)
	}
	if v, ok := with.LookupEnv("PATH"); !ok || v == "" {
		t.Errorf("With dropped the process's environment")
	}
	if got := e.Environ(); !slices.Equal(got, e) {
		t.Errorf("Environ() = %v", got)
	}
}
