package adapters_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	contract "github.com/taskgate/taskgate/adapters/driver"
)

// The errors adapters re-exports are the driver package's own values: errors.Is tells them apart
// whichever package a driver and its caller name them by.
func TestReexportedErrorsAreTheDriversOwn(t *testing.T) {
	for _, c := range []struct{ re, own error }{
		{adapters.ErrNotFound, contract.ErrNotFound},
		{adapters.ErrKeyConflict, contract.ErrKeyConflict},
		{adapters.ErrNotEnded, contract.ErrNotEnded},
		{adapters.ErrEnded, contract.ErrEnded},
		{adapters.ErrInvalid, contract.ErrInvalid},
		{adapters.ErrUnavailable, contract.ErrUnavailable},
		{adapters.ErrThrottled, contract.ErrThrottled},
		{adapters.ErrUnsupported, contract.ErrUnsupported},
	} {
		if !errors.Is(fmt.Errorf("wrapped: %w", c.own), c.re) || !errors.Is(fmt.Errorf("wrapped: %w", c.re), c.own) {
			t.Errorf("%v: adapters' error is not the driver package's", c.own)
		}
	}
	var th error = &contract.Throttle{}
	if !errors.Is(th, adapters.ErrThrottled) || !errors.Is(th, adapters.ErrUnavailable) {
		t.Errorf("a driver's *Throttle is not adapters.ErrThrottled")
	}
}
