// Package lru is a fixed-size least-recently-used map, safe for concurrent use. It is not
// hashicorp/golang-lru/v2: its simplelru under this lock was no faster in BenchmarkCache and held
// 16 more bytes a value, and its expirable LRU runs a goroutine per cache that never ends. Its
// order is a list threaded through the entries themselves: container/list would cost every value
// an element of 48 bytes more, and an allocation.
package lru

import "sync"

// Cache keeps at most size values and, when it weighs them, at most maxBytes of their weight;
// adding one more drops the least recently used.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	size     int
	maxBytes int64
	weigh    func(key K, v V) int64 // nil: values are not weighed
	bytes    int64
	// order is the ring of entries, most recent first after it: order.next is the most recently
	// used, order.prev the least.
	order entry[K, V]
	items map[K]*entry[K, V]
}

type entry[K comparable, V any] struct {
	prev, next *entry[K, V]
	key        K
	val        V
	weight     int64
}

// New returns a cache of size values; a size of 0 or less keeps nothing.
func New[K comparable, V any](size int) *Cache[K, V] {
	c := &Cache[K, V]{size: size, items: map[K]*entry[K, V]{}}
	c.order.prev, c.order.next = &c.order, &c.order
	return c
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
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.toFront(e)
	return e.val, true
}

// Lookup is Get that also returns k as the cache holds it (k itself when absent): a key equal to
// k whose strings may be other copies, which a caller that keeps k beside the cache can keep
// instead, so that the two share them.
func (c *Cache[K, V]) Lookup(k K) (K, V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		var zero V
		return k, zero, false
	}
	c.toFront(e)
	return e.key, e.val, true
}

// Update changes k's value in place, creating it (from the zero value) when absent. When the
// value has grown heavier than the whole cache may weigh, it is dropped.
func (c *Cache[K, V]) Update(k K, change func(*V)) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		e = &entry[K, V]{key: k}
		c.items[k] = e
	}
	c.toFront(e)
	change(&e.val)
	if c.weigh != nil {
		c.bytes -= e.weight
		e.weight = c.weigh(k, e.val)
		c.bytes += e.weight
		if e.weight > c.maxBytes {
			c.remove(e)
		}
	}
	for len(c.items) > c.size || c.bytes > c.maxBytes && c.weigh != nil {
		c.remove(c.order.prev)
	}
}

// toFront puts e, in the ring or not yet, first in it, under c.mu.
func (c *Cache[K, V]) toFront(e *entry[K, V]) {
	if e.prev != nil {
		e.prev.next, e.next.prev = e.next, e.prev
	}
	e.prev, e.next = &c.order, c.order.next
	c.order.next.prev = e
	c.order.next = e
}

// remove drops e, under c.mu.
func (c *Cache[K, V]) remove(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	delete(c.items, e.key)
	c.bytes -= e.weight
}

// DeleteIf drops k when drop says so of its value.
func (c *Cache[K, V]) DeleteIf(k K, drop func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok && drop(e.val) {
		c.remove(e)
	}
}

// Len returns the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Bytes returns the weight of the values kept (0 when the cache does not weigh them).
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
