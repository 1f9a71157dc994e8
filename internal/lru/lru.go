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
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	size     int
	maxBytes int64
	weigh    func(key K, v V) int64 // nil: values are not weighed
	bytes    int64
	order    *list.List // of *entry[K, V], most recent first
	items    map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key    K
	val    V
	weight int64
}

// New returns a cache of size values; a size of 0 or less keeps nothing.
func New[K comparable, V any](size int) *Cache[K, V] {
	return &Cache[K, V]{size: size, order: list.New(), items: map[K]*list.Element{}}
}

// NewWeighed returns a cache of size values that weigh at most maxBytes in all, weigh counting
// the bytes that a key and its value hold. A value heavier than maxBytes on its own is not kept;
// a maxBytes of 0 or less keeps nothing.
func NewWeighed[K comparable, V any](size int, maxBytes int64, weigh func(key K, v V) int64) *Cache[K, V] {
	c := New[K, V](size)
	c.maxBytes, c.weigh = maxBytes, weigh
	if maxBytes <= 0 {
		c.size = 0
	}
	return c
}

// Get returns k's value and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).val, true
}

// Update changes k's value in place, creating it (from the zero value) when absent. When the
// value has grown heavier than the whole cache may weigh, it is dropped.
func (c *Cache[K, V]) Update(k K, change func(*V)) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if ok {
		c.order.MoveToFront(el)
	} else {
		el = c.order.PushFront(&entry[K, V]{key: k})
		c.items[k] = el
	}
	e := el.Value.(*entry[K, V])
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
func (c *Cache[K, V]) remove(el *list.Element) {
	e := el.Value.(*entry[K, V])
	c.order.Remove(el)
	delete(c.items, e.key)
	c.bytes -= e.weight
}

// DeleteIf drops k when drop says so of its value.
func (c *Cache[K, V]) DeleteIf(k K, drop func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok && drop(el.Value.(*entry[K, V]).val) {
		c.remove(el)
	}
}

// Len returns the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes returns the weight of the values kept (0 when the cache does not weigh them).
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
