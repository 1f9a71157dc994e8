package lru

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestCache(t *testing.T) {
	c := New[string, int](2)
	c.Update("a", func(v *int) { *v = 1 })
	c.Update("b", func(v *int) { *v = 2 })
	c.Get("a") // b is now the least recently used
	c.Update("c", func(v *int) { *v = 3 })
	if _, ok := c.Get("b"); ok || c.Len() != 2 {
		t.Fatalf("b should have been dropped: len %d", c.Len())
	}
	c.Update("a", func(v *int) { *v += 10 })
	if v, _ := c.Get("a"); v != 11 {
		t.Fatalf("a = %d", v)
	}
	c.DeleteIf("a", func(v int) bool { return v < 10 })
	c.DeleteIf("c", func(v int) bool { return v < 10 })
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a was dropped although the test said keep")
	}
	if _, ok := c.Get("c"); ok {
		t.Fatal("c was kept")
	}
	none := New[string, int](0)
	none.Update("x", func(v *int) { *v = 1 })
	if none.Len() != 0 {
		t.Fatal("a cache of size 0 kept a value")
	}
}

// BenchmarkCache is the coalesce cache's use of a Cache from two goroutines: a Get and an Update
// of one execution per poll, and a DeleteIf now and then, with every key kept ("hits") and with
// four keys for each place ("evicting").
func BenchmarkCache(b *testing.B) {
	type reading struct {
		readAt, born, hold time.Time
		due, window        time.Duration
		outcome            *string
		state, id          string
	}
	for _, c := range []struct {
		name       string
		size, keys int
	}{{"hits", 10000, 1000}, {"evicting", 1000, 4000}} {
		keys := make([]string, c.keys)
		for i := range keys {
			keys[i] = "temporal/taskgate/SummarizeDataset/" + strconv.Itoa(i)
		}
		b.Run(c.name, func(b *testing.B) {
			cache := New[string, reading](c.size)
			now := time.Now()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i += 7 {
					k := keys[i%len(keys)]
					cache.Get(k)
					cache.Update(k, func(v *reading) { v.readAt, v.due = now, time.Second })
					if i%50 == 0 {
						cache.DeleteIf(k, func(v reading) bool { return v.outcome == nil })
					}
				}
			})
		})
	}
}

// Key answers the key as first stored, and does not count as a use.
func TestLookupGivesTheStoredCopy(t *testing.T) {
	c := New[string, int](2)
	first := strings.Clone("a")
	c.Update(first, func(v *int) { *v = 1 })
	c.Update("b", func(v *int) { *v = 2 })
	if k, v, ok := c.Lookup(strings.Clone("a")); !ok || v != 1 || unsafe.StringData(k) != unsafe.StringData(first) {
		t.Errorf("Lookup(a) = %q, %d, %v; want the copy stored first, 1", k, v, ok)
	}
	if k, v, ok := c.Lookup("z"); ok || k != "z" || v != 0 {
		t.Errorf("Lookup(z) = %q, %d, %v; want z, 0, false", k, v, ok)
	}
	c.Update("c", func(v *int) { *v = 3 }) // b is the least recently used: Lookup marked a used
	if _, ok := c.Get("a"); !ok {
		t.Error("a was dropped: Lookup did not mark it used")
	}
}

func TestWeighedCache(t *testing.T) {
	weigh := func(k string, v string) int64 { return int64(len(k) + len(v)) }
	c := NewWeighed[string, string](10, 10, weigh)
	c.Update("a", func(v *string) { *v = "1234" }) // 5 bytes
	c.Update("b", func(v *string) { *v = "1234" }) // 10
	if c.Len() != 2 || c.Bytes() != 10 {
		t.Fatalf("two values of 5 bytes: len %d, %d bytes", c.Len(), c.Bytes())
	}
	c.Get("a")                                   // b is now the least recently used
	c.Update("c", func(v *string) { *v = "12" }) // 13 bytes: b goes
	if _, ok := c.Get("b"); ok || c.Len() != 2 || c.Bytes() != 8 {
		t.Fatalf("b should have been dropped for its bytes: len %d, %d bytes", c.Len(), c.Bytes())
	}
	c.Update("c", func(v *string) { *v = "123456789012" }) // heavier than the whole cache
	if _, ok := c.Get("c"); ok || c.Bytes() != 5 {
		t.Fatalf("a value of 13 bytes was kept in a cache of 10, or its bytes were not given back: %d bytes", c.Bytes())
	}
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a was dropped for a value that was not kept")
	}
	c.Update("a", func(v *string) { *v = "1" }) // shrinks
	c.DeleteIf("a", func(string) bool { return false })
	if c.Bytes() != 2 {
		t.Fatalf("a shrank to 2 bytes; the cache counts %d", c.Bytes())
	}
	c.DeleteIf("a", func(string) bool { return true })
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Fatalf("empty cache: len %d, %d bytes", c.Len(), c.Bytes())
	}
	none := NewWeighed[string, string](10, 0, weigh)
	none.Update("x", func(v *string) { *v = "" })
	if none.Len() != 0 {
		t.Fatal("a cache of 0 bytes kept a value")
	}
}

// Under a long run of gets, updates and deletes, the cache keeps what a plain list kept in the
// order of use keeps: the order threaded through the entries loses and repeats none.
func TestCacheAgreesWithAModel(t *testing.T) {
	const size = 5
	c := New[int, int](size)
	var model []int // keys, most recently used first
	use := func(k int) {
		model = slices.DeleteFunc(model, func(m int) bool { return m == k })
		model = append([]int{k}, model...)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 10000 {
		k := r.IntN(9)
		switch r.IntN(3) {
		case 0:
			_, ok := c.Get(k)
			if ok != slices.Contains(model, k) {
				t.Fatalf("step %d: Get(%d) found %v, the model %v", i, k, ok, model)
			}
			if ok {
				use(k)
			}
		case 1:
			c.Update(k, func(v *int) { *v = k })
			use(k)
			if len(model) > size {
				model = model[:size]
			}
		case 2:
			c.DeleteIf(k, func(int) bool { return true })
			model = slices.DeleteFunc(model, func(m int) bool { return m == k })
		}
		if c.Len() != len(model) {
			t.Fatalf("step %d: %d kept, the model %d", i, c.Len(), len(model))
		}
	}
}
