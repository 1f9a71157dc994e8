package adapters

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// The registry of drivers: what a Driver (package adapters/driver) is registered with, and what
// the mapping loader and the command line look drivers up in.

var (
	registry   sync.RWMutex
	drivers    = map[string]Driver{}
	driverName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// Register makes a driver available under name, the key that its engine blocks use in mapping
// files (engines.prod.<name>). It panics when name is not lower-case letters and digits, or when
// name or the driver's target key is already registered: two drivers cannot share them.
func Register(name string, d Driver) {
	registry.Lock()
	defer registry.Unlock()
	if !driverName.MatchString(name) {
		panic(fmt.Sprintf("adapters: driver name %q: use lower-case letters and digits, like temporal", name))
	}
	if _, dup := drivers[name]; dup {
		panic(fmt.Sprintf("adapters: a driver named %q is already registered", name))
	}
	key := d.Info().TargetKey
	for other, od := range drivers {
		if od.Info().TargetKey == key {
			panic(fmt.Sprintf("adapters: driver %q: target key %q is already the target key of driver %q", name, key, other))
		}
	}
	drivers[name] = d
}

// Lookup returns the driver registered under name.
func Lookup(name string) (Driver, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := drivers[name]
	return d, ok
}

// Drivers lists the names of the registered drivers, sorted.
func Drivers() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(drivers))
	for name := range drivers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
