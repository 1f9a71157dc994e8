package enginetest_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/memengine"
)

// A driver package runs the suite from a test of its own, TestConformance(t *testing.T), with a
// harness over its engine. Here the engine is the in-memory one; a driver of an engine server
// opens its client where the test's environment says (skipping the test when it names none) and
// runs the suite's workflows on a worker of its own. The suite cannot run without the engine, so
// this example has no output to check.
func ExampleRunConformanceTests() {
	var t *testing.T // TestConformance's

	// The engine is costly to set up: every subtest shares it, and the parent test closes it.
	engine := memengine.New(memengine.Options{})
	t.Cleanup(func() { engine.Close() })
	enginetest.RunConformanceTests(t, func(*testing.T) enginetest.Harness { return harness{engine} })
}

// harness gives the suite the shared engine and the targets of its workflows.
type harness struct{ engine *memengine.Engine }

func (h harness) Conn() adapters.Conn { return h.engine }

func (harness) Driver() adapters.Driver { return memengine.Driver{} }

// Target is the engine's own copy of the suite's workflow name: the in-memory engine names its
// programs as the suite does, and runs none under the names of targets that no worker serves.
func (harness) Target(name string) adapters.Target {
	switch name {
	case "timeout":
		return memengine.Job(memengine.Echo, 2*time.Second)
	case "unpolled", "absent":
		return memengine.Job("nobody", 0)
	case "wrongkind":
		return adapters.Target{Name: memengine.Echo} // no Spec: the driver never decoded it
	}
	return memengine.Job(name, 0)
}

func (harness) Missing() adapters.Ref {
	return adapters.Ref{ID: memengine.Echo + "/" + driver.CallerTag("") + "/" + uuid.NewString()}
}

func (harness) Foreign() []adapters.Ref {
	return []adapters.Ref{{ID: memengine.Fail + "/" + uuid.NewString()}, {ID: uuid.NewString()}}
}

func (harness) Unreachable() adapters.Conn {
	return memengine.New(memengine.Options{Unavailable: true})
}

func (harness) ShouldSkip(string) (bool, string) { return false, "" }

// Close releases what one subtest's harness made: nothing, the engine is the parent test's.
func (harness) Close() {}
