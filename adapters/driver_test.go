package adapters_test

import (
	"slices"
	"testing"

	"github.com/taskgate/taskgate/adapters"
)

// driver is the least a driver can be: this test only registers it. Its schema is there for
// ExampleRegister, whose mapping file is read while this driver is registered.
type driver struct{ key string }

func (d driver) Info() adapters.DriverInfo {
	return adapters.DriverInfo{TargetKey: d.key, Schema: []byte(`{"engine": {"type": "object"}, "target": {"type": "string"}}`)}
}

func (driver) DecodeEngine(adapters.Block) adapters.EngineConfig { return nil }
func (driver) DecodeTarget(adapters.Block) adapters.Target       { return adapters.Target{} }
func (driver) FormatRef(adapters.Ref) string                     { return "" }
func (driver) ParseRef(string) (adapters.Ref, error)             { return adapters.Ref{}, nil }

func TestRegister(t *testing.T) {
	adapters.Register("registertest", driver{key: "registerTestTarget"})
	if d, ok := adapters.Lookup("registertest"); !ok || d.Info().TargetKey != "registerTestTarget" {
		t.Errorf("Lookup = %v, %v", d, ok)
	}
	if _, ok := adapters.Lookup("nothing"); ok {
		t.Errorf("Lookup of an unregistered name found a driver")
	}
	if names := adapters.Drivers(); !slices.Contains(names, "registertest") || !slices.IsSorted(names) {
		t.Errorf("Drivers() = %v", names)
	}
	for _, c := range []struct{ name, key, panic string }{
		{"registertest", "other", `adapters: a driver named "registertest" is already registered`},
		{"registertest2", "registerTestTarget", `adapters: driver "registertest2": target key "registerTestTarget" is already the target key of driver "registertest"`},
		{"Bad-Name", "x", `adapters: driver name "Bad-Name": use lower-case letters and digits, like temporal`},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.panic {
					t.Errorf("Register(%q, %q) panicked with %v, want %s", c.name, c.key, r, c.panic)
				}
			}()
			adapters.Register(c.name, driver{key: c.key})
		}()
	}
}
