package main

// The tests of the command's own behaviour serve the in-memory engine: they need no server.
import _ "github.com/taskgate/taskgate/adapters/memengine"
