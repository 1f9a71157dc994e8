package coalesce

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/pace"
)

// Swept is what sweeps read through: the adapters.Engine these Readings serve. Its Sweep reads one
// page of the listing of many executions of a target in one engine call, its SweepEnded a page of
// those that ended since a time (adapters.ErrUnsupported where the engine cannot tell), and its
// Outcome confirms the end of an execution that a listing no longer shows running, reading what
// it will be asked for next (through its hooks, which charge all three to the read budget, and
// through these Readings, which keep the outcome and tell who waits).
type Swept interface {
	Sweep(ctx context.Context, t adapters.Target, refs []adapters.Ref, page string) ([]adapters.Listed, string, error)
	SweepEnded(ctx context.Context, t adapters.Target, refs []adapters.Ref, since time.Time, page string) ([]adapters.Listed, string, error)
	Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error)
}

const (
	// defaultSweepEvery is how often the followed executions of a target are swept.
	defaultSweepEvery = time.Second
	// defaultInterest is how long a read keeps a running execution among those swept.
	defaultInterest = 2 * time.Minute
	// sweepPages bounds the pages of one target's sweep in one round.
	sweepPages = 100
	// endsOverlap is how far back before its last round a sweep of ends asks again: an end that
	// a listing shows up to this late is still found.
	endsOverlap = 10 * time.Second
	// confirmsAtOnce bounds the outcome reads of confirmations in flight. Under a read budget a
	// sweep's listing and the outcomes go ahead of every turn in the order they come, so the next
	// round's listing, which keeps every followed reading fresh, waits for the tokens of the
	// outcomes in flight: few, so that it waits little, and enough to spend what the budget gives.
	confirmsAtOnce = 2
)

// sweeper follows the running executions that reads asked about recently, per target, and keeps
// their readings fresh a listing page at a time: a round every Options.SweepEvery, or sooner when
// a read finds nothing to answer with. What a listing shows running refreshes the reading's time;
// an execution listed as ended, or no longer listed, is confirmed by reading its outcome (which
// tells Ended) before anyone is told. Confirmations run beside the rounds, never in them: an
// outcome read waits for its tokens of the budget, or through the engine's throttling, and the
// followed executions' readings must not age while it does. Where the engine lists ends, a round
// lists the running executions only when one of the followed was not known running since the
// ends were listed, and else the ends since the last round: its cost follows the ends, not the
// running.
type sweeper struct {
	engine         Swept
	noEnds         atomic.Bool // the engine cannot list ends
	every, lasting time.Duration
	kick           chan struct{}
	stop           context.CancelFunc
	done           chan struct{}
	nextRound      atomic.Int64 // unix nanoseconds of the next round

	mu       sync.Mutex
	followed map[string]*followed // by target name
	// wanted are the targets a read waits on (it found nothing to answer with): a round lists
	// them before the others, once each.
	wanted map[string]bool
	// confirming are the executions whose outcomes are being read, by key: rounds leave them out.
	confirming map[string]bool
	slots      chan struct{} // one per confirmation reading its outcome
	pending    sync.WaitGroup

	rounds, pages, confirms, failures atomic.Uint64
}

// followed is a target and the executions of it being swept. endsFrom is zero, or the time from
// which every end of the target's executions was listed, up to the start of the last round.
type followed struct {
	target         adapters.Target
	refs           map[adapters.Ref]interest
	endsFrom, last time.Time
}

// interest is since when an execution is swept, until when, and the pace of the read that asked
// for it last, and what its context carries (Options.Carry); seen, whether a read or a listing
// ever found it running. One never seen running (a read the budget refused before it was made)
// may name nothing at all: a listing that does not show it running ends its sweeping, and its
// reader's own read tells whether it ended; no outcome is read for it.
type interest struct {
	since, until time.Time
	pace         pace.Pace
	paced        bool
	seen         bool
	carried      context.Context
}

// SweepCounts are what an Engine's sweeps have done since New.
type SweepCounts struct {
	// Rounds of all targets, Pages read, Confirms made (outcomes read of executions a sweep no
	// longer showed running), and Failures (sweeps that the engine or the budget refused).
	Rounds, Pages, Confirms, Failures uint64
	// Followed is how many running executions the sweeps follow now.
	Followed int
}

// Sweeps starts sweeping through engine (the Engine these Readings serve), until Close: the
// running executions that reads asked about in the last Options.Interest are swept every
// Options.SweepEvery, so that their readings stay fresh at the cost of a listing page per round
// rather than a read per execution. Call it before the first read; it does nothing when the
// cache keeps nothing (Size 0), or when called again.
func (e *Readings) Sweeps(engine Swept) {
	if e.opts.Size <= 0 || e.sweeps != nil {
		return
	}
	s := &sweeper{engine: engine, every: cmp.Or(e.opts.SweepEvery, defaultSweepEvery), lasting: cmp.Or(e.opts.Interest, defaultInterest),
		kick: make(chan struct{}, 1), done: make(chan struct{}), followed: map[string]*followed{}, wanted: map[string]bool{},
		confirming: map[string]bool{}, slots: make(chan struct{}, confirmsAtOnce)}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	e.sweeps = s
	go e.sweepRounds(ctx)
}

// SweepCounts reads the sweeps' counters (all zero without Sweeps).
func (e *Readings) SweepCounts() SweepCounts {
	s := e.sweeps
	if s == nil {
		return SweepCounts{}
	}
	s.mu.Lock()
	n := 0
	for _, f := range s.followed {
		n += len(f.refs)
	}
	s.mu.Unlock()
	return SweepCounts{Rounds: s.rounds.Load(), Pages: s.pages.Load(), Confirms: s.confirms.Load(), Failures: s.failures.Load(), Followed: n}
}

// follow keeps r among the executions swept for a while after a read that found it running (seen),
// or that the budget refused before it was made.
func (e *Readings) follow(ctx context.Context, t adapters.Target, r adapters.Ref, p pace.Pace, paced, seen bool) {
	s := e.sweeps
	if s == nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.followed[t.Name]
	if !ok {
		f = &followed{target: t, refs: map[adapters.Ref]interest{}}
		s.followed[t.Name] = f
	}
	in, ok := f.refs[r]
	if !ok { // what a read carries is kept once: an execution is read through one tool
		in.since = now
		if e.opts.Carry != nil {
			in.carried = e.opts.Carry(ctx)
		}
	}
	in.until, in.pace, in.paced, in.seen = now.Add(s.lasting), p, paced, in.seen || seen
	f.refs[r] = in
}

// unfollow stops sweeping r.
func (e *Readings) unfollow(t adapters.Target, r adapters.Ref) {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.followed[t.Name]; ok {
		delete(f.refs, r)
	}
}

// hurry asks for a round soon, and for t's listing before the others' (in the round under way if
// it has not listed t yet): a read of t found nothing to answer with and the budget is spent.
// Under a read budget a round's listings wait for their tokens one after the other, and the read
// waits only for the listing in flight and t's.
func (e *Readings) hurry(t adapters.Target) {
	s := e.sweeps
	if s == nil {
		return
	}
	s.mu.Lock()
	s.wanted[t.Name] = true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// nextSweep is when the next round will have refreshed a swept reading: zero without sweeps.
func (e *Readings) nextSweep() time.Time {
	if s := e.sweeps; s != nil {
		return time.Unix(0, s.nextRound.Load())
	}
	return time.Time{}
}

// sweepRounds starts a round every s.every (a quarter of it after the end of a round that lasted
// longer), and sooner when hurried (at most four times as often), until the Engine closes.
func (e *Readings) sweepRounds(ctx context.Context) {
	s := e.sweeps
	defer close(s.done)
	defer s.pending.Wait()
	next := time.Now().Add(s.every)
	for {
		s.nextRound.Store(next.UnixNano())
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-s.kick:
			timer.Stop()
			if adapters.Sleep(ctx, s.every/4) != nil {
				return
			}
		}
		began := time.Now()
		e.sweepRound(ctx)
		next = latest(began.Add(s.every), time.Now().Add(s.every/4))
	}
}

// sweepRound sweeps every target once, and each target wanted during the round (hurry) next,
// once more when the round had already swept it.
func (e *Readings) sweepRound(ctx context.Context) {
	s := e.sweeps
	s.rounds.Add(1)
	round := e.toSweep(time.Now())
	taken := map[string]bool{}
	for {
		f, ok := e.takeWanted(time.Now(), taken)
		if ok {
			round = slices.DeleteFunc(round, func(g followed) bool { return g.target.Name == f.target.Name })
		} else if len(round) > 0 {
			f, round = round[0], round[1:]
		} else {
			return
		}
		endsFrom, last, err := e.sweepTarget(ctx, f)
		if err != nil {
			s.failures.Add(1)
		}
		s.mu.Lock()
		if g, ok := s.followed[f.target.Name]; ok {
			g.endsFrom, g.last = endsFrom, last
		}
		s.mu.Unlock()
	}
}

// toSweep is a copy of what is followed now (see sweepCopy).
func (e *Readings) toSweep(now time.Time) []followed {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []followed
	for _, f := range s.followed {
		if c, ok := e.sweepCopy(f, now); ok {
			out = append(out, c)
		}
	}
	return out
}

// takeWanted is a copy of a target wanted since the round took it last (taken: the targets the
// round took so), if there is one to sweep; the round takes it.
func (e *Readings) takeWanted(now time.Time, taken map[string]bool) (followed, bool) {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.wanted {
		delete(s.wanted, name)
		if f, ok := s.followed[name]; ok && !taken[name] {
			if c, ok := e.sweepCopy(f, now); ok {
				taken[name] = true
				return c, true
			}
		}
	}
	return followed{}, false
}

// sweepCopy is a copy of f without the executions that nobody asked about for a while or whose
// end is known, which it forgets (and f when none is left), and without those being confirmed;
// ok is false when none is left to sweep. Called with s.mu held.
func (e *Readings) sweepCopy(f *followed, now time.Time) (_ followed, ok bool) {
	s := e.sweeps
	refs := map[adapters.Ref]interest{}
	for r, in := range f.refs {
		if v, ok := e.cache.Get(key(f.target, r)); now.After(in.until) || ok && endKnown(v) {
			delete(f.refs, r)
			continue
		}
		if !s.confirming[key(f.target, r)] {
			refs[r] = in
		}
	}
	if len(f.refs) == 0 {
		delete(s.followed, f.target.Name)
	}
	if len(refs) == 0 {
		return followed{}, false
	}
	return followed{target: f.target, refs: refs, endsFrom: f.endsFrom, last: f.last}, true
}

// sweepTarget sweeps f's executions once: by their ends since the last round where it can, else
// by the listing of the running ones, a page at a time. It says from when the target's ends are
// known now, and when the last round that listed them began.
//
// Under a read budget the listing goes ahead of every client's turn (one page answers for all the
// followed tasks), and so does each outcome, as every outcome read does: it is the one read that
// an end costs, which its task's clients ask for next.
func (e *Readings) sweepTarget(ctx context.Context, f followed) (endsFrom, last time.Time, err error) {
	refs := make([]adapters.Ref, 0, len(f.refs))
	for r := range f.refs {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b adapters.Ref) int { return cmp.Compare(a.ID, b.ID) })
	at := time.Now()
	if !e.sweeps.noEnds.Load() && !f.endsFrom.IsZero() && e.knownRunningSince(f, f.endsFrom) {
		err := e.sweepEnds(ctx, f, refs, at)
		if err == nil {
			return f.endsFrom, at, nil
		}
		if !errors.Is(err, adapters.ErrUnsupported) {
			return f.endsFrom, f.last, err
		}
		e.sweeps.noEnds.Store(true)
	}
	if err := e.sweepRunning(ctx, f, refs, at); err != nil {
		return f.endsFrom, f.last, err
	}
	return at, at, nil
}

// knownRunningSince reports whether each of f's executions had a running reading, or was shown
// running by a listing, at since or after.
func (e *Readings) knownRunningSince(f followed, since time.Time) bool {
	for r := range f.refs {
		v, ok := e.cache.Get(key(f.target, r))
		if !ok || endKnown(v) || latest(v.status.ReadAt, v.swept).Before(since) {
			return false
		}
	}
	return true
}

// sweepEnds reads the ends of f's target since a little before its last round, page by page, and
// confirms those of refs it shows by reading their outcomes: the others were running as of at.
func (e *Readings) sweepEnds(ctx context.Context, f followed, refs []adapters.Ref, at time.Time) error {
	ended := map[adapters.Ref]bool{}
	err := e.pages(func(page string) (string, error) {
		listed, next, err := e.sweeps.engine.SweepEnded(adapters.WithPriority(ctx, adapters.Ahead), f.target, refs, f.last.Add(-endsOverlap), page)
		for _, l := range listed {
			ended[l.Ref] = l.Status.State.Terminal()
		}
		return next, err
	})
	if err != nil {
		return err
	}
	for _, r := range refs {
		if ended[r] {
			e.confirm(ctx, f.target, r, f.refs[r])
		} else {
			e.stillRunning(f.target, r, at)
		}
	}
	return nil
}

// sweepRunning reads the listing of f's running executions page by page, refreshes the readings
// of those it shows running, and confirms the others by reading their outcomes. An execution
// followed for less than two rounds that no page shows yet is left for the next round: a listing
// catches up with a start late. An outcome that is not there yet is a listing behind the engine:
// the execution is swept again.
func (e *Readings) sweepRunning(ctx context.Context, f followed, refs []adapters.Ref, at time.Time) error {
	running := make(map[adapters.Ref]bool, len(refs))
	err := e.pages(func(page string) (string, error) {
		listed, next, err := e.sweeps.engine.Sweep(adapters.WithPriority(ctx, adapters.Ahead), f.target, refs, page)
		for _, l := range listed {
			if in, ok := f.refs[l.Ref]; ok && !l.Status.State.Terminal() {
				running[l.Ref] = true
				e.swept(f.target, l.Ref, l.Status, at, in)
			}
		}
		return next, err
	})
	if err != nil {
		return err
	}
	young := at.Add(-2 * e.sweeps.every)
	for _, r := range refs {
		switch in := f.refs[r]; {
		case running[r]:
			e.seen(f.target, r)
		case in.since.After(young):
		case in.seen:
			e.confirm(ctx, f.target, r, in)
		default:
			e.unfollow(f.target, r)
			e.changed(key(f.target, r))
		}
	}
	return nil
}

// seen records that a listing showed r running.
func (e *Readings) seen(t adapters.Target, r adapters.Ref) {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.followed[t.Name]; ok {
		if in, ok := f.refs[r]; ok {
			in.seen = true
			f.refs[r] = in
		}
	}
}

// pages reads the pages of a listing, up to sweepPages, with read: one page's, which gives the
// next ("" after the last).
func (e *Readings) pages(read func(page string) (next string, err error)) error {
	page := ""
	for range sweepPages {
		next, err := read(page)
		if err != nil {
			return err
		}
		e.sweeps.pages.Add(1)
		if page = next; page == "" {
			break
		}
	}
	return nil
}

// confirm reads, beside the rounds, the outcome of an execution that a listing showed ended, or
// no longer showed running, which tells whoever waits; one the engine no longer has is no longer
// followed. A read the engine or the budget refused for now is made again, after its retry-after
// and a round at least, for as long as the execution is followed: the listing told its end
// already. Rounds leave the execution out until its outcome is read or the read failed.
func (e *Readings) confirm(ctx context.Context, t adapters.Target, r adapters.Ref, in interest) {
	s := e.sweeps
	k := key(t, r)
	s.mu.Lock()
	if s.confirming[k] {
		s.mu.Unlock()
		return
	}
	s.confirming[k] = true
	s.mu.Unlock()
	s.pending.Go(func() {
		defer func() {
			s.mu.Lock()
			delete(s.confirming, k)
			s.mu.Unlock()
		}()
		if in.carried != nil { // its values, the sweeps' cancellation
			carried, cancel := context.WithCancel(in.carried)
			defer context.AfterFunc(ctx, cancel)()
			defer cancel()
			ctx = carried
		}
		for {
			err := e.readOutcome(ctx, t, r)
			switch {
			case err == nil:
				s.confirms.Add(1)
				return
			case errors.Is(err, adapters.ErrNotFound): // gone: its readers are told so
				e.unfollow(t, r)
				return
			case !errors.Is(err, adapters.ErrUnavailable) || !e.following(t, r):
				return
			}
			if adapters.Sleep(ctx, max(adapters.RetryAfter(err), s.every)) != nil {
				return
			}
		}
	})
}

// readOutcome reads an outcome for confirm, at most confirmsAtOnce at a time.
func (e *Readings) readOutcome(ctx context.Context, t adapters.Target, r adapters.Ref) error {
	s := e.sweeps
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err := s.engine.Outcome(ctx, t, r)
	return err
}

// following reports whether r is among the executions swept, and was asked about lately.
func (e *Readings) following(t adapters.Target, r adapters.Ref) bool {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.followed[t.Name]
	if !ok {
		return false
	}
	in, ok := f.refs[r]
	return ok && time.Now().Before(in.until)
}

// stillRunning records that a listing of ends made at did not show r: it was running as of at.
func (e *Readings) stillRunning(t adapters.Target, r adapters.Ref, at time.Time) {
	k := key(t, r)
	if _, ok := e.cache.Get(k); !ok {
		return
	}
	e.cache.Update(k, func(v *entry) {
		if !endKnown(*v) && !v.status.ReadAt.IsZero() {
			v.swept = latest(v.swept, at)
		}
	})
}

// swept records that a listing made at showed r running with st. A reading it had keeps its
// details (a listing is coarser: no questions, no progress) and is now known true as of at; one it
// had not is made from the listing, good for the task's polling interval as a point read is.
func (e *Readings) swept(t adapters.Target, r adapters.Ref, st adapters.Status, at time.Time, in interest) {
	k := key(t, r)
	changed := false
	e.cache.Update(k, func(v *entry) {
		switch {
		case endKnown(*v):
		case v.status.ReadAt.IsZero():
			st.ReadAt = at
			*v = e.reading(st, in.pace, in.paced)
			changed = true
		case v.status.State == adapters.Submitted && st.State != adapters.Submitted:
			v.status.State, v.status.Native, v.status.Message, v.status.Updated = st.State, st.Native, st.Message, st.Updated
			v.swept, changed = at, true
		default:
			v.swept = latest(v.swept, at)
		}
	})
	if changed {
		e.changed(k)
	}
}

// Changes returns a channel that is closed at the next change that the Readings record of the
// execution: a new reading by a point read, a change of state a sweep shows, its end, a cancel or
// an answer asked. Whoever follows a task waits on it rather than polling (adapters.Changes). It
// may also be closed when the execution leaves the cache: waiters read again when woken.
func (e *Readings) Changes(t adapters.Target, r adapters.Ref) <-chan struct{} {
	k := key(t, r)
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	c, ok := e.watchers[k]
	if !ok {
		if e.watchers == nil {
			e.watchers = map[string]chan struct{}{}
		}
		if len(e.watchers) >= 2*max(e.watchersKept, minWatchers) {
			e.pruneWatchers()
		}
		c = make(chan struct{})
		e.watchers[k] = c
	}
	return c
}

// minWatchers is how many watchers are kept before any is pruned.
const minWatchers = 1024

// pruneWatchers wakes and forgets the watchers of executions that the cache no longer holds:
// without a reading, only a read would change them, and a waiter that left does not come back to
// read. Called as the watchers double, it costs each new watcher a constant time.
func (e *Readings) pruneWatchers() {
	for k, c := range e.watchers {
		if _, ok := e.cache.Get(k); !ok {
			close(c)
			delete(e.watchers, k)
		}
	}
	e.watchersKept = len(e.watchers)
}

// changed wakes whoever waits on Changes of k.
func (e *Readings) changed(k string) {
	e.watchMu.Lock()
	c, ok := e.watchers[k]
	delete(e.watchers, k)
	e.watchMu.Unlock()
	if ok {
		close(c)
	}
}

// Close stops the sweeps.
func (e *Readings) Close() {
	if s := e.sweeps; s != nil {
		s.stop()
		<-s.done
	}
}
