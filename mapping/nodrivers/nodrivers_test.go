// Package nodrivers_test loads a mapping in a program that registers no engine driver.
package nodrivers_test

import (
	"testing"

	"github.com/taskgate/taskgate/mapping"
)

func TestNoDrivers(t *testing.T) {
	_, err := mapping.Parse("m.yaml", []byte("engines:\n  a: {somekind: {}}\n"))
	const want = `m.yaml:2:6: engines.a: no kind of engine is registered (this program was built without engine drivers: import some, as the taskgate command imports adapters/builtin)`
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}
