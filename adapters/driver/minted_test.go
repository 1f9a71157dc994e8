package driver_test

import (
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

func TestMinted(t *testing.T) {
	tag := driver.CallerTag("alice")
	fresh, keyed := driver.NewSuffix("alice"), driver.KeySuffix("order-7", "alice", "k-", 40)
	if !driver.StartedSuffix(fresh, "k-", 40) || !driver.StartedSuffix(keyed, "k-", 40) {
		t.Fatalf("suffixes %q and %q are not of the shape StartedSuffix takes", fresh, keyed)
	}
	if again := driver.KeySuffix("order-7", "alice", "k-", 40); again != keyed {
		t.Errorf("KeySuffix gave %q, then %q for the same key and caller", keyed, again)
	}
	flip := func(s string) string { // the last hex digit changed
		last := s[len(s)-1]
		return s[:len(s)-1] + map[bool]string{true: "0", false: "1"}[last != '0']
	}
	for id, want := range map[string]bool{
		"taskgate/Echo/" + tag + "/" + fresh + "/1f0b6a7e-4c1d-4a5b-9e2f-0c1d2e3f4a5b": true,
		"arn:aws:states:us-east-1:1:execution:m:" + tag + "-" + keyed:                  true,
		"svc/handler/" + tag + "-" + keyed + "/inv_1":                                  true,
		"p/" + tag + "/" + fresh:                                                       true,
		"p/" + tag + "/" + flip(fresh):                                                 false,
		"p/" + tag + "/" + flip(keyed):                                                 false,
		"p/" + tag + "/" + strings.ToUpper(fresh):                                      false,
		"p/" + tag + "/" + driver.NewSuffix("bob"):                                     false,
		"p/" + driver.CallerTag("bob") + "/" + fresh:                                   false,
		"p/" + tag + "/3f2b8c1e-9d4a-4b7e-8c2f-1a2b3c4d5e6f":                           false, // made up after the tag
		"p/" + tag + fresh:                                                             false,
		"p/" + tag + "/":                                                               false,
		"":                                                                             false,
	} {
		if got := driver.Minted(id, "alice"); got != want {
			t.Errorf("Minted(%q, alice) = %v, want %v", id, got, want)
		}
	}
}
