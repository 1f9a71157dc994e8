package tasks

import (
	"context"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

// MaxWatched bounds the task ids one Watch follows; a listener asks for more in several.
const MaxWatched = 1000

// Watch follows tasks for a listener (subscriptions/listen). Each id is opened as Read opens it
// (Open: the caller's, not expired, through a tool the caller may still use); the ids that open
// are acknowledged, in the order given and each execution once (the first id that names it), and
// the others are left out alike, so that nothing tells another caller's id from a forged or an
// expired one. For each acknowledged task, updates gets the task as Read answers it now, then
// again on every change of its status (its state, its message, its open questions), the last time
// when it ends, with its result; then the task is no longer followed, nor once its id's ttl has
// passed. A task whose execution is gone (not found) is no longer followed either; an engine that
// does not answer is asked again. updates is closed once every task has ended or ctx has, and then
// no goroutine of the watch is left.
func (s *Service) Watch(ctx context.Context, ids []string) (acknowledged []string, updates <-chan *Task) {
	var followed []*Task
	opened := map[string]bool{}
	for _, id := range ids {
		t, err := s.Open(ctx, id)
		if err != nil || opened[t.execution()] {
			continue
		}
		opened[t.execution()] = true
		acknowledged = append(acknowledged, id)
		followed = append(followed, t)
	}
	out := make(chan *Task)
	var wg sync.WaitGroup
	for _, t := range followed {
		wg.Go(func() { s.follow(ctx, t, out) })
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return acknowledged, out
}

// follow reads t until it ends or ctx does, sending it to out at first and on each change.
func (s *Service) follow(ctx context.Context, t *Task, out chan<- *Task) {
	var last status
	sent := false
	for {
		err := s.refresh(ctx, t)
		if KindOf(err) == NotFound {
			s.log.Debug("a followed task's execution is gone; no longer following it", "tool", t.Tool.Name)
			return
		}
		if t.claims.Expired(s.now()) {
			return
		}
		if err == nil && (!sent || statusOf(t) != last) {
			snapshot := *t
			select {
			case out <- &snapshot:
			case <-ctx.Done():
				return
			}
			last, sent = statusOf(t), true
			if t.Ended() {
				return
			}
		}
		if !s.untilChanged(ctx, t) {
			return
		}
	}
}

// status is what a listener is told again when it changes: the state, the message (a running
// task's progress), the keys of the open questions.
type status struct {
	state     adapters.State
	message   string
	questions string
}

func statusOf(t *Task) status {
	st := status{state: t.Status.State, message: t.Message()}
	for _, q := range t.Status.Inputs {
		st.questions += q.Key + "\x00"
	}
	return st
}

// The bounds of untilChanged: a followed task is read again at least every followMax, and at most
// every followMin.
const followMin, followMax = 200 * time.Millisecond, 2 * time.Second

// untilChanged waits until t may have changed, and reports false when ctx ended first: when its
// engine's readings record a change of it (a sweep showed it ended, or a read a new state), or
// when the engine will next be read for it (Status.NextReadAt, as adapters/coalesce sets it),
// within [followMin, followMax]; reads before then are answered from the same reading.
func (s *Service) untilChanged(ctx context.Context, t *Task) bool {
	changed := s.engines[t.Tool.Engine].Changes(t.Tool.Target, t.claims.Ref)
	return driver.SleepUntil(ctx, min(max(time.Until(t.Status.NextReadAt), followMin), followMax), changed) == nil
}
