//go:build memengine

package main

// The in-memory engine, for tests that run the taskgate binary with no engine server: the tests
// build it with -tags memengine. Release builds do not have it.
import _ "github.com/taskgate/taskgate/adapters/memengine"
