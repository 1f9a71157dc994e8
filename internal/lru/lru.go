// Package lru is a fixed-size least-recently-used map, safe for concurrent use. It is not
// hashicorp/golang-lru/v2: its simplelru under this lock was no faster in BenchmarkCache and held
// 16 more bytes a value, and its expirable LRU runs a goroutine per cache that never ends.
package lru

import (
	"container/list"
	"sync"
)

// Cache keeps at most size values; adding one more drops the least recently used.
type Cache[V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *entry[V], most recent first
	items map[string]*list.Element
}

type entry[V any] struct {
	key string
	val V
}

// New returns a cache of size values; a size of 0 or less keeps nothing.
func New[V any](size int) *Cache[V] {
	return &Cache[V]{size: size, order: list.New(), items: map[string]*list.Element{}}
}

// Get returns k's value and marks it used.
func (c *Cache[V]) Get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[V]).val, true
}

// Update changes k's value in place, creating it (from the zero value) when absent.
func (c *Cache[V]) Update(k string, change func(*V)) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		change(&el.Value.(*entry[V]).val)
		c.order.MoveToFront(el)
		return
	}
	e := &entry[V]{key: k}
	change(&e.val)
	c.items[k] = c.order.PushFront(e)
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry[V]).key)
	}
}

// DeleteIf drops k when drop says so of its value.
func (c *Cache[V]) DeleteIf(k string, drop func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok && drop(el.Value.(*entry[V]).val) {
		c.order.Remove(el)
		delete(c.items, k)
	}
}

// Len is the number of values kept.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
