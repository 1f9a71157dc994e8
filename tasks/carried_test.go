package tasks

import (
	"context"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// TestCarriedIsSharedByToolAndPayer: the reads of one caller through one tool carry one context
// for all the tasks the sweeps follow, which charges every engine call made with it to that
// caller; another caller's, or another tool's, is another.
func TestCarriedIsSharedByToolAndPayer(t *testing.T) {
	keys, _ := token.ParseKeys(token.NewKey("c1"))
	sealed, _ := token.NewSealed(keys)
	s, err := New(Config{Mapping: &mapping.Set{}, Tokens: sealed})
	if err != nil {
		t.Fatal(err)
	}
	deploy, release := &mapping.Tool{Name: "deploy"}, &mapping.Tool{Name: "release"}
	var alicePaid, bobPaid int
	alice, bob := NewPayer(func() { alicePaid++ }), NewPayer(func() { bobPaid++ })
	read := func(tool *mapping.Tool, p *Payer) context.Context {
		return s.carried(Charging(context.WithValue(WithPrincipal(context.Background(), "x"), toolKey{}, tool), p))
	}
	first := read(deploy, alice)
	if read(deploy, alice) != first {
		t.Fatal("two reads of one caller through one tool carry two contexts")
	}
	if read(deploy, bob) == first || read(release, alice) == first {
		t.Fatal("another caller's read, or another tool's, carries the same context")
	}
	if tool, _ := first.Value(toolKey{}).(*mapping.Tool); tool != deploy {
		t.Fatalf("the carried tool: %v, want deploy", tool)
	}
	for range 2 {
		if _, _, err := bill(first, &adapters.Call{Op: adapters.OpOutcome}); err != nil {
			t.Fatal(err)
		}
	}
	if alicePaid != 2 || bobPaid != 0 {
		t.Fatalf("two calls with alice's carried context: alice paid %d, bob %d; want 2 and 0", alicePaid, bobPaid)
	}
	if none := s.carried(context.Background()); none.Value(toolKey{}) != nil || requestOf(none) != nil {
		t.Fatal("a read with no tool and no payer carries either")
	}
}
