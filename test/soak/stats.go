package main

import (
	"errors"
	"slices"
	"sync"
	"time"
)

// poll is one timed poll request, answered or not.
type poll struct {
	engine string
	at     time.Time
	d      time.Duration
	ok     bool
}

// stats collects what the clients see.
type stats struct {
	mu      sync.Mutex
	records []*record
	polls   []poll
	// retryables counts retried requests by what they were and why ("poll: transport").
	retryables map[string]int
	// nonRetryables counts the non-retryable errors of work that was not cancelled, by message
	// (error ids and addresses blanked), and cancelledWork those of calls that cancel.
	nonRetryables map[string]int
	cancelledWork map[string]int
	// listens counts the subscriptions/listen requests of clients on 2026-07-28, relistens those
	// opened again after a stream ended before its task; endsNotified and endsPolled the ends
	// those clients saw first in a notification and in a poll's answer.
	listens, relistens, endsNotified, endsPolled int
}

// listened counts a listen request, again after a stream ended when again.
func (s *stats) listened(again bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listens++
	if again {
		s.relistens++
	}
}

// ended counts an end a listening client saw, by how it saw it first.
func (s *stats) ended(notified bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if notified {
		s.endsNotified++
	} else {
		s.endsPolled++
	}
}

func newStats() *stats {
	return &stats{retryables: map[string]int{}, nonRetryables: map[string]int{}, cancelledWork: map[string]int{}}
}

func (s *stats) add(r *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, r)
}

func (s *stats) poll(engine string, at time.Time, d time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls = append(s.polls, poll{engine, at, d, ok})
}

func (s *stats) retryable(what, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryables[what+": "+kind]++
}

func (s *stats) nonRetryable(rec *record, what string, err error) {
	msg := what + ": " + err.Error()
	var ce *callError
	if errors.As(err, &ce) {
		msg = what + ": " + errorID.ReplaceAllString(ce.msg, "…")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec != nil && rec.kind == callCancel {
		s.cancelledWork[msg]++
		return
	}
	s.nonRetryables[msg]++
}

// settle records how a call ended: correct when wrong is empty.
func (s *stats) settle(rec *record, wrong string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.finished = time.Now()
	rec.outcome, rec.detail = outcomeCorrect, ""
	if wrong != "" {
		rec.outcome, rec.detail = outcomeWrong, wrong
	}
}

// window is a span of time during which a fault stood, or its effects lasted.
type window struct {
	from, to time.Time
}

// inAny reports whether a request from at, lasting d, overlapped any window.
func inAny(ws []window, at time.Time, d time.Duration) bool {
	end := at.Add(d)
	return slices.ContainsFunc(ws, func(w window) bool { return at.Before(w.to) && end.After(w.from) })
}

// percentile is the p-th percentile (0 < p <= 100) of ds in milliseconds, nearest rank; 0 when
// there is none.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	rank := int(p/100*float64(len(sorted)) + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return float64(sorted[rank-1].Microseconds()) / 1000
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
