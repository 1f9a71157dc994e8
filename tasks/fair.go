package tasks

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/budget"
	"github.com/taskgate/taskgate/adapters/driver"
)

// A block's read budget is everyone's: a principal that reads as fast as its rate limit lets it
// (polls of its many tasks, ids or keys that name nothing) would take every token of it, and the
// others' reads would wait behind its turns. So while the budget is contended (it refused a read
// lately), each principal's reads within fairWindow are bounded by its fair share of what the
// budget gives in that time, the budget's rate split evenly among the principals that read in it;
// past it, its reads are refused before they take a turn of the budget, as throttled, and its
// tasks are answered from their readings. A budget that is not contended refuses no one: an idle
// principal's share is the others' to take.
type fairShare struct {
	budget *budget.Budget
	now    func() time.Time

	mu sync.Mutex
	// began is when the present window began; spent are the engine calls each principal's reads
	// made in it, and before those of the window before it.
	began         time.Time
	spent, before map[string]float64
	// booked are the executions whose reads the budget gave a turn to, since when.
	booked map[adapters.ExecKey]time.Time
}

// fairWindow is how long a principal's reads count against its share.
const fairWindow = 2 * time.Second

func newFairShare(b *budget.Budget, now func() time.Time) *fairShare {
	return &fairShare{budget: b, now: now, began: now(), spent: map[string]float64{}, before: map[string]float64{},
		booked: map[adapters.ExecKey]time.Time{}}
}

// Hook bounds the point reads (Describe) and listings (List) that a request makes to its
// principal's fair share. Reads made for no request (sweeps, the confirmations of ends) and
// outcomes (read once per task, and what ends its reads) pass. A read that the budget refuses is
// given a turn for when it comes back, and takes its tokens ahead of the reads refused after it:
// a principal over its share holds none, so that its turns go to the others.
func (f *fairShare) Hook(ctx context.Context, c *adapters.Call) (context.Context, func(error) error, error) {
	r := requestOf(ctx)
	if r == nil || c.Op != adapters.OpDescribe && c.Op != adapters.OpList {
		return ctx, nil, nil
	}
	k := driver.KeyOf(c.Target, c.Ref)
	if wait, ok := f.take(Principal(ctx), k, float64(max(c.Calls, 1))); !ok {
		return ctx, nil, &adapters.Throttle{RetryAfter: wait}
	}
	if c.Op != adapters.OpDescribe {
		return ctx, nil, nil
	}
	return ctx, func(err error) error {
		if errors.Is(err, adapters.ErrThrottled) {
			f.book(k)
		}
		return err
	}, nil
}

// take counts n engine calls of principal's for a read of the execution k (once: not again for
// the turn the budget gave it), unless the budget is contended and principal has spent its share
// of the last fairWindow: then it says how long until it may read again, and gives back the turn
// k had, for the others' reads.
func (f *fairShare) take(principal string, k adapters.ExecKey, n float64) (wait time.Duration, ok bool) {
	contended, rate := f.budget.Contended(), f.budget.Rate()
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if elapsed := now.Sub(f.began); elapsed >= fairWindow {
		f.before, f.spent = f.spent, map[string]float64{}
		if elapsed >= 2*fairWindow {
			f.before = map[string]float64{}
		}
		for k, at := range f.booked {
			if now.Sub(at) > 2*fairWindow {
				delete(f.booked, k)
			}
		}
		f.began = now
	}
	_, booked := f.booked[k]
	delete(f.booked, k)
	if contended {
		if share, spent, alone := f.share(principal, rate, now); !alone && spent+n > share {
			if booked {
				f.budget.Release(k, int(n))
			}
			return time.Duration(float64(time.Second) * (spent + n - share) / max(rate, 0.1)), false
		}
	}
	if !booked {
		f.spent[principal] += n
	}
	return 0, true
}

// share is principal's share of the budget's reads in the last fairWindow at rate, and what it has
// spent of them: the window before counts for the part of it that the last fairWindow still covers.
// alone says that no other principal read in it: the whole budget is principal's.
func (f *fairShare) share(principal string, rate float64, now time.Time) (share, spent float64, alone bool) {
	readers := len(f.spent)
	for p := range f.before {
		if _, ok := f.spent[p]; !ok {
			readers++
		}
	}
	if _, ok := f.spent[principal]; !ok && f.before[principal] == 0 {
		readers++
	}
	kept := 1 - float64(now.Sub(f.began))/float64(fairWindow)
	return rate * fairWindow.Seconds() / float64(readers), f.spent[principal] + f.before[principal]*kept, readers == 1
}

// book records that the budget gave the read of k a turn.
func (f *fairShare) book(k adapters.ExecKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.booked[k] = f.now()
}
