package memengine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/memengine"
	"github.com/taskgate/taskgate/mapping"
)

func TestMappingErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`engines: {m: {memory: {retention: soon}}}`,
			`m.yaml:1:35: engines.m.memory.retention: "soon" is not a duration (use a Go duration like 30s, 5m, 24h)`},
		{`engines: {m: {memory: {}}}
tools: [{name: a, description: d, engine: m, inputSchema: {type: object}, job: {program: Echo}}]`,
			`m.yaml:2:90: tools[0].job.program: "Echo" is not a program name (lower-case letters, digits and -, like echo)`},
		{`engines: {m: {memory: {}}}
tools: [{name: a, description: d, engine: m, inputSchema: {type: object}, job: {}}]`,
			`m.yaml:2:80: tools[0].job: missing required key "program" (echo or fail)`},
	} {
		if _, err := mapping.Parse("m.yaml", []byte(c.src)); err == nil || err.Error() != c.want {
			t.Errorf("got:\n%v\nwant:\n%s", err, c.want)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	ctx := context.Background()
	e := memengine.New(memengine.Options{Retention: time.Hour})
	defer e.Close()
	echo := memengine.Job(memengine.Echo, 0)
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: []byte(`{"seconds":60}`), Key: "k", Caller: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		err  error
		is   error
		want string
	}{
		{func() error {
			_, err := e.Start(ctx, echo, driver.StartRequest{Input: []byte(`{"seconds":1}`), Key: "k", Caller: "alice"})
			return err
		}(),
			driver.ErrKeyConflict, "memory: idempotency key already used with other input: execution " + r.ID + " was started under this key with other input; repeat it, or use a new key"},
		{func() error {
			_, err := e.Start(ctx, memengine.Job("a/b", 0), driver.StartRequest{})
			return err
		}(),
			driver.ErrInvalid, `memory: invalid request: target "a/b" is not a memory job: map it as job: {program: NAME}, the name in lower-case letters, digits and -`},
		{func() error { _, err := e.Outcome(ctx, echo, r); return err }(),
			driver.ErrNotEnded, "memory: execution has not ended: " + r.ID + " is RUNNING"},
		{func() error { e.Cancel(ctx, echo, r, "x"); return e.Cancel(ctx, echo, r, "again") }(),
			driver.ErrEnded, "memory: execution has already ended: " + r.ID + " ended CANCELLED"},
		{func() error { _, err := memengine.Driver{}.ParseRef("echo/1"); return err }(),
			nil, "memory: not a memory execution id: want memory:PROGRAM/ID"},
	} {
		if (c.is != nil && !errors.Is(c.err, c.is)) || c.err == nil || c.err.Error() != c.want {
			t.Errorf("error %v\nwant %s", c.err, c.want)
		}
	}
	e.Close()
	if _, err := e.Describe(ctx, echo, r); !errors.Is(err, driver.ErrUnavailable) || err.Error() != "memory: engine unavailable: the engine is closed, or was opened unavailable" {
		t.Errorf("Describe after Close: %v", err)
	}
}
