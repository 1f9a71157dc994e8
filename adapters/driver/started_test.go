package driver_test

import (
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

func TestStartedSuffix(t *testing.T) {
	hex32 := strings.Repeat("0a", 16)
	for s, want := range map[string]bool{
		"3f2b8c1e-9d4a-4b7e-8c2f-1a2b3c4d5e6f":   true,
		"3F2B8C1E-9D4A-4B7E-8C2F-1A2B3C4D5E6F":   false, // not the canonical form
		"3f2b8c1e9d4a4b7e8c2f1a2b3c4d5e6f":       false,
		"3f2b8c1e-9d4a-4b7e-8c2f-1a2b3c4d5e6f-x": false,
		"k-" + hex32:                             true,
		"k-" + hex32[:31]:                        false,
		"k-" + strings.ToUpper(hex32):            false,
		"planted":                                false,
		"":                                       false,
	} {
		if got := driver.StartedSuffix(s, "k-", 32); got != want {
			t.Errorf("StartedSuffix(%q) = %v, want %v", s, got, want)
		}
	}
}
