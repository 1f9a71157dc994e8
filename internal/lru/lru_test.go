package lru

import "testing"

func TestCache(t *testing.T) {
	c := New[int](2)
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
	none := New[int](0)
	none.Update("x", func(v *int) { *v = 1 })
	if none.Len() != 0 {
		t.Fatal("a cache of size 0 kept a value")
	}
}
