// Package lru is a fixed-size least-recently-used map, safe for concurrent use. It is not
// hashicorp/golang-lru/v2: its simplelru under this lock was no faster in BenchmarkCache and held
// 16 more bytes a value, and its expirable LRU runs a goroutine per cache that never ends.
package lru

import (
	"container/list"
	"sync"
)

// Cache keeps at most size values and, when it weighs them, at most maxBytes of their weight;
// adding one more drops the least recently used.
type Cache[V any] struct {
	mu       sync.Mutex
	size     int
	maxBytes int64
	weigh    func(key string, v V) int64 // nil: values are not weighed
	bytes    int64
	order    *list.List // of *entry[V], most recent first
	items    map[string]*list.Element
}

type entry[V any] struct {
	key    string
	val    V
	weight int64
}

// New returns a cache of size values; a size of 0 or less keeps nothing.
func New[V any](size int) *Cache[V] {
	return &Cache[V]{size: size, order: list.New(), items: map[string]*list.Element{}}
}

// NewWeighed returns a cache of size values that weigh at most maxBytes in all, weigh counting
// the bytes that a key and its value hold. A value heavier than maxBytes on its own is not kept;
// a maxBytes of 0 or less keeps nothing.
func NewWeighed[V any](size int, maxBytes int64, weigh func(key string, v V) int64) *Cache[V] {
	c := New[V](size)
	c.maxBytes, c.weigh = maxBytes, weigh
	if maxBytes <= 0 {
		c.size = 0
	}
	return c
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

// Update changes k's value in place, creating it (from the zero value) when absent. When the
// value has grown heavier than the whole cache may weigh, it is dropped.
func (c *Cache[V]) Update(k string, change func(*V)) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if ok {
		c.order.MoveToFront(el)
	} else {
		el = c.order.PushFront(&entry[V]{key: k})
		c.items[k] = el
	}
	e := el.Value.(*entry[V])
	change(&e.val)
	if c.weigh != nil {
		c.bytes -= e.weight
		e.weight = c.weigh(k, e.val)
		c.bytes += e.weight
		if e.weight > c.maxBytes {
			c.remove(el)
		}
	}
	for c.order.Len() > c.size || c.bytes > c.maxBytes && c.weigh != nil {
		c.remove(c.order.Back())
	}
}

// remove drops el, under c.mu.
func (c *Cache[V]) remove(el *list.Element) {
	e := el.Value.(*entry[V])
	c.order.Remove(el)
	delete(c.items, e.key)
	c.bytes -= e.weight
}

// DeleteIf drops k when drop says so of its value.
func (c *Cache[V]) DeleteIf(k string, drop func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok && drop(el.Value.(*entry[V]).val) {
		c.remove(el)
	}
}

// Len returns the number of values kept.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes returns the weight of the values kept (0 when the cache does not weigh them).
func (c *Cache[V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
