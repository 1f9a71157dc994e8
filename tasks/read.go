package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// Open checks an untrusted task id completely before any engine sees its reference: the id must
// open, name the mapped tool the task was started through (sealed ids carry it; a native id is
// read through each tool's driver and owned by the one tool whose caller it records), belong to
// that tool's target and to the caller, and the caller must still be permitted to use that tool.
// An id of another caller, or of a tool hidden from this one, is not found, like any other. It
// makes no engine call.
func (s *Service) Open(ctx context.Context, id string) (*Task, error) {
	if id == "" {
		return nil, Invalidf("Failed to retrieve task: taskId is required")
	}
	claims, err := s.tokens.Open(id, s.now())
	switch {
	case errors.Is(err, token.ErrExpired):
		return nil, &Error{Kind: Expired}
	case err != nil:
		return nil, &Error{Kind: NotFound}
	}
	var tool *mapping.Tool
	if claims.Tool != "" {
		tool = s.sealedTool(ctx, claims)
	} else {
		tool, claims.Ref, claims.Caller = s.nativeTool(ctx, id)
	}
	if tool == nil {
		return nil, &Error{Kind: NotFound}
	}
	if err := permitted(ctx, tool); err != nil {
		return nil, err
	}
	Note(ctx, tool, claims.Ref)
	return &Task{ID: id, Tool: tool, claims: claims}, nil
}

// sealedTool is the tool a sealed id's claims name when the id is the caller's and its Ref is
// an execution of that tool's target recorded under the caller: nil otherwise.
func (s *Service) sealedTool(ctx context.Context, c token.Claims) *mapping.Tool {
	t, ok := s.set.Tool(c.Tool)
	if !ok || !s.callerOf(ctx, t, c.Caller) {
		return nil
	}
	if !s.engines[t.Engine].Owns(t.Target, c.Ref, c.Caller) {
		return nil
	}
	return t
}

// callerOf reports whether caller is the request's caller for tool in some generation, or the
// unkeyed caller that ids sealed before callers were keyed carry.
func (s *Service) callerOf(ctx context.Context, tool *mapping.Tool, caller string) bool {
	principal := Principal(ctx)
	for gen := range s.callers.generations() {
		if s.callers.is(caller, principal, tool.Name, gen) {
			return true
		}
	}
	return caller == unkeyedCaller(principal)
}

// nativeTool is the tool whose driver reads id as a Ref of its target that the request's caller
// started through that tool, with the Ref and the caller it was recorded under; nil when none. A
// native id carries nothing a client cannot make up but the MAC of its suffix (driver.Minted),
// so it is checked before the id reaches any engine: an execution recorded before suffixes were
// minted, or before callers were keyed, reads only through a sealed id.
func (s *Service) nativeTool(ctx context.Context, id string) (*mapping.Tool, adapters.Ref, string) {
	principal := Principal(ctx)
	for _, t := range s.set.Tools {
		ref, err := t.ParseRef(id)
		if err != nil {
			continue
		}
		for gen := range s.callers.generations() {
			if who := s.callers.of(principal, t.Name, gen); s.engines[t.Engine].Owns(t.Target, ref, who) && driver.Minted(ref.ID, who) {
				return t, ref, who
			}
		}
	}
	return nil, adapters.Ref{}, ""
}

// Read opens a task id and reads the task: its status and, once it has ended, its result. A
// task whose status cannot be read yet, because its engine is read as fast as taskgate may and
// this process holds no reading of it (a replica that never read it), is answered as its id says
// it started, as of then (Task.asStarted), rather than with an error every client must retry.
// A listener is not told this: its follow reads again, and waits for the read (watch.go).
func (s *Service) Read(ctx context.Context, id string) (*Task, error) {
	t, err := s.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.refresh(ctx, t); err != nil && !t.asStarted(err) {
		return nil, err
	}
	return t, nil
}

// asStarted answers t as its sealed id says it started, when err says that its status could not
// be read before the read budget or the engine lets it be (retry-after): submitted, as of its
// creation, which is all that is known of it for sure, and to be polled again when it may be read.
// It reports whether it did; an id that does not say when it was created (native) keeps the error.
func (t *Task) asStarted(err error) bool {
	var te *Error
	if t.Status.State != 0 || t.claims.Created.IsZero() || !errors.As(err, &te) || te.Kind != Unavailable || te.RetryAfter <= 0 {
		return false
	}
	created := t.claims.Created
	t.Status = adapters.Status{
		State: adapters.Submitted, Native: "STARTED", Started: created, Updated: created, ReadAt: created, NextReadAt: time.Now().Add(te.RetryAfter),
		Message: fmt.Sprintf("Started; not read since, as the engine is being read as fast as taskgate may: poll again in %s.", te.RetryAfter.Round(100*time.Millisecond)),
	}
	return true
}

// refresh reads an opened task again: its status and, once it has ended, its result.
func (s *Service) refresh(ctx context.Context, t *Task) error {
	if err := s.Describe(ctx, t); err != nil {
		return err
	}
	return s.fetchResult(ctx, t)
}

// Describe reads the engine state of t's execution into t.Status. A "not found" within the
// visibility lag its engine's driver declares (adapters.Engine.VisibilityLag) of the task's
// creation means not yet visible, not gone.
func (s *Service) Describe(ctx context.Context, t *Task) error {
	ctx, e := s.engine(ctx, t.Tool)
	st, err := e.Describe(ctx, t.Tool.Target, t.claims.Ref, t.pace())
	if errors.Is(err, adapters.ErrNotFound) && !t.claims.Created.IsZero() && s.now().Sub(t.claims.Created) < e.VisibilityLag() {
		t.Status = adapters.Status{State: adapters.Submitted, Native: "NOT_YET_VISIBLE", Started: t.claims.Created, Updated: t.claims.Created}
		return nil
	}
	if err != nil {
		return engineError("Failed to retrieve the task", err)
	}
	t.Status = st
	return nil
}

// fetchResult reads the outcome of an execution that ended with an output or an error.
func (s *Service) fetchResult(ctx context.Context, t *Task) error {
	if t.Status.State != adapters.Succeeded && t.Status.State != adapters.Failed {
		return nil
	}
	ctx, e := s.engine(ctx, t.Tool)
	o, err := e.Outcome(ctx, t.Tool.Target, t.claims.Ref)
	if err != nil {
		return engineError("Failed to retrieve the task result", err)
	}
	t.Result, t.Failure = settle(t.Tool, o)
	return nil
}

// KeepAlive says how long t's result stays readable after it ends: the engine's retention,
// shortened by the client's wish and by the id's own ttl; zero when none of them is known.
func (s *Service) KeepAlive(t *Task) time.Duration {
	var k time.Duration
	if r, ok := s.retention.Load(t.Tool.Name); ok {
		k = r.(time.Duration)
	}
	for _, bound := range []time.Duration{t.claims.KeepAlive, t.claims.TTL} {
		if bound > 0 && (k == 0 || bound < k) {
			k = bound
		}
	}
	return k
}

// MaxKey bounds the idempotency keys a client chooses.
const MaxKey = 256

// ReadKeyed reads the task an id names or, when it is no task id, the one a client started with
// it as its idempotency key. A task whose start asked to keep its result for a while (a
// keep-alive) has expired once that has passed since it ended.
func (s *Service) ReadKeyed(ctx context.Context, idOrKey string) (*Task, error) {
	t, err := s.Read(ctx, idOrKey)
	if err == nil {
		if t.Ended() && t.claims.KeepAlive > 0 && s.now().After(t.Status.Updated.Add(t.claims.KeepAlive)) {
			return nil, &Error{Kind: Expired}
		}
		return t, nil
	}
	if _, openErr := s.tokens.Open(idOrKey, s.now()); openErr == nil || errors.Is(openErr, token.ErrExpired) || len(idOrKey) > MaxKey {
		return nil, err
	}
	return s.readKey(ctx, idOrKey)
}

// readKey finds the execution a client key started without any lookup table: the key derives one
// engine id per tool that may run as a task, and all of them are asked at once; or only the tool
// that this replica last found it under (or started it with), while that one still finds it.
func (s *Service) readKey(ctx context.Context, key string) (*Task, error) {
	principal := Principal(ctx)
	candidates := s.taskTools(ctx)
	switch known, ok := s.clientKeys.get(principal, key); {
	case ok && known.tool == "" && s.now().Before(known.until):
		return nil, &Error{Kind: NotFound}
	case ok && known.tool != "":
		if i := slices.IndexFunc(candidates, func(t *mapping.Tool) bool { return t.Name == known.tool }); i >= 0 {
			if t, err := s.readKeyOf(ctx, key, candidates[i:i+1]); err == nil || KindOf(err) != NotFound {
				return t, err
			}
		}
	}
	t, err := s.readKeyOf(ctx, key, candidates)
	switch {
	case err == nil:
		s.clientKeys.found(principal, key, t.Tool.Name)
	case KindOf(err) == NotFound:
		s.clientKeys.unknown(principal, key, s.now().Add(unknownFor))
	}
	return t, err
}

// readKeyOf asks each of candidates for the execution key started, and reads the task of the first
// that has one.
func (s *Service) readKeyOf(ctx context.Context, key string, candidates []*mapping.Tool) (*Task, error) {
	type found struct {
		i   int
		ref adapters.Ref
		st  adapters.Status
		err error
	}
	results := make(chan found, len(candidates))
	for i, tool := range candidates {
		go func() {
			ctx, e := s.engine(ctx, tool)
			ref := e.KeyRef(tool.Target, key, s.callers.current(ctx, tool))
			st, err := e.Describe(ctx, tool.Target, ref, pace.Pace{Curve: tool})
			results <- found{i, ref, st, err}
		}()
	}
	best := -1
	var bestRef adapters.Ref
	var bestStatus adapters.Status
	var engineErr error
	for range candidates {
		f := <-results
		switch {
		case f.err == nil && (best < 0 || f.i < best):
			best, bestRef, bestStatus = f.i, f.ref, f.st
		case f.err != nil && !errors.Is(f.err, adapters.ErrNotFound):
			engineErr = f.err
		}
	}
	if best < 0 {
		if engineErr != nil {
			return nil, engineError("Failed to retrieve operation", engineErr)
		}
		return nil, &Error{Kind: NotFound}
	}
	tool := candidates[best]
	t := &Task{ID: key, Tool: tool, claims: token.Claims{Tool: tool.Name, Ref: bestRef, TTL: tool.TTL, Caller: s.callers.current(ctx, tool)}, Status: bestStatus}
	if err := s.fetchResult(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}
