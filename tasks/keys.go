package tasks

import (
	"time"

	"github.com/taskgate/taskgate/internal/lru"
)

// unknownFor is how long a client key that named no execution answers "not found" without asking
// the engines again: a key that opens as no task id costs one engine call per tool that may run
// as a task, and repeating it must cost nothing.
const unknownFor = 30 * time.Second

// clientKeys are, per principal, what this replica learnt of the client keys that were read or
// started with: the tool whose execution a key named, or that it named none, until when (a
// shortcut only: a key found under a tool is read through that tool alone, one engine read rather
// than one per tool). Each caller keeps its own few, so that one caller's keys cannot push out
// another's, and the callers kept are few too: 16,384 keys at most in all.
type clientKeys struct {
	callers *lru.Cache[string, *lru.Cache[string, knownKey]]
}

// knownKey is the tool a key's execution was found under; with none, the key named no execution
// when last asked, and is known as unknown until then.
type knownKey struct {
	tool  string
	until time.Time
}

const keyCallers, keysPerCaller = 128, 128

func newClientKeys() clientKeys {
	return clientKeys{callers: lru.New[string, *lru.Cache[string, knownKey]](keyCallers)}
}

func (c clientKeys) get(caller, key string) (knownKey, bool) {
	if keys, ok := c.callers.Get(caller); ok {
		return keys.Get(key)
	}
	return knownKey{}, false
}

// found remembers that caller's key named an execution of tool.
func (c clientKeys) found(caller, key, tool string) { c.set(caller, key, knownKey{tool: tool}) }

// unknown remembers that caller's key named no execution, until then.
func (c clientKeys) unknown(caller, key string, until time.Time) {
	c.set(caller, key, knownKey{until: until})
}

func (c clientKeys) set(caller, key string, k knownKey) {
	var keys *lru.Cache[string, knownKey]
	c.callers.Update(caller, func(l **lru.Cache[string, knownKey]) {
		if *l == nil {
			*l = lru.New[string, knownKey](keysPerCaller)
		}
		keys = *l
	})
	keys.Update(key, func(v *knownKey) { *v = k })
}
