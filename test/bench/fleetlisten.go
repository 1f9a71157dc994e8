package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// The fleet's listeners: besides polling, each client of the fleet figure keeps one
// subscriptions/listen stream open for its tasks (2026-07-28 over HTTP, the tasks extension
// declared), and each task notes when a notifications/tasks first showed it ended.

// notifyGrace is how long before the end of a run an end must come to count as not notified
// when no notification showed it: the goal is 2 s.
const notifyGrace = 5 * time.Second

// listening is what a run's listeners saw.
type listening struct {
	mu sync.Mutex
	// refused says why the server does not listen (a build that does not push), if it does not.
	refused      error
	acknowledged int
	// delays are, for the ends of the run, how long after the end its listener was told (s), all
	// and by engine; missed counts those not told by the end of the run (with the time until then
	// in delays).
	delays   []float64
	delaysOf map[string][]float64
	missed   int
}

// listen keeps one listen stream open for tasks through c until ctx ends: again when the server
// ends it (a response) or it fails (a client error, counted by countError). It stops when the
// server does not listen: an error answer not marked retryable, or an acknowledgement that names
// none of the tasks (all of them the client's own, which a server that listens names).
func (l *listening) listen(ctx context.Context, c *mcpclient.Client, tasks []*fleetTask, countError func(error)) {
	byID := make(map[string]*fleetTask, len(tasks))
	ids := make([]string, len(tasks))
	for i, task := range tasks {
		byID[task.id], ids[i] = task, task.id
	}
	filter := map[string]any{"taskIds": ids}
	for ctx.Err() == nil {
		streamCtx, cancel := context.WithCancel(ctx)
		var deaf error
		_, rerr, err := c.Listen(streamCtx, filter, func(method string, params json.RawMessage) {
			if named, ack := l.heard(method, params, byID); ack && named == 0 {
				deaf = fmt.Errorf("subscriptions/listen acknowledged none of the %d task ids asked for", len(ids))
				cancel()
			}
		})
		cancel()
		if deaf != nil {
			l.refuse(deaf)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if rerr != nil {
			if _, ok := retryable(rerr); !ok {
				l.refuse(fmt.Errorf("subscriptions/listen answered %w", rerr))
				return
			}
			err = rerr
		}
		if err != nil {
			countError(err)
		}
		sleep(ctx, time.Second)
	}
}

func (l *listening) refuse(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refused == nil {
		l.refused = err
	}
}

// heard takes one notification of a listen stream: a task's state, or an acknowledgement (ack),
// with how many of the tasks it names.
func (l *listening) heard(method string, params json.RawMessage, byID map[string]*fleetTask) (named int, ack bool) {
	now := time.Now()
	switch method {
	case "notifications/subscriptions/acknowledged":
		var a struct {
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		}
		json.Unmarshal(params, &a)
		for _, id := range a.Notifications.TaskIDs {
			if byID[id] != nil {
				named++
			}
		}
		l.mu.Lock()
		l.acknowledged += named
		l.mu.Unlock()
		return named, true
	case "notifications/tasks":
		var a answer
		if json.Unmarshal(params, &a) != nil || a.Status == "working" || a.Status == "input_required" {
			return 0, false
		}
		if task := byID[a.TaskID]; task != nil {
			task.notified.CompareAndSwap(0, now.UnixNano())
		}
	}
	return 0, false
}

// record notes how long after its end (closed) a task's listener was told, when the run ended at
// end. It does nothing when the server does not listen.
func (l *listening) record(task *fleetTask, closed, end time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delay := math.NaN()
	switch {
	case l.refused != nil:
	case task.notified.Load() != 0:
		delay = time.Unix(0, task.notified.Load()).Sub(closed).Seconds()
	case end.Sub(closed) >= notifyGrace:
		l.missed++
		delay = end.Sub(closed).Seconds()
	}
	if !math.IsNaN(delay) {
		if l.delaysOf == nil {
			l.delaysOf = map[string][]float64{}
		}
		l.delays = append(l.delays, delay)
		l.delaysOf[task.engine] = append(l.delaysOf[task.engine], delay)
	}
}

// summary says what the listeners saw, for the progress line.
func (l *listening) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refused != nil {
		return fmt.Sprintf("no listening: %v", l.refused)
	}
	return fmt.Sprintf("%d task ids acknowledged to listeners, %d ends notified or due, %d not notified", l.acknowledged, len(l.delays), l.missed)
}
