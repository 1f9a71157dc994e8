package memengine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/memengine"
)

// TestSamples: the inputs of a program's latest executions, newest first and whoever started
// them, and none of another program's.
func TestSamples(t *testing.T) {
	ctx := t.Context()
	e := memengine.New(memengine.Options{})
	defer e.Close()
	echo, fail := memengine.Job(memengine.Echo, 0), memengine.Job(memengine.Fail, 0)
	for i, caller := range []string{"alice", "bob", "", "alice"} {
		in := fmt.Sprintf(`{ "seconds": 60, "text": "%d" }`, i)
		if _, err := e.Start(ctx, echo, driver.StartRequest{Input: []byte(in), Caller: caller}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Start(ctx, fail, driver.StartRequest{Input: []byte(`{"seconds":60,"reason":"no"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{2, `{"seconds":60,"text":"3"} {"seconds":60,"text":"2"}`},
		{10, `{"seconds":60,"text":"3"} {"seconds":60,"text":"2"} {"seconds":60,"text":"1"} {"seconds":60,"text":"0"}`},
	} {
		inputs, err := e.Samples(ctx, echo, c.n)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, in := range inputs {
			got = append(got, string(in))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("Samples(echo, %d) = %s, want %s", c.n, got, c.want)
		}
	}
	if inputs, err := e.Samples(ctx, memengine.Job("ask", 0), 5); err != nil || len(inputs) != 0 {
		t.Errorf("Samples of a program never started = %s, %v; want none", inputs, err)
	}
	if _, err := e.Samples(ctx, echo, 0); !errors.Is(err, driver.ErrInvalid) || err.Error() != "memory: invalid request: read the inputs of at least 1 execution, not 0" {
		t.Errorf("Samples(0) = %v", err)
	}
	e.Close()
	if _, err := e.Samples(ctx, echo, 1); !errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("Samples of a closed engine = %v, want ErrUnavailable", err)
	}
}
