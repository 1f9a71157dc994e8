package memengine_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/memengine"
)

func TestConformance(t *testing.T) {
	e := memengine.New(memengine.Options{})
	t.Cleanup(func() { e.Close() })
	enginetest.RunConformanceTests(t, func(*testing.T) enginetest.Harness { return harness{e} })
}

// harness shares one engine among all subtests.
type harness struct{ engine *memengine.Engine }

func (h harness) Conn() driver.Conn { return h.engine }

func (harness) Driver() driver.Driver { return memengine.Driver{} }

func (harness) Target(name string) driver.Target {
	switch name {
	case "echo":
		return memengine.Job(memengine.Echo, 0)
	case "fail":
		return memengine.Job(memengine.Fail, 0)
	case "timeout":
		return memengine.Job(memengine.Echo, 2*time.Second)
	case "unpolled", "absent":
		return memengine.Job("nobody", 0)
	case "wrongkind":
		return driver.Target{Name: memengine.Echo} // no Spec: a target the driver did not decode
	case "ask":
		return memengine.Job(memengine.Ask, 0)
	case "ask-two":
		return memengine.Job(memengine.AskTwo, 0)
	case "steps":
		return memengine.Job(memengine.Steps, 0)
	}
	return driver.Target{}
}

func (harness) Missing() driver.Ref {
	return driver.Ref{ID: memengine.Echo + "/" + driver.CallerTag("") + "/" + uuid.NewString()}
}

func (harness) Foreign() []driver.Ref {
	id := uuid.NewString()
	return []driver.Ref{
		{ID: memengine.Fail + "/" + id},
		{ID: memengine.Echo + "/" + driver.CallerTag("") + "/" + id + "/" + id},
		{ID: memengine.Echo + "x/" + id},
		{ID: memengine.Echo + "/" + id + "/x"},
		{ID: memengine.Echo + "/k-" + "ABCDEF0123456789abcdef0123456789"},
		{ID: id},
	}
}

// Unreachable is an engine opened unavailable: an in-memory engine has no server to lose.
func (harness) Unreachable() driver.Conn {
	return memengine.New(memengine.Options{Unavailable: true})
}

func (harness) ShouldSkip(string) (bool, string) { return false, "" }

func (harness) Close() {}
